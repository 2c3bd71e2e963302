package mutants

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// pkg is a parsed, type-checked package: its non-test files and sources.
type pkg struct {
	dir   string
	fset  *token.FileSet
	names []string // file names, sorted
	srcs  map[string][]byte
	files map[string]*ast.File
	info  *types.Info
	imp   types.Importer
}

// exportImporter returns an importer that reads the compiler's export
// data, located by one "go list -export -deps" of dir's package.
func exportImporter(fset *token.FileSet, dir string) (types.Importer, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export -deps in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q in go list's answer", path)
		}
		return os.Open(f)
	}), nil
}

// loadPackage parses and type-checks the non-test Go files of dir.
func loadPackage(dir string) (*pkg, error) {
	fset := token.NewFileSet()
	imp, err := exportImporter(fset, dir)
	if err != nil {
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	p := &pkg{dir: dir, fset: fset, srcs: map[string][]byte{}, files: map[string]*ast.File{}, imp: imp}
	for _, n := range names {
		base := filepath.Base(n)
		if strings.HasSuffix(base, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, base, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", n, err)
		}
		p.names = append(p.names, base)
		p.srcs[base], p.files[base] = src, f
	}
	sort.Strings(p.names)
	if len(p.names) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	p.info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	if err := p.check(p.fileList(nil), p.info); err != nil {
		return nil, fmt.Errorf("type-check %s: %w", dir, err)
	}
	return p, nil
}

// fileList returns the package's files in order, with replace standing in
// for the file of the same name.
func (p *pkg) fileList(replace *ast.File) []*ast.File {
	var out []*ast.File
	for _, n := range p.names {
		f := p.files[n]
		if replace != nil && p.fset.File(replace.Pos()).Name() == n {
			f = replace
		}
		out = append(out, f)
	}
	return out
}

// check type-checks files as one package, returning the first error.
func (p *pkg) check(files []*ast.File, info *types.Info) error {
	var first error
	conf := types.Config{Importer: p.imp, Error: func(err error) {
		if first == nil {
			first = err
		}
	}}
	_, _ = conf.Check(files[0].Name.Name, p.fset, files, info)
	return first
}

// Compiles type-checks the package with file's source replaced by src:
// nil, or the compiler's first complaint.
func (p *pkg) compiles(file string, src []byte) error {
	f, err := parser.ParseFile(p.fset, file, src, 0)
	if err != nil {
		return err
	}
	return p.check(p.fileList(f), nil)
}
