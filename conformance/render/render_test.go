package render

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/model"
)

func partialReport() *conformance.Report {
	r, _ := model.RuleByID("FETCH-FIFO")
	return &conformance.Report{Driver: "emu", Profile: "documented", Cases: 100, CasesRun: 7,
		Rules: []conformance.RuleResult{{Rule: r, Status: conformance.Pass}}}
}

func render(t *testing.T, format string, rep *conformance.Report) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, Write(&b, format, rep))
	return b.String()
}

func TestAnInterruptedReportSaysSo(t *testing.T) {
	rep := partialReport()
	rep.Interrupted = true
	text := render(t, "text", rep)
	assert.Contains(t, text, "verdict: INTERRUPTED, CONFORMANT so far (")
	assert.Contains(t, text, "(7 of 100 random cases ran)")
	md := render(t, "markdown", rep)
	assert.True(t, strings.HasPrefix(md, "# srqconform report: INTERRUPTED, CONFORMANT so far on "), md)
	var v struct {
		Interrupted bool `json:"interrupted"`
	}
	require.NoError(t, json.Unmarshal([]byte(render(t, "json", rep)), &v))
	assert.True(t, v.Interrupted)
	assert.Contains(t, render(t, "junit", rep), `message="interrupted: the run was stopped before it finished"`)
}

func TestAHarnessErrorIsInEveryFormat(t *testing.T) {
	rep := partialReport()
	rep.Error = "scenario \"x\": CreateSRQ: device lost"
	text := render(t, "text", rep)
	assert.Contains(t, text, "verdict: HARNESS ERROR, CONFORMANT so far (")
	assert.Contains(t, text, "harness error: scenario \"x\": CreateSRQ: device lost\n")
	md := render(t, "markdown", rep)
	assert.True(t, strings.HasPrefix(md, "# srqconform report: HARNESS ERROR, CONFORMANT so far on "), md)
	assert.Contains(t, md, "- harness error: scenario")
	var v struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(render(t, "json", rep)), &v))
	assert.Equal(t, rep.Error, v.Error)
	var j struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(render(t, "junit", rep)), &j))
	assert.Equal(t, 1, j.Failures)
	last := j.Suites[0].Cases[len(j.Suites[0].Cases)-1]
	assert.Equal(t, "run", last.Name)
	require.NotNil(t, last.Failure)
	assert.Equal(t, "harness error: "+rep.Error, last.Failure.Message)
}

func TestACompleteReportHasAPlainVerdict(t *testing.T) {
	text := render(t, "text", partialReport())
	assert.Contains(t, text, "verdict: CONFORMANT (")
	assert.NotContains(t, text, "interrupted")
	assert.NotContains(t, text, "harness error")
	assert.NotContains(t, render(t, "junit", partialReport()), "srqconform.run")
}

func TestTheTimeIsInEveryFormat(t *testing.T) {
	rep := partialReport()
	rep.StepsRun, rep.Elapsed = 100, 2*time.Second
	rep.Phases = []conformance.Phase{{Name: conformance.PhaseDeliver, Total: 500 * time.Millisecond, Calls: 40},
		{Name: conformance.PhasePollSettle, Total: time.Second, Calls: 50}}
	rep.Stages = []conformance.Phase{{Name: conformance.StageRandom, Total: 2 * time.Second, Calls: 7}}
	text := render(t, "text", rep)
	assert.Contains(t, text, "TIME (2s elapsed, 100 steps, 50.0 steps/s)")
	assert.Regexp(t, `poll_settle +50 +1s +50.0% +20ms`, text)
	assert.Regexp(t, `\(harness\) +500ms +25.0%`, text)
	assert.Regexp(t, `random +7 +2s +100.0%`, text)
	md := render(t, "markdown", rep)
	assert.Contains(t, md, "## Time\n\n2s elapsed, 100 steps, 50.0 steps/s.")
	assert.Contains(t, md, "| deliver | 40 | 500ms | 25.0% | 12.5ms |")
	var v struct {
		Phases []struct {
			Name  string `json:"name"`
			Total int64  `json:"total_ns"`
			Calls int    `json:"calls"`
		} `json:"phases"`
	}
	require.NoError(t, json.Unmarshal([]byte(render(t, "json", rep)), &v))
	require.Len(t, v.Phases, 2)
	assert.Equal(t, int64(time.Second), v.Phases[1].Total)
	assert.Equal(t, 50, v.Phases[1].Calls)
	var j struct {
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Out string `xml:"system-out"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal([]byte(render(t, "junit", rep)), &j))
	props := map[string]string{}
	for _, p := range j.Suites[0].Props {
		props[p.Name] = p.Value
	}
	assert.Equal(t, "1000000000", props["phase.poll_settle.total_ns"])
	assert.Equal(t, "7", props["stage.random.calls"])
	assert.Contains(t, j.Suites[0].Out, "TIME (2s elapsed")
}

func TestAReportWithoutTimingHasNoFooter(t *testing.T) {
	assert.NotContains(t, render(t, "text", partialReport()), "TIME (")
	assert.NotContains(t, render(t, "markdown", partialReport()), "## Time")
	assert.NotContains(t, render(t, "junit", partialReport()), "properties")
}

// TestMatrixAlignsRulesByID gives the matrix reports whose rules come in
// different orders, one lacking a rule: each status lands in its rule's
// row (before, rows followed the first report's order and a report whose
// order differed showed "-" for rules it held).
func TestMatrixAlignsRulesByID(t *testing.T) {
	result := func(id string, st conformance.Status) conformance.RuleResult {
		r, ok := model.RuleByID(id)
		require.True(t, ok, id)
		return conformance.RuleResult{Rule: r, Status: st}
	}
	a := &conformance.Report{Profile: "documented", Rules: []conformance.RuleResult{
		result("POST-ORDER", conformance.Pass), result("FETCH-FIFO", conformance.Pass)}}
	b := &conformance.Report{Profile: "documented", Rules: []conformance.RuleResult{
		result("FETCH-FIFO", conformance.Fail), result("QUERY-ATTR", conformance.Pass), result("POST-ORDER", conformance.Pass)}}
	var out strings.Builder
	require.NoError(t, Matrix(&out, []*conformance.Report{a, b}))
	s := out.String()
	assert.Contains(t, s, "| POST-ORDER | pass | pass |\n")
	assert.Contains(t, s, "| FETCH-FIFO | pass | fail |\n")
	assert.Contains(t, s, "| QUERY-ATTR | - | pass |\n")
	assert.Contains(t, s, "Rules whose status differs between the columns that hold them: FETCH-FIFO.\n")
	assert.Contains(t, s, "do not hold (`-`: older reports, or runs limited to some rules): QUERY-ATTR.\n")
	assert.Less(t, strings.Index(s, "| POST-ORDER |"), strings.Index(s, "| QUERY-ATTR |"), "rows in the catalogue's order")
}

func TestARebuiltDriverNamesItsPatches(t *testing.T) {
	rep := partialReport()
	rep.Device.Patches = "fix.patch sha256:3ceaf79c86d4d0ab"
	for _, format := range []string{"text", "markdown", "html", "ktap"} {
		assert.Contains(t, render(t, format, rep), "driver rebuilt with patches: fix.patch sha256:3ceaf79c86d4d0ab", format)
	}
	var v struct {
		Device struct{ Patches string }
	}
	require.NoError(t, json.Unmarshal([]byte(render(t, "json", rep)), &v))
	assert.Equal(t, rep.Device.Patches, v.Device.Patches)
	assert.NotContains(t, render(t, "text", partialReport()), "rebuilt", "the kernel's own driver names no patches")
}
