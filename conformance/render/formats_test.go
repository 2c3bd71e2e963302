package render

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// failingReport is a report with a rule of every status, one
// counterexample whose departure comes a step before the check that
// noticed it, a profile finding of each kind, and timing.
func failingReport(t *testing.T) *conformance.Report {
	t.Helper()
	rule := func(id string, s conformance.Status, reason string, failures ...int) conformance.RuleResult {
		r, ok := model.RuleByID(id)
		require.True(t, ok, "model.RuleByID(%q)", id)
		return conformance.RuleResult{Rule: r, Status: s, Reason: reason, Checks: 3, Failures: failures}
	}
	return &conformance.Report{Driver: "emu", Device: drivers.Info{Name: "emu0", Provider: "emu"}, Profile: "documented", Seed: 3, Cases: 10, CasesRun: 10, Steps: 40,
		Rules: []conformance.RuleResult{
			rule("FETCH-FIFO", conformance.Pass, ""),
			rule("POST-BADWR", conformance.Fail, "", 0),
			rule("POST-ATOMIC", conformance.NotApplicable, "only concurrent calls can break it"),
			rule("SRQ-ERR-EVENT", conformance.NotReached, ""),
			rule("LIMIT-FIRE", conformance.Blocked, "a failure no rule explains stopped its scenario"),
		},
		Failures: []conformance.Failure{{Rule: model.RulePostBadWR, Rules: []model.RuleID{model.RulePostBadWR}, Source: "scenario: a list longer than the free slots",
			Trace: conformance.Trace{
				Steps: []conformance.TraceStep{
					{N: 1, OpText: "create_srq max_wr=4 max_sge=1 srq_limit=0", Got: "0, max_wr=4"},
					{N: 2, OpText: "post_srq_recv [wr1, wr2]", Got: "0"},
					{N: 3, OpText: "post_srq_recv [wr3, wr4, wr5]", Allowed: "ENOMEM with bad_wr=2 (wr5)", Got: "ENOMEM, bad_wr=1 (wr4)", Rule: model.RulePostFull},
					{N: 4, OpText: "poll max=0", Got: "completions [], events []", Evidence: true},
				},
				Diagnosis: &model.Diagnosis{Rules: []model.RuleID{model.RulePostBadWR}, DepartedAt: 2, VisibleAt: 3, NoticedBy: model.RulePostFull},
			}}},
		Findings: []conformance.Finding{{Field: "SlotFree", Detail: "no run told the values apart"}, {Field: "NegativeSGE", Detail: "never posted", Untestable: true}},
		Features: map[string]int{plainFeatures(t)[0]: 7},
		Resolved: map[string][]string{"SlotFree": {"at fetch"}, "CheckOrder": {"full queue checked first"}},
		StepsRun: 120, Elapsed: 2 * time.Second,
		Phases: []conformance.Phase{{Name: "post", Total: 500 * time.Millisecond, Calls: 40}},
		Stages: []conformance.Phase{{Name: "scenarios", Total: 2 * time.Second, Calls: 1}},
	}
}

// plainFeatures returns the feature names that a DOM serialises as they
// are (no character HTML escapes).
func plainFeatures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range conformance.FeatureNames {
		if !strings.ContainsAny(f, "<>&\"'") {
			out = append(out, f)
		}
	}
	require.GreaterOrEqual(t, len(out), 2, "conformance.FeatureNames without characters HTML escapes")
	return out
}

// ktapTest is one result line of a KTAP document.
type ktapTest struct {
	ok         bool
	n          int
	name, skip string
	diag       []string // the diagnostic lines just before it
}

var (
	ktapPlan   = regexp.MustCompile(`^1\.\.(\d+)$`)
	ktapResult = regexp.MustCompile(`^(ok|not ok) (\d+) ([^#]*[^# ])(?: # (SKIP|TODO)(?: (.*))?)?$`)
)

// parseKTAP parses a KTAP version 1 document with no subtests
// (Documentation/dev-tools/ktap.rst): the version line, the plan, result
// lines numbered from 1 and diagnostic lines starting "#". Anything else
// is an error.
func parseKTAP(doc string) ([]ktapTest, error) {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	if len(lines) < 2 || lines[0] != "KTAP version 1" {
		return nil, fmt.Errorf("first line %q: want \"KTAP version 1\"", lines[0])
	}
	m := ktapPlan.FindStringSubmatch(lines[1])
	if m == nil {
		return nil, fmt.Errorf("second line %q: want the plan 1..N", lines[1])
	}
	planned, _ := strconv.Atoi(m[1])
	var tests []ktapTest
	var diag []string
	for i, l := range lines[2:] {
		if strings.HasPrefix(l, "#") {
			diag = append(diag, l)
			continue
		}
		r := ktapResult.FindStringSubmatch(l)
		if r == nil {
			return nil, fmt.Errorf("line %d %q: neither a result nor a diagnostic line", i+3, l)
		}
		n, _ := strconv.Atoi(r[2])
		if n != len(tests)+1 {
			return nil, fmt.Errorf("line %d: test %d, want %d", i+3, n, len(tests)+1)
		}
		if r[4] == "TODO" {
			return nil, fmt.Errorf("line %d: a TODO directive, which srqconform never writes", i+3)
		}
		tests = append(tests, ktapTest{ok: r[1] == "ok", n: n, name: r[3], skip: r[5], diag: diag})
		if r[4] == "SKIP" && r[5] == "" {
			tests[len(tests)-1].skip = "(no reason)"
		}
		diag = nil
	}
	if len(tests) != planned {
		return nil, fmt.Errorf("%d results, the plan says %d", len(tests), planned)
	}
	return tests, nil
}

func TestKTAPIsOneTestPerRuleThenPerFinding(t *testing.T) {
	rep := failingReport(t)
	tests, err := parseKTAP(render(t, "ktap", rep))
	require.NoError(t, err)
	require.Len(t, tests, len(rep.Rules)+len(rep.Findings))
	byName := map[string]ktapTest{}
	for _, tc := range tests {
		byName[tc.name] = tc
	}
	assert.True(t, byName["FETCH-FIFO"].ok)
	assert.Empty(t, byName["FETCH-FIFO"].skip)
	bad := byName["POST-BADWR"]
	assert.False(t, bad.ok, "a failing rule is not ok")
	assert.Contains(t, strings.Join(bad.diag, "\n"), "# counterexample #1: scenario: a list longer than the free slots")
	assert.Contains(t, strings.Join(bad.diag, "\n"), "model allows: ENOMEM with bad_wr=2 (wr5)")
	for id, why := range map[string]string{"POST-ATOMIC": "n/a: only concurrent calls can break it", "SRQ-ERR-EVENT": "not reached", "LIMIT-FIRE": "blocked: a failure no rule explains"} {
		assert.True(t, byName[id].ok, id)
		assert.Contains(t, byName[id].skip, why, id)
	}
	assert.False(t, byName["profile-SlotFree"].ok, "a profile finding fails the run")
	assert.True(t, byName["profile-NegativeSGE"].ok)
	assert.Contains(t, byName["profile-NegativeSGE"].skip, "untestable")
}

func TestKTAPMarksAnInterruptedRun(t *testing.T) {
	rep := partialReport()
	rep.Interrupted = true
	tests, err := parseKTAP(render(t, "ktap", rep))
	require.NoError(t, err)
	require.Len(t, tests, 2)
	assert.Equal(t, "run", tests[1].name)
	assert.False(t, tests[1].ok)
	assert.Contains(t, tests[1].diag, "# interrupted: the run was stopped before it finished")
}

func TestParseKTAPRefusesWhatIsNotKTAP(t *testing.T) {
	for _, doc := range []string{
		"TAP version 13\n1..1\nok 1 a\n",
		"KTAP version 1\n1..2\nok 1 a\n",
		"KTAP version 1\n1..1\nok 2 a\n",
		"KTAP version 1\n1..1\nfine 1 a\n",
	} {
		_, err := parseKTAP(doc)
		assert.Error(t, err, "%q", doc)
	}
}

// chromium returns the path of a Chromium binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserDOM has the browser load page from a file and returns the DOM it
// built.
func browserDOM(t *testing.T, browser, page string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "page.html")
	require.NoError(t, os.WriteFile(file, []byte(page), 0o644))
	// A bound for a browser that hangs, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+file)
	out, err := cmd.Output()
	require.NoError(t, err, "%s --dump-dom %s", browser, file)
	return string(out)
}

// TestHTMLRendersInABrowser renders a page in headless Chromium and checks
// the DOM it built: a row per rule, the failing one marked, the
// counterexample's departure and noticing steps marked, the coverage and
// the time. Skipped where Chromium is not installed (.ci/run installs it).
func TestHTMLRendersInABrowser(t *testing.T) {
	browser := chromium()
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	rep := failingReport(t)
	dom := browserDOM(t, browser, render(t, "html", rep))
	rows := regexp.MustCompile(`<tr class="([a-z]+)" data-rule="([A-Z0-9-]+)" data-status="([a-z/ ]+)">`).FindAllStringSubmatch(dom, -1)
	require.Len(t, rows, len(rep.Rules), "rule rows in the DOM")
	status := map[string][2]string{}
	for _, r := range rows {
		status[r[2]] = [2]string{r[1], r[3]}
	}
	assert.Equal(t, [2]string{"fail", "fail"}, status["POST-BADWR"], "the failing rule's row")
	assert.Equal(t, [2]string{"pass", "pass"}, status["FETCH-FIFO"])
	assert.Equal(t, [2]string{"na", "n/a"}, status["POST-ATOMIC"])
	assert.Regexp(t, `<tr class="departed" data-step="2">`, dom, "the step where the device departed")
	assert.Regexp(t, `<tr class="noticed" data-step="3">`, dom, "the step whose check noticed it")
	assert.Regexp(t, `<tr class="evidence" data-step="4">`, dom)
	assert.Contains(t, dom, `<h2 id="cx-1">Counterexample #1: rule POST-BADWR</h2>`)
	assert.Contains(t, dom, `<a href="#cx-1">#1</a>`)
	plain := plainFeatures(t)
	assert.Regexp(t, `data-feature="`+regexp.QuoteMeta(plain[0])+`"><td>[^<]*</td><td class="num">7</td>`, dom)
	assert.Regexp(t, `data-feature="`+regexp.QuoteMeta(plain[1])+`"><td>[^<]*</td><td class="num never">never</td>`, dom)
	assert.Contains(t, dom, "<td>post</td>")
	assert.Contains(t, dom, "<li>CheckOrder: full queue checked first</li><li>SlotFree: at fetch</li>", "the open choices, in name order")
	assert.Contains(t, dom, `class="verdict DEVIATES"`)
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, dom, "the page loads nothing from elsewhere")
}

// TestMatrixHTMLRendersInABrowser renders the matrix of two reports in
// headless Chromium and checks the provider by kernel grid and the rule
// table. Skipped where Chromium is not installed.
func TestMatrixHTMLRendersInABrowser(t *testing.T) {
	browser := chromium()
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	good := partialReport()
	good.Device = drivers.Info{Name: "rxe0", Provider: "rxe", Kernel: "6.1.0"}
	good.Profile = "rxe-6.1"
	bad := failingReport(t)
	bad.Device = drivers.Info{Name: "siw0", Provider: "siw", Kernel: "6.12.0"}
	var b strings.Builder
	require.NoError(t, MatrixHTML(&b, []*conformance.Report{good, bad}))
	dom := browserDOM(t, browser, b.String())
	assert.Regexp(t, `<tr data-provider="rxe"><th>rxe</th><td data-kernel="6.1.0"><div class="pass" data-verdict="CONFORMANT"><b>rxe-6.1</b>`, dom)
	assert.Regexp(t, `<td data-kernel="6.12.0"><span class="na">no report</span></td></tr>\s*<tr data-provider="siw">`, dom, "rxe has no 6.12 report")
	assert.Regexp(t, `<td data-kernel="6.12.0"><div class="fail" data-verdict="DEVIATES"><b>documented</b>: DEVIATES<br>failing: POST-BADWR</div>`, dom)
	assert.Regexp(t, `<tr data-rule="FETCH-FIFO"><td><code>FETCH-FIFO</code></td><td class="status pass" data-status="pass">pass</td><td class="status pass" data-status="pass">pass</td></tr>`, dom)
	assert.Regexp(t, `<tr data-rule="POST-BADWR"><td><code>POST-BADWR</code></td><td class="status absent" data-status="-">-</td><td class="status fail" data-status="fail">fail</td></tr>`, dom)
	assert.Contains(t, dom, `<p id="differ">Every rule has the same status in every column that holds it.</p>`)
}

// TestACutDiagnosisSaysItIsInconclusive: a diagnosis its deadline cut
// short says so in the text, Markdown and HTML reports, and in JSON.
func TestACutDiagnosisSaysItIsInconclusive(t *testing.T) {
	rep := failingReport(t)
	for _, format := range []string{"text", "markdown", "html", "json"} {
		rep.Failures[0].Trace.Diagnosis.Cut = false
		var plain strings.Builder
		require.NoError(t, Write(&plain, format, rep))
		rep.Failures[0].Trace.Diagnosis.Cut = true
		var cut strings.Builder
		require.NoError(t, Write(&cut, format, rep))
		want := conformance.CutNote
		if format == "json" {
			want = `"cut": true`
		}
		assert.NotContains(t, plain.String(), want, format)
		assert.Contains(t, cut.String(), want, format)
	}
}

// TestAFailureThatFollowsSaysSoInEveryFormat: a counterexample that
// follows from another rule's departure says so in every format for
// people and in JSON, and the rule whose check noticed it is not a
// failure in JUnit or KTAP (skipped, with the reason).
func TestAFailureThatFollowsSaysSoInEveryFormat(t *testing.T) {
	rep := failingReport(t)
	follows, ok := model.RuleByID("RECV-COMPLETION")
	require.True(t, ok)
	later := rep.Failures[0]
	later.Rule, later.Rules, later.Follows = model.RuleRecvCompletion, nil, model.RulePostBadWR
	rep.Failures = append(rep.Failures, later)
	rep.Rules[1].Failures = []int{0, 1}
	rep.Rules = append(rep.Rules, conformance.RuleResult{Rule: follows, Status: conformance.Follows, Reason: "its check failed only after a departure from POST-BADWR", Checks: 3, Failures: []int{1}})
	for _, format := range []string{"text", "markdown", "html", "json"} {
		var b strings.Builder
		require.NoError(t, Write(&b, format, rep))
		want := "follows from POST-BADWR"
		switch format {
		case "markdown":
			want = "Follows from POST-BADWR"
		case "json":
			want = `"follows": "POST-BADWR"`
		}
		assert.Contains(t, b.String(), want, format)
	}
	var junit strings.Builder
	require.NoError(t, Write(&junit, "junit", rep))
	assert.Contains(t, junit.String(), `<skipped message="its check failed only after a departure from POST-BADWR">`)
	var ktap strings.Builder
	require.NoError(t, Write(&ktap, "ktap", rep))
	tests, err := parseKTAP(ktap.String())
	require.NoError(t, err)
	for _, tc := range tests {
		if tc.name == "RECV-COMPLETION" {
			assert.True(t, tc.ok, "a rule that follows is not a failing test")
		}
	}
}
