package faulty2

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/drivescript"
	"github.com/srqconform/srqconform/model"
)

// every returns the bugs of every batch: All, Third, Fourth, Fifth, then
// Sixth.
func every() []Bug {
	return append(append(append(append(All(), Third()...), Fourth()...), Fifth()...), Sixth()...)
}

// TestEveryWitnessShowsItsBug wants each bug's witness transcript, of every
// batch, to differ from the plain emulator's.
func TestEveryWitnessShowsItsBug(t *testing.T) {
	for _, b := range every() {
		at, plain, buggy := Differs(b, b.Witness)
		if at < 0 {
			t.Errorf("bug %s: witness transcript equals the emulator's, want a difference:\n%s", b.Name, strings.Join(plain, "\n"))
			continue
		}
		t.Logf("bug %s: line %d: emulator %q, bug %q", b.Name, at, line(plain, at), line(buggy, at))
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// TestSubtleBugsQuietOnTrivialRun wants every bug marked subtle to agree
// with the emulator on the trivial run, which itself must have done
// something: created, delivered and completed.
func TestSubtleBugsQuietOnTrivialRun(t *testing.T) {
	plain := Transcript(emu.New(), Trivial)
	joined := strings.Join(plain, "\n")
	if !strings.Contains(joined, "WRID:1") || !strings.Contains(joined, "WRID:2") || strings.Contains(joined, "no SRQ") {
		t.Fatalf("the trivial run on the emulator completed nothing, want WRs 1 and 2 completed:\n%s", joined)
	}
	subtle := 0
	for _, b := range every() {
		if !b.Subtle {
			continue
		}
		subtle++
		if at, _, buggy := Differs(b, Trivial); at >= 0 {
			t.Errorf("bug %s is marked subtle but shows on the trivial run at line %d: emulator %q, bug %q", b.Name, at, line(plain, at), line(buggy, at))
		}
	}
	if subtle == 0 {
		t.Error("no bug is marked subtle")
	}
}

// TestWrapperWithoutBugIsTheEmulator wants the wrapper with no hook to
// give the emulator's transcript on every witness, the trivial run and
// random scripts, so that a difference is the bug's and not the wrapper's.
func TestWrapperWithoutBugIsTheEmulator(t *testing.T) {
	none := Bug{Name: "none"}
	scripts := []func(*Script){Trivial}
	for _, b := range every() {
		scripts = append(scripts, b.Witness)
	}
	for i, sc := range scripts {
		if at, plain, wrapped := Differs(none, sc); at >= 0 {
			t.Errorf("script %d: the hookless wrapper differs from the emulator at line %d: %q, want %q", i, at, line(wrapped, at), line(plain, at))
		}
	}
	for seed := uint64(1); seed <= 40; seed++ {
		plain := drivescript.Transcript(context.Background(), emu.New(), seed, 60)
		wrapped := drivescript.Transcript(context.Background(), none.Driver(), seed, 60)
		if at := drivescript.FirstDifference(plain, wrapped); at >= 0 {
			t.Errorf("random script %d: the hookless wrapper differs from the emulator at line %d: %q, want %q", seed, at, line(wrapped, at), line(plain, at))
		}
	}
}

// TestLabelsAndSpread wants at least 40 bugs with unique names, each
// labelled with a rule of the catalogue, described and witnessed, over at
// least 15 rules.
func TestLabelsAndSpread(t *testing.T) {
	bugs := All()
	names := map[string]bool{}
	rules := map[string]int{}
	for _, b := range bugs {
		if names[b.Name] {
			t.Errorf("bug name %q is used twice", b.Name)
		}
		names[b.Name] = true
		if _, ok := model.RuleByID(b.Rule); !ok {
			t.Errorf("bug %s: label %q is not a rule of model.Rules()", b.Name, b.Rule)
		}
		if b.Description == "" || b.Witness == nil || b.hooks == nil && b.info == nil {
			t.Errorf("bug %s: description %q, witness set %v, hooks set %v; want all three", b.Name, b.Description, b.Witness != nil, b.hooks != nil)
		}
		rules[b.Rule]++
	}
	if len(bugs) < 40 || len(rules) < 15 {
		t.Errorf("%d bugs over %d rules, want at least 40 over at least 15", len(bugs), len(rules))
	}
}

// TestSelectAndByName wants Select to filter by name and ByName to find a
// bug and refuse an unknown name.
func TestSelectAndByName(t *testing.T) {
	got := Select(regexp.MustCompile("^limit-"))
	if len(got) == 0 {
		t.Fatal("Select(^limit-) found nothing, want the limit bugs")
	}
	for _, b := range got {
		if !strings.HasPrefix(b.Name, "limit-") {
			t.Errorf("Select(^limit-) returned %s", b.Name)
		}
	}
	b, err := ByName("ring-wrap-loses-slot")
	if err != nil || b.Rule != "POST-FULL" {
		t.Errorf("ByName(ring-wrap-loses-slot) = %s %s, %v; want the POST-FULL bug", b.Name, b.Rule, err)
	}
	if _, err := ByName("no-such-bug"); err == nil {
		t.Error("ByName(no-such-bug) returned no error")
	}
	if d := b.Driver(); d.Name() != "faulty2:ring-wrap-loses-slot" {
		t.Errorf("Driver().Name() = %q, want faulty2:ring-wrap-loses-slot", d.Name())
	}
}

// TestThirdLabelsAndNames wants at least 30 third-batch bugs, each
// labelled with a rule of the catalogue, described and witnessed, at most
// three a rule, over at least 25 rules, with names unique across All and
// Third; ByName finds them, and All holds none of them.
func TestThirdLabelsAndNames(t *testing.T) {
	checkBatch(t, "third", Third(), All(), 3, 25)
}

// TestFourthLabelsAndNames wants the same of the fourth batch, at most two
// bugs a rule over at least 30 rules, with names unique across All, Third
// and Fourth.
func TestFourthLabelsAndNames(t *testing.T) {
	checkBatch(t, "fourth", Fourth(), append(All(), Third()...), 2, 30)
}

// TestFifthLabelsAndNames wants the same of the fifth batch, at most two
// bugs a rule over at least 30 rules, with names unique across All, Third,
// Fourth and Fifth.
func TestFifthLabelsAndNames(t *testing.T) {
	checkBatch(t, "fifth", Fifth(), append(append(All(), Third()...), Fourth()...), 2, 30)
}

// TestSixthLabelsAndNames wants the same of the sixth batch, at most two
// bugs a rule over at least 30 rules, with names unique across All, Third,
// Fourth, Fifth and Sixth.
func TestSixthLabelsAndNames(t *testing.T) {
	checkBatch(t, "sixth", Sixth(), append(append(append(All(), Third()...), Fourth()...), Fifth()...), 2, 30)
}

// checkBatch wants batch to hold at least 30 bugs, each labelled with a
// rule of the catalogue, described and witnessed, at most perRule a rule,
// over at least minRules rules, sorted by rule and name, with names unique
// across earlier and batch; ByName finds them.
func checkBatch(t *testing.T, name string, batch, earlier []Bug, perRule, minRules int) {
	t.Helper()
	names := map[string]bool{}
	for _, b := range earlier {
		if names[b.Name] {
			t.Errorf("bug name %q is used twice before the %s batch", b.Name, name)
		}
		names[b.Name] = true
	}
	rules := map[string]int{}
	for _, b := range batch {
		if names[b.Name] {
			t.Errorf("%s-batch bug name %q is already used", name, b.Name)
		}
		names[b.Name] = true
		if _, ok := model.RuleByID(b.Rule); !ok {
			t.Errorf("bug %s: label %q is not a rule of model.Rules()", b.Name, b.Rule)
		}
		if b.Description == "" || b.Witness == nil || b.hooks == nil && b.info == nil {
			t.Errorf("bug %s: description %q, witness set %v, hooks set %v; want all three", b.Name, b.Description, b.Witness != nil, b.hooks != nil)
		}
		if got, err := ByName(b.Name); err != nil || got.Rule != b.Rule {
			t.Errorf("ByName(%s) = %s %s, %v; want the %s bug", b.Name, got.Name, got.Rule, err, b.Rule)
		}
		rules[b.Rule]++
	}
	for r, n := range rules {
		if n > perRule {
			t.Errorf("rule %s labels %d %s-batch bugs, want at most %d", r, n, name, perRule)
		}
	}
	if len(batch) < 30 || len(rules) < minRules {
		t.Errorf("%d %s-batch bugs over %d rules, want at least 30 over at least %d", len(batch), name, len(rules), minRules)
	}
	for i := 1; i < len(batch); i++ {
		a, b := batch[i-1], batch[i]
		if a.Rule > b.Rule || a.Rule == b.Rule && a.Name > b.Name {
			t.Errorf("the %s batch is not sorted by rule and name: %s %s before %s %s", name, a.Rule, a.Name, b.Rule, b.Name)
		}
	}
}
