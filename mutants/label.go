package mutants

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/srqconform/srqconform/model"
)

// NoRule is the label of code no mutant is made of.
const NoRule = "none"

// ParseLabel reads an annotation line ("// rule: POST-FULL", "// rules:
// POST-FULL, SLOT-FREE", "// rule: none (why)"). It returns the rule IDs
// (or [NoRule]) and whether the line is an annotation at all.
func ParseLabel(line string) ([]string, bool) {
	t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "//"))
	var rest string
	switch {
	case strings.HasPrefix(t, "rule:"):
		rest = t[len("rule:"):]
	case strings.HasPrefix(t, "rules:"):
		rest = t[len("rules:"):]
	default:
		return nil, false
	}
	rest = strings.TrimSpace(rest)
	if rest == NoRule || strings.HasPrefix(rest, NoRule+" ") {
		return []string{NoRule}, true
	}
	var ids []string
	for _, f := range strings.Split(rest, ",") {
		ids = append(ids, strings.TrimSpace(f))
	}
	return ids, true
}

// groupLabel returns the annotation in a comment group, if any.
func groupLabel(g *ast.CommentGroup) ([]string, bool) {
	if g == nil {
		return nil, false
	}
	for _, c := range g.List {
		if ids, ok := ParseLabel(c.Text); ok {
			return ids, true
		}
	}
	return nil, false
}

// span is a labelled region of a file: a function, a var declaration or a
// statement with its own annotation.
type span struct {
	pos, end token.Pos
	rules    []string
	stmt     bool // a statement's own annotation
}

// Region is an annotated declaration of a file: a function or a var.
type Region struct {
	Name  string   // function (Type.Method) or var name
	Line  int      // line of the declaration
	Rules []string // its annotation; nil when it has none
	// Mutable says the declaration has code a mutant could change.
	Mutable bool
}

// declName names a function or method declaration ("srq.Post").
func declName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// labels finds the annotated declarations and statement overrides of a
// parsed file, through its comment map.
func labels(fset *token.FileSet, f *ast.File) (regions []Region, spans []span) {
	cm := ast.NewCommentMap(fset, f, f.Comments)
	for n, groups := range cm {
		st, ok := n.(ast.Stmt)
		if !ok {
			continue
		}
		for _, g := range groups {
			// Only a comment ending on the line before the statement
			// labels it (not a trailing comment of the one before).
			if fset.Position(g.End()).Line != fset.Position(st.Pos()).Line-1 {
				continue
			}
			if ids, ok := groupLabel(g); ok {
				spans = append(spans, span{st.Pos(), st.End(), ids, true})
			}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			ids, _ := groupLabel(d.Doc)
			r := Region{Name: declName(d), Line: fset.Position(d.Pos()).Line, Rules: ids, Mutable: d.Body != nil && len(d.Body.List) > 0}
			regions = append(regions, r)
			spans = append(spans, span{d.Pos(), d.End(), ids, false})
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			ids, _ := groupLabel(d.Doc)
			for _, s := range d.Specs {
				vs := s.(*ast.ValueSpec)
				if len(vs.Values) == 0 {
					continue
				}
				if ids == nil {
					// An unannotated var holds no SRQ logic (interface
					// assertions, tables of the deviation switches).
					continue
				}
				regions = append(regions, Region{Name: vs.Names[0].Name, Line: fset.Position(vs.Pos()).Line, Rules: ids, Mutable: true})
			}
			if ids != nil {
				spans = append(spans, span{d.Pos(), d.End(), ids, false})
			}
		}
	}
	return regions, spans
}

// labelAt returns the rules of the innermost labelled span holding
// [pos, end), or nil.
func labelAt(spans []span, pos, end token.Pos) []string {
	var best *span
	for i := range spans {
		s := &spans[i]
		if s.pos <= pos && end <= s.end && (best == nil || s.end-s.pos < best.end-best.pos) {
			best = s
		}
	}
	if best == nil {
		return nil
	}
	return best.rules
}

// withInner returns ids and, after them, the rules of every statement
// annotated apart inside [pos, end) (NoRule aside), each once, in the
// order they appear.
func withInner(ids []string, spans []span, pos, end token.Pos) []string {
	inner := slices.Clone(spans)
	slices.SortStableFunc(inner, func(a, b span) int { return int(a.pos - b.pos) })
	out := slices.Clone(ids)
	for _, s := range inner {
		if !s.stmt || s.pos < pos || s.end > end {
			continue
		}
		for _, id := range s.rules {
			if id != NoRule && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// CheckLabel returns an error naming the first ID of rules that is no rule
// of model.Rules (NoRule alone is allowed).
func CheckLabel(rules []string) error {
	if len(rules) == 1 && rules[0] == NoRule {
		return nil
	}
	if len(rules) == 0 {
		return fmt.Errorf("an empty annotation, want rule IDs or %q", NoRule)
	}
	for _, id := range rules {
		if _, ok := model.RuleByID(id); !ok {
			return fmt.Errorf("model.RuleByID(%q) found no rule", id)
		}
	}
	return nil
}

// Annotation is one annotated (or unannotated) declaration or annotated
// statement of a file.
type Annotation struct {
	File string
	Line int
	// Name is the function or var; "" for a statement's own annotation.
	Name  string
	Rules []string // nil: none given
	// Mutable says a function has a body (a var, a value).
	Mutable bool
}

// Annotations parses the non-test Go files of dir and returns every
// function and annotated var, and every statement annotation, in file
// and line order.
func Annotations(dir string) ([]Annotation, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []Annotation
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		regions, spans := labels(fset, f)
		base := filepath.Base(n)
		for _, r := range regions {
			out = append(out, Annotation{File: base, Line: r.Line, Name: r.Name, Rules: r.Rules, Mutable: r.Mutable})
		}
		for _, s := range spans {
			if s.stmt {
				out = append(out, Annotation{File: base, Line: fset.Position(s.pos).Line, Rules: s.rules})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}
