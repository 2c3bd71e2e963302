package cgo_test

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyCwrapUsesCgo: cwrap.go is the package's one cgo file; every
// other file reaches C through its _C_ names (see the package doc).
func TestOnlyCwrapUsesCgo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatalf("Glob(*.go): %v", err)
	}
	if len(files) == 0 {
		t.Skip("the package's sources are not here (a test binary run elsewhere, as in vm_test.go's guests)")
	}
	uses := map[string]int{}
	for _, name := range files {
		if !strings.HasSuffix(name, "_test.go") { // cgo has no test files
			uses[name] = cgoUses(t, name)
		}
	}
	for name, n := range uses {
		if name != "cwrap.go" && n > 0 {
			t.Errorf(`%s has %d references to "C" (import "C" or C.name); want none outside cwrap.go`, name, n)
		}
	}
	if uses["cwrap.go"] == 0 {
		t.Error(`cwrap.go has no reference to "C"; want it to hold the package's cgo`)
	}
}

// cgoUses counts the tokens of file name that reach cgo: the import path
// "C" and every C followed by a dot (comments do not count).
func cgoUses(t *testing.T, name string) int {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile(name, -1, len(src)), src, func(pos token.Position, msg string) { t.Fatalf("%s: %s", pos, msg) }, 0)
	n := 0
	prevC := false
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return n
		}
		if tok == token.STRING && lit == `"C"` || prevC && tok == token.PERIOD {
			n++
		}
		prevC = tok == token.IDENT && lit == "C"
	}
}
