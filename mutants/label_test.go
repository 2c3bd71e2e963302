package mutants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLabelReadsBothFormsAndNone(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
		ok   bool
	}{
		{"// rule: POST-FULL", []string{"POST-FULL"}, true},
		{"// rules: POST-FULL, SLOT-FREE", []string{"POST-FULL", "SLOT-FREE"}, true},
		{"\t// rule: none (the switches)", []string{NoRule}, true},
		{"// rule:none", []string{NoRule}, true},
		{"// the rule: POST-FULL is broken", nil, false},
		{"// rulers: X", nil, false},
	} {
		got, ok := ParseLabel(c.line)
		assert.Equal(t, c.ok, ok, "ParseLabel(%q)", c.line)
		assert.Equal(t, c.want, got, "ParseLabel(%q)", c.line)
	}
}

func TestCheckLabelRefusesUnknownRules(t *testing.T) {
	assert.NoError(t, CheckLabel([]string{"POST-FULL", "SLOT-FREE"}))
	assert.NoError(t, CheckLabel([]string{NoRule}))
	assert.ErrorContains(t, CheckLabel([]string{"POST-FULL", "POST-FULLL"}), `"POST-FULLL"`)
	assert.Error(t, CheckLabel(nil))
	assert.Error(t, CheckLabel([]string{NoRule, "POST-FULL"}), "none mixed with rules")
}

// TestEveryEmulatorFunctionIsAnnotated: every function of drivers/emu with
// a body carries a rule annotation (or "none"), and every annotation, on a
// function, a var or a statement, names rules of the model's catalogue.
func TestEveryEmulatorFunctionIsAnnotated(t *testing.T) {
	anns, err := Annotations("../drivers/emu")
	require.NoError(t, err)
	funcs, stmts := 0, 0
	for _, a := range anns {
		if a.Name == "" {
			stmts++
		} else {
			funcs++
		}
		if a.Mutable && a.Rules == nil {
			t.Errorf("%s:%d: %s has no \"// rule: ID\" annotation in its doc comment", a.File, a.Line, a.Name)
			continue
		}
		if a.Rules != nil {
			if err := CheckLabel(a.Rules); err != nil {
				t.Errorf("%s:%d: annotation %v of %q: %v", a.File, a.Line, a.Rules, a.Name, err)
			}
		}
	}
	assert.Greater(t, funcs, 80, "functions and vars found in drivers/emu")
	assert.Greater(t, stmts, 40, "statement annotations found in drivers/emu")
}

func TestAnnotationsFindsUnannotatedFunctions(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\n// f does it.\n// rule: POST-FULL\nfunc f() int {\n\t// rule: NO-SUCH\n\treturn 1\n}\n\nfunc g() int { return 2 }\n"
	require.NoError(t, writeFile(dir+"/p.go", src))
	anns, err := Annotations(dir)
	require.NoError(t, err)
	require.Len(t, anns, 3)
	assert.Equal(t, Annotation{File: "p.go", Line: 5, Name: "f", Rules: []string{"POST-FULL"}, Mutable: true}, anns[0])
	assert.Equal(t, Annotation{File: "p.go", Line: 7, Rules: []string{"NO-SUCH"}}, anns[1])
	assert.Equal(t, Annotation{File: "p.go", Line: 10, Name: "g", Mutable: true}, anns[2])
	assert.Error(t, CheckLabel(anns[1].Rules))
}
