// Package corpus reads the corpus of real SRQ bugs (corpus/index.json):
// each entry re-introduces a bug upstream fixed into today's driver
// sources, as a patch per kernel it applies to, with the rule the suite
// should blame (or "kernel crash", or "hang"). It also holds the results
// of running the corpus and writes their table.
package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/srqconform/srqconform/model"
)

// Format is the index file's format line.
const Format = "srqconform-corpus/1"

// Outcomes other than a rule that an entry may expect.
const (
	KernelCrash = "kernel crash"
	Hang        = "hang"
)

// Entry is one bug of the corpus.
type Entry struct {
	// ID names the entry: provider, upstream id, a few words.
	ID string `json:"id"`
	// Kind is "kernel" (a patch to the kernel driver, run with vm
	// -patch) or "provider" (a patch to rdma-core's provider, run with vm
	// -rdma-core-patch).
	Kind     string `json:"kind"`
	Provider string `json:"provider"`
	// Upstream is the commit that fixed (or, for a regression, that
	// introduced) the bug, and Title its subject.
	Upstream string `json:"upstream"`
	Title    string `json:"title"`
	// What says what the re-introduced bug does.
	What string `json:"what"`
	// Patches maps a Debian suite (bookworm, trixie, sid) to the patch,
	// relative to the index, that re-introduces the bug there.
	Patches map[string]string `json:"patches"`
	// NotApplicable maps a suite the bug cannot be re-introduced into to
	// the reason.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	// Expected is the rule the suite should blame, KernelCrash or Hang.
	Expected string `json:"expected"`
	// Mode is "sequential" (vm: the suite's cases) or "concurrent" (vm
	// -concurrent: histories checked for linearizability).
	Mode string `json:"mode"`
	// Skip, when set, says why the entry cannot run yet.
	Skip string `json:"skip,omitempty"`
}

// Index is the corpus: its entries, in order.
type Index struct {
	Format  string  `json:"format"`
	Entries []Entry `json:"entries"`
	// Dir is the directory the index was read from.
	Dir string `json:"-"`
}

// Load reads dir/index.json and checks every entry: a known kind,
// provider and mode, an expected rule the catalogue has (or a crash or
// hang), and patch files that exist.
func Load(dir string) (*Index, error) {
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", filepath.Join(dir, "index.json"), err)
	}
	if ix.Format != Format {
		return nil, fmt.Errorf("corpus: %s has format %q; expected %q", filepath.Join(dir, "index.json"), ix.Format, Format)
	}
	ix.Dir = dir
	seen := map[string]bool{}
	for i, e := range ix.Entries {
		if seen[e.ID] {
			return nil, fmt.Errorf("corpus: entry %d: id %q given twice", i+1, e.ID)
		}
		seen[e.ID] = true
		if err := ix.check(e); err != nil {
			return nil, fmt.Errorf("corpus: entry %q: %w", e.ID, err)
		}
	}
	return &ix, nil
}

func (ix *Index) check(e Entry) error {
	switch {
	case e.ID == "" || e.Upstream == "":
		return errors.New("no id or upstream")
	case e.Kind != "kernel" && e.Kind != "provider":
		return fmt.Errorf("kind %q; expected kernel or provider", e.Kind)
	case e.Provider != "rxe" && e.Provider != "siw":
		return fmt.Errorf("provider %q; expected rxe or siw", e.Provider)
	case e.Mode != "sequential" && e.Mode != "concurrent":
		return fmt.Errorf("mode %q; expected sequential or concurrent", e.Mode)
	}
	if _, ok := model.RuleByID(e.Expected); !ok && e.Expected != KernelCrash && e.Expected != Hang {
		return fmt.Errorf("expected %q is neither a rule (srqconform rules) nor %q nor %q", e.Expected, KernelCrash, Hang)
	}
	if len(e.Patches) == 0 && e.Skip == "" {
		return errors.New("no patches and no reason to skip")
	}
	for suite, p := range e.Patches {
		if _, err := os.Stat(filepath.Join(ix.Dir, p)); err != nil {
			return fmt.Errorf("patch for %s: %w", suite, err)
		}
	}
	return nil
}

// Suites returns the suites the entry has a patch for, sorted.
func (e Entry) Suites() []string {
	var s []string
	for k := range e.Patches {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// Result is one run of an entry on one kernel.
type Result struct {
	Entry  string `json:"entry"`
	Suite  string `json:"suite"`
	Kernel string `json:"kernel,omitempty"`
	Mode   string `json:"mode"`
	// Caught says the suite failed a rule not known for the kernel, or
	// the kernel crashed or hung.
	Caught bool `json:"caught"`
	// Blamed is the rule of the first counterexample (or the
	// violation's rule, or KernelCrash or Hang); Failing every rule that
	// failed.
	Blamed   string         `json:"blamed,omitempty"`
	Failing  []model.RuleID `json:"failing,omitempty"`
	Expected string         `json:"expected"`
	// Inconclusive says the run outran its bound with no kernel report,
	// twice (the second time with twice the bound): no verdict, neither
	// caught nor missed.
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Detail is the crash's summary, why the run gave no verdict, or, for
	// a concurrent entry run a second time with more histories, a note
	// that says so.
	Detail string        `json:"detail,omitempty"`
	Skip   string        `json:"skip,omitempty"`
	Wall   time.Duration `json:"wall_ns"`
}

// AsExpected says the blame is the expected one.
func (r Result) AsExpected() bool { return r.Caught && r.Blamed == r.Expected }

// WriteTable writes the results as a Markdown table, then the totals:
// entries caught on every kernel they ran on, and runs blamed as
// expected.
func WriteTable(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString("| entry | kernel | caught | blamed | expected | as expected | mode | time | note |\n|---|---|---|---|---|---|---|---|---|\n")
	ran, expected, inconclusive := 0, 0, 0
	missed := map[string]bool{}
	entries := map[string]bool{}
	for _, r := range results {
		caught, blamed, as, wall := "no", r.Blamed, "no", r.Wall.Round(time.Second).String()
		switch {
		case r.Skip != "":
			caught, as, wall = "skipped", "-", "-"
		case r.Inconclusive:
			inconclusive++
			entries[r.Entry] = true
			caught, as = "inconclusive", "-"
		default:
			ran++
			entries[r.Entry] = true
			if r.Caught {
				caught = "yes"
			} else {
				missed[r.Entry] = true
			}
			if r.AsExpected() {
				as = "yes"
				expected++
			}
		}
		note := r.Detail
		if r.Skip != "" {
			note = r.Skip
		}
		if len(r.Failing) > 1 {
			note = strings.TrimSpace("failing " + strings.Join(model.RuleNames(r.Failing), ", ") + "; " + note)
		}
		kernel := r.Suite
		if r.Kernel != "" {
			kernel += " (" + r.Kernel + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Entry, kernel, caught, orDash(blamed), r.Expected, as, r.Mode, wall,
			strings.ReplaceAll(strings.ReplaceAll(note, "|", `\|`), "\n", " "))
	}
	fmt.Fprintf(&b, "\n%d runs of %d entries: %d entries caught on every kernel they ran on; %d of %d runs blamed on the expected rule.\n",
		ran, len(entries), len(entries)-len(missed)-len(undecided(results, missed)), expected, ran)
	if inconclusive > 0 {
		fmt.Fprintf(&b, "%d more runs inconclusive (they outran their bound twice with no kernel report): neither caught nor missed, and not counted above.\n", inconclusive)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// undecided lists the entries that ran only inconclusively (and are not
// in missed): no kernel they ran on gave a verdict.
func undecided(results []Result, missed map[string]bool) []string {
	var out []string
	for _, r := range results {
		if !r.Inconclusive || missed[r.Entry] || slices.Contains(out, r.Entry) {
			continue
		}
		if !slices.ContainsFunc(results, func(o Result) bool { return o.Entry == r.Entry && o.Skip == "" && !o.Inconclusive }) {
			out = append(out, r.Entry)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteIndex writes the index as a Markdown table: entry, upstream,
// what it does, the kernels it runs on (and why not the others), the
// expected rule and the mode.
func WriteIndex(w io.Writer, ix *Index) error {
	var b strings.Builder
	b.WriteString("| entry | upstream | what it does | kernels | expected | mode |\n|---|---|---|---|---|---|\n")
	for _, e := range ix.Entries {
		kernels := strings.Join(e.Suites(), ", ")
		var na []string
		for s, why := range e.NotApplicable {
			na = append(na, "not "+s+": "+why)
		}
		sort.Strings(na)
		if e.Skip != "" {
			na = append(na, "skipped: "+e.Skip)
		}
		if len(na) > 0 {
			kernels = strings.TrimPrefix(kernels+"; "+strings.Join(na, "; "), "; ")
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s | %s | %s | %s |\n", e.ID, e.Upstream, quoteTitle(e.Title), e.What, kernels, e.Expected, e.Mode)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteTitle(t string) string {
	if t == "" {
		return ""
	}
	return "\"" + t + "\""
}
