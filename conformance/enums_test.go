package conformance

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/model"
)

// crossingEnums are the enum types convert.go and the concurrent recorder
// cast between drivers and model by number. Each must have the same named
// values on both sides.
var crossingEnums = []string{"CreateVariant", "RecvCaps", "QPType", "QPState", "Opcode",
	"WCStatus", "WCOpcode", "EventType", "PeerStatus"}

// enumConsts type-checks the non-test Go files of dir alone (imports are
// left unresolved: constants of the package's own types do not need them)
// and returns, for each named type, its exported constants and their
// values.
func enumConsts(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("os.ReadDir(%s): %v", dir, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatalf("parser.ParseFile(%s): %v", n, err)
		}
		files = append(files, f)
	}
	conf := types.Config{Error: func(error) {}} // unresolved imports are expected
	pkg, _ := conf.Check(dir, fset, files, nil)
	out := map[string]map[string]string{}
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok || !c.Exported() || c.Val().Kind() != constant.Int {
			continue
		}
		named, ok := c.Type().(*types.Named)
		if !ok || named.Obj().Pkg() != pkg {
			continue
		}
		tn := named.Obj().Name()
		if out[tn] == nil {
			out[tn] = map[string]string{}
		}
		out[tn][name] = c.Val().ExactString()
	}
	return out
}

// TestEnumsAlignAcrossDriversAndModel checks, from the source, that every
// enum crossing the drivers/model line has the same constants on both
// sides, name by name and value by value: a value changed or a constant
// added on one side only fails here rather than as a wrong verdict.
func TestEnumsAlignAcrossDriversAndModel(t *testing.T) {
	d := enumConsts(t, filepath.Join("..", "drivers"))
	m := enumConsts(t, filepath.Join("..", "model"))
	for _, typ := range crossingEnums {
		dc, mc := d[typ], m[typ]
		if len(dc) < 2 || len(mc) < 2 {
			t.Errorf("drivers.%s has %d named values and model.%s %d; want at least 2 on each side", typ, len(dc), typ, len(mc))
			continue
		}
		names := map[string]bool{}
		for n := range dc {
			names[n] = true
		}
		for n := range mc {
			names[n] = true
		}
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			dv, dok := dc[n]
			mv, mok := mc[n]
			switch {
			case !dok:
				t.Errorf("model.%s = %s has no drivers.%s; want the same named values on both sides", n, mv, n)
			case !mok:
				t.Errorf("drivers.%s = %s has no model.%s; want the same named values on both sides", n, dv, n)
			case dv != mv:
				t.Errorf("drivers.%s = %s but model.%s = %s; want equal (conformance casts one to the other)", n, dv, n, mv)
			}
		}
	}
	// A type with constants on both sides that the list above misses.
	for typ := range d {
		if m[typ] != nil && !strings.Contains(" "+strings.Join(crossingEnums, " ")+" ", " "+typ+" ") {
			t.Errorf("%s has named values in drivers and in model but is not in crossingEnums; add it", typ)
		}
	}
}

// TestQPStateNamesAgree checks the one crossing enum both sides name at run
// time: every state prints the same in drivers and model.
func TestQPStateNamesAgree(t *testing.T) {
	for _, s := range model.QPStates {
		if got, want := drivers.QPState(s).String(), s.String(); got != want {
			t.Errorf("drivers.QPState(%d).String() = %q, model's is %q; want equal", uint8(s), got, want)
		}
	}
}
