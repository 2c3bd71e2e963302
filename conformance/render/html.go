package render

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
)

// htmlStyle is the pages' whole style sheet: a page loads nothing else.
const htmlStyle = `
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 80em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; }
code, .op { font-family: monospace; }
.verdict { font-size: 1.3em; font-weight: bold; }
.verdict.CONFORMANT { color: #17612a; }
.verdict.DEVIATES, .verdict.INTERRUPTED, .verdict.HARNESS { color: #9b1c1c; }
tr.pass td.status { background: #d4f4dc; }
tr.fail td.status { background: #f8c9c9; font-weight: bold; }
tr.na td.status { background: #e4e4e4; }
tr.blocked td.status { background: #fbe3b3; }
tr.notreached td.status { background: #f4f1c7; }
tr.departed { background: #fde8c8; }
tr.noticed { background: #f8c9c9; }
tr.evidence { color: #666; font-style: italic; }
td.mark { font-weight: bold; text-align: center; }
.bar { background: #5b8bd0; height: 0.8em; display: inline-block; }
.never { color: #9b1c1c; }
.legend span { margin-right: 1.5em; padding: 0 0.3em; }
`

// htmlPage is a report as one self-contained page: the rule table coloured
// by status, each counterexample as a timeline of what the model allowed
// against what the driver did (the step where the device departed and the
// step whose check noticed it marked), the coverage features and the time
// phases.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>srqconform: {{.Verdict}} on {{.Device}}</title>
<style>{{.Style}}</style></head><body>
<h1>srqconform report</h1>
<p class="verdict {{.VerdictClass}}" id="verdict">{{.Verdict}}</p>
<ul>{{range .Header}}<li>{{.}}</li>{{end}}</ul>
<h2>Rules</h2>
<table id="rules"><thead><tr><th>status</th><th>rule</th><th>checks agreed</th><th>statement</th><th>counterexamples</th></tr></thead><tbody>
{{range .Rules}}<tr class="{{.Class}}" data-rule="{{.ID}}" data-status="{{.Status}}"><td class="status">{{.Status}}</td><td><code>{{.ID}}</code></td><td class="num">{{.Checks}}</td><td>{{.Statement}}{{if .Reason}} <em>[{{.Reason}}]</em>{{end}}</td><td>{{range .Failures}}<a href="#cx-{{.}}">#{{.}}</a> {{end}}</td></tr>
{{end}}</tbody></table>
{{if .Findings}}<h2>Profile findings</h2><ul id="findings">{{range .Findings}}<li><code>{{.Field}}</code> ({{.Kind}}): {{.Detail}}</li>{{end}}</ul>{{end}}
{{if .Resolved}}<h2>Open choices, as the device resolved them</h2><ul>{{range .Resolved}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Coverage</h2>
{{if .Features}}<table id="coverage"><thead><tr><th>state-space feature</th><th>agreeing steps</th></tr></thead><tbody>
{{range .Features}}<tr data-feature="{{.Name}}"><td>{{.Name}}</td><td class="num{{if not .N}} never{{end}}">{{if .N}}{{.N}}{{else}}never{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p>Not recorded: the report comes from a version without it.</p>{{end}}
{{range .Counterexamples}}<h2 id="cx-{{.N}}">Counterexample #{{.N}}: rule {{.Rule}}</h2>
<p>{{.Source}}, {{.Extent}}</p>
{{if .Statement}}<p>{{.Statement}}<br>source: {{.RuleSource}}</p>{{end}}
{{if .Diagnosis}}<p class="diagnosis">{{.Diagnosis}}</p>{{end}}
{{if .AlsoIn}}<p>The same rule also failed in: {{range .AlsoIn}}{{.}}; {{end}}</p>{{end}}
<p class="legend"><span style="background:#fde8c8">» the device departed here (under the diagnosis)</span><span style="background:#f8c9c9">✗ a check noticed it here</span><span>+ evidence, not checked</span></p>
<table class="timeline"><thead><tr><th></th><th>step</th><th>operation</th><th>model allowed</th><th>driver did</th></tr></thead><tbody>
{{range .Steps}}<tr class="{{.Class}}" data-step="{{.N}}"><td class="mark">{{.Mark}}</td><td class="num">{{.N}}</td><td class="op">{{.Op}}</td><td>{{.Allowed}}</td><td>{{.Got}}{{if .NoticedBy}}<br><em>noticed by the {{.NoticedBy}} check</em>{{end}}</td></tr>
{{end}}</tbody></table>
{{if .Err}}<p>harness error: {{.Err}}</p>{{end}}
{{end}}
{{if .Time}}<h2>Time</h2><p>{{.Time.Summary}}</p>
{{range .Time.Tables}}<table class="time"><thead><tr><th>{{.Kind}}</th><th>calls</th><th>total</th><th>share</th><th></th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Name}}</td><td class="num">{{.Calls}}</td><td class="num">{{.Total}}</td><td class="num">{{.Share}}</td><td><span class="bar" style="width:{{.Width}}em"></span></td></tr>
{{end}}</tbody></table>{{end}}{{end}}
</body></html>
`))

type htmlRule struct {
	Class                     string
	ID                        model.RuleID
	Status, Statement, Reason string
	Checks                    int
	Failures                  []int
}

type htmlStep struct {
	Class, Mark, Op, Allowed, Got string
	NoticedBy                     model.RuleID
	N                             int
}

type htmlCounterexample struct {
	N                                                     int
	Rule                                                  model.RuleID
	Source, Extent, Statement, RuleSource, Diagnosis, Err string
	AlsoIn                                                []string
	Steps                                                 []htmlStep
}

type htmlTimeRow struct {
	Name, Calls, Total, Share string
	Width                     float64 // em, the share of the elapsed time out of 20
}

type htmlTime struct {
	Summary string
	Tables  []struct {
		Kind string
		Rows []htmlTimeRow
	}
}

// statusClass is a rule status as a CSS class.
func statusClass(s conformance.Status) string {
	switch s {
	case conformance.NotApplicable:
		return "na"
	case conformance.NotReached:
		return "notreached"
	}
	return string(s)
}

// HTML writes the report as one self-contained HTML page (htmlPage).
func HTML(w io.Writer, rep *conformance.Report) error {
	v := verdict(rep)
	data := struct {
		Style                         template.CSS
		Verdict, VerdictClass, Device string
		Header                        []string
		Rules                         []htmlRule
		Findings                      []struct{ Field, Kind, Detail string }
		Resolved                      []string
		Features                      []struct {
			Name string
			N    int
		}
		Counterexamples []htmlCounterexample
		Time            *htmlTime
	}{Style: template.CSS(htmlStyle), Verdict: v, VerdictClass: strings.Fields(strings.TrimRight(v, ","))[0], Device: rep.Device.Name, Header: header(rep)}
	data.VerdictClass = strings.TrimRight(data.VerdictClass, ",")
	for _, r := range rep.Rules {
		hr := htmlRule{Class: statusClass(r.Status), ID: r.Rule.ID, Status: string(r.Status), Statement: r.Rule.Statement, Reason: r.Reason, Checks: r.Checks}
		for _, i := range r.Failures {
			hr.Failures = append(hr.Failures, i+1)
		}
		data.Rules = append(data.Rules, hr)
	}
	for _, f := range rep.Findings {
		kind := "not shown"
		if f.Untestable {
			kind = "untestable"
		}
		data.Findings = append(data.Findings, struct{ Field, Kind, Detail string }{f.Field, kind, f.Detail})
	}
	data.Resolved = resolvedLines(rep)
	if rep.Features != nil {
		for _, f := range conformance.FeatureNames {
			data.Features = append(data.Features, struct {
				Name string
				N    int
			}{f, rep.Features[f]})
		}
	}
	for i, f := range rep.Failures {
		data.Counterexamples = append(data.Counterexamples, htmlFailure(rep, i, f))
	}
	data.Time = htmlTimes(rep)
	return htmlPage.Execute(w, data)
}

// htmlFailure is counterexample i as a timeline.
func htmlFailure(rep *conformance.Report, i int, f conformance.Failure) htmlCounterexample {
	cx := htmlCounterexample{N: i + 1, Rule: f.Rule, Source: f.Source, Extent: f.Trace.Extent(), AlsoIn: otherRuns(f.AlsoIn), Err: f.Trace.Err}
	if r, ok := ruleOf(rep, f.Rule); ok {
		cx.Statement, cx.RuleSource = r.Rule.Statement, r.Rule.Source
	}
	d := f.Trace.Diagnosis
	if d != nil {
		switch {
		case len(d.Rules) > 0:
			cx.Diagnosis = fmt.Sprintf("diagnosis: %s broken; departed at step %d, visible at step %d (noticed by the %s check)",
				strings.Join(model.RuleNames(d.Rules), " and "), d.DepartedAt, d.VisibleAt, d.NoticedBy)
			if alt := conformance.Alternatives(*d); alt != "" {
				cx.Diagnosis += ". " + alt
			}
		case d.Unexplained:
			cx.Diagnosis = fmt.Sprintf("diagnosis: no rule, nor pair of rules, explains this trace; the %s check noticed it at step %d", d.NoticedBy, d.VisibleAt)
		}
		if d.Cut {
			cx.Diagnosis += ". " + conformance.CutNote
		}
	}
	if n := conformance.FollowsNote(f); n != "" {
		cx.Diagnosis += ". " + n
	}
	for _, s := range f.Trace.Steps {
		hs := htmlStep{N: s.N, Op: s.OpText, Got: s.Got, Allowed: "agreed"}
		switch {
		case s.Rule != 0:
			hs.Class, hs.Mark, hs.Allowed, hs.NoticedBy = "noticed", "✗", s.Allowed, s.Rule
			if d != nil && d.DepartedAt == s.N {
				hs.Mark = "» ✗"
			}
		case s.Evidence:
			hs.Class, hs.Mark, hs.Allowed = "evidence", "+", "(not checked)"
		case d != nil && d.DepartedAt == s.N:
			hs.Class, hs.Mark, hs.Allowed = "departed", "»", "agreed then; the diagnosis places the departure here"
		}
		cx.Steps = append(cx.Steps, hs)
	}
	return cx
}

// htmlTimes is where the time went, by phase and by stage; nil when the
// report has no timing.
func htmlTimes(rep *conformance.Report) *htmlTime {
	if len(rep.Phases) == 0 && len(rep.Stages) == 0 {
		return nil
	}
	t := &htmlTime{Summary: fmt.Sprintf("%v elapsed, %d steps, %s", rep.Elapsed.Round(time.Millisecond), rep.StepsRun, stepsPerSecond(rep))}
	row := func(name, calls string, total time.Duration) htmlTimeRow {
		w := 0.0
		if rep.Elapsed > 0 {
			w = 20 * float64(total) / float64(rep.Elapsed)
		}
		return htmlTimeRow{Name: name, Calls: calls, Total: dur(total), Share: share(total, rep.Elapsed), Width: w}
	}
	for _, k := range []struct {
		kind string
		ps   []conformance.Phase
	}{{"phase", rep.Phases}, {"stage", rep.Stages}} {
		var rows []htmlTimeRow
		var sum time.Duration
		for _, p := range k.ps {
			rows = append(rows, row(p.Name, fmt.Sprint(p.Calls), p.Total))
			sum += p.Total
		}
		if k.kind == "phase" && len(k.ps) > 0 {
			rows = append(rows, row("(harness)", "", max(rep.Elapsed-sum, 0)))
		}
		t.Tables = append(t.Tables, struct {
			Kind string
			Rows []htmlTimeRow
		}{k.kind, rows})
	}
	return t
}
