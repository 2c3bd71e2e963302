package faulty

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers/emu"
	"github.com/srqconform/srqconform/model"
)

// TestEveryWitnessShowsItsBug runs each bug's witness on the emulator and
// on the bug and wants the transcripts to differ, with no harness error.
func TestEveryWitnessShowsItsBug(t *testing.T) {
	ctx := context.Background()
	for _, b := range All() {
		t.Run(b.Name, func(t *testing.T) {
			want, err := Run(ctx, emu.New(), b.Witness)
			if err != nil {
				t.Fatalf("witness on emu: %v\n%s", err, strings.Join(want, "\n"))
			}
			got, err := Run(ctx, b.Driver(), b.Witness)
			if err != nil {
				t.Fatalf("witness on the bug: %v\n%s", err, strings.Join(got, "\n"))
			}
			if slices.Equal(got, want) {
				t.Fatalf("witness transcript is the same on emu and on %s:\n%s", b.Name, strings.Join(got, "\n"))
			}
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Logf("first difference, call %d: emu %q, bug %q", i, want[i], got[i])
					break
				}
			}
		})
	}
}

// TestBugsAreLabelledAndSpread checks every bug names an existing rule and
// a unique name, and that there are at least 40 over at least 30 rules.
func TestBugsAreLabelledAndSpread(t *testing.T) {
	names, rules := map[string]bool{}, map[string]bool{}
	for _, b := range All() {
		if _, ok := model.RuleByID(b.Rule); !ok {
			t.Errorf("bug %s: label %q is no rule of model.Rules()", b.Name, b.Rule)
		}
		if names[b.Name] {
			t.Errorf("bug name %s used twice", b.Name)
		}
		if b.Description == "" || b.Witness == nil || b.hooks == nil {
			t.Errorf("bug %s: description, witness or hooks missing", b.Name)
		}
		names[b.Name], rules[b.Rule] = true, true
	}
	if len(names) < 40 || len(rules) < 30 {
		t.Errorf("All() has %d bugs over %d rules, want at least 40 over 30", len(names), len(rules))
	}
}

// TestWrapperWithoutBugIsTransparent runs every witness through the
// wrapper with no hooks and wants the emulator's transcript.
func TestWrapperWithoutBugIsTransparent(t *testing.T) {
	ctx := context.Background()
	clean := Bug{Name: "none", hooks: func() *hooks { return &hooks{} }}
	for _, b := range All() {
		want, err := Run(ctx, emu.New(), b.Witness)
		if err != nil {
			t.Fatalf("%s: witness on emu: %v", b.Name, err)
		}
		got, err := Run(ctx, clean.Driver(), b.Witness)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: the bare wrapper's transcript differs from emu's (err %v):\n got %q\nwant %q", b.Name, err, got, want)
		}
	}
}
