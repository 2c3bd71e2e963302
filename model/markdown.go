package model

import (
	"fmt"
	"io"
	"strings"
)

// CataloguePath is where the rendered catalogue lives, relative to the
// repository root.
const CataloguePath = "reports/rules.md"

// WriteCatalogue renders the rule catalogue, the invariants, the profiles
// and the seed map as Markdown. reports/rules.md is this output; a test
// fails when the file is stale.
func WriteCatalogue(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# SRQ rule catalogue\n\n")
	b.WriteString("Generated from package model by `go run ./cmd/srqconform rules -format markdown`; do not edit.\n")
	b.WriteString("Kinds: *documented* (a man page, rdmamojo or IBTA says it), *implementation-defined* (drivers differ; the named profile fields decide), *consensus* (undocumented, but every driver read does it).\n\n")
	b.WriteString("## Rules\n\n| ID | Statement | Kind | Profile fields | Source |\n|---|---|---|---|---|\n")
	for _, r := range catalogue {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.ID, cell(r.Statement), r.Kind, strings.Join(r.Fields, ", "), cell(r.Source))
	}
	b.WriteString("\n## Invariants checked after every step\n\n| ID | Statement |\n|---|---|\n")
	for _, inv := range Invariants() {
		fmt.Fprintf(&b, "| %s | %s |\n", inv.ID, cell(inv.Statement))
	}
	names := ProfileNames()
	profiles := Profiles()
	b.WriteString("\n## Profiles\n\n")
	for _, n := range names {
		fmt.Fprintf(&b, "- **%s**: %s\n", n, cell(profiles[n].Description))
	}
	b.WriteString("\nA value in *italics* has not been verified on a device; `a | b` means the sources allow either and the model accepts both.\n\n")
	b.WriteString("| Field | " + strings.Join(names, " | ") + " |\n|---|" + strings.Repeat("---|", len(names)) + "\n")
	for _, f := range FieldNames() {
		row := []string{f}
		for _, n := range names {
			p := profiles[n]
			v := cell(p.Field(f))
			if note := p.Notes[f]; n != "documented" && !note.Verified {
				v = "*" + v + "*"
			}
			row = append(row, v)
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\n### Sources of the profile fields\n\n")
	for _, n := range names {
		p := profiles[n]
		fmt.Fprintf(&b, "#### %s\n\n", n)
		for _, f := range FieldNames() {
			note := p.Notes[f]
			mark := "unverified"
			if note.Verified {
				mark = "verified"
			}
			if n == "documented" {
				mark = "document"
			}
			fmt.Fprintf(&b, "- %s (%s): %s\n", f, mark, cell(note.Source))
		}
		b.WriteString("\n")
	}
	b.WriteString("## State-space features\n\nEvery report counts the agreeing steps that reached each feature: the states the run put the device through. They are chosen from what real driver bugs depend on.\n\n| Feature | Why it is counted |\n|---|---|\n")
	for _, f := range Features {
		fmt.Fprintf(&b, "| %s | %s |\n", cell(f.Name), cell(f.Why))
	}
	b.WriteString("\n## Seed statements\n\nEvery SRQ statement in the seed documents (paraphrased), with the rules that check it or the reason it is out of scope.\n\n")
	b.WriteString("| Seed | Section | Statement | Rules | Out of scope because |\n|---|---|---|---|---|\n")
	for _, s := range seedMap {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", s.Seed, s.Section, cell(s.Statement), strings.Join(RuleNames(s.Rules), ", "), cell(s.OutOfScope))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
