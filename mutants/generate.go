package mutants

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Operators, as Mutant.Operator names them.
const (
	OpBoundary    = "boundary"     // < and <=, > and >= swapped
	OpNegate      = "negate"       // == and != swapped; if c made if !c
	OpOffByOne    = "off-by-one"   // an integer expression x made x+1 or x-1
	OpConstant    = "constant"     // an integer constant n made n+1 or n-1; true and false swapped
	OpDrop        = "drop"         // an assignment, increment or call statement removed
	OpSwap        = "swap"         // two operands, arguments or fields of one type swapped
	OpEarlyReturn = "early-return" // the function returns at once: zero values, or its first return
)

// Mutant is one generated mutant: an edit of one file of the package.
type Mutant struct {
	// ID is stable while the mutated code and its function keep their
	// text: file, function, operator and a hash of the change.
	ID       string `json:"id"`
	File     string `json:"file"` // base name in the package's directory
	Line     int    `json:"line"`
	Func     string `json:"func"`
	Operator string `json:"operator"`
	Before   string `json:"before"`
	After    string `json:"after"`
	// Label is the annotation of the mutated code: the rules a bug there
	// breaks.
	Label []string `json:"label"`
	// Start and End are the byte offsets of the text the edit replaces
	// with Text.
	Start int    `json:"start"`
	End   int    `json:"end"`
	Text  string `json:"text"`
	// NotCompiling holds the type checker's complaint about the mutated
	// package; such a mutant is discarded.
	NotCompiling string `json:"not_compiling,omitempty"`
}

// Apply returns src with the mutant's edit made.
func (m Mutant) Apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.Text))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Text...)
	return append(out, src[m.End:]...)
}

// Set is the mutants of one package, with its sources.
type Set struct {
	Dir     string            // the package's directory
	Sources map[string][]byte // base name -> original source
	Mutants []Mutant          // in file, offset, operator order
}

// Source returns the mutated source of m's file.
func (s *Set) Source(m Mutant) []byte { return m.Apply(s.Sources[m.File]) }

// Generate parses and type-checks the package in dir and returns its
// mutants, each type-checked (NotCompiling set where it fails).
func Generate(dir string) (*Set, error) {
	p, err := loadPackage(dir)
	if err != nil {
		return nil, err
	}
	set := &Set{Dir: dir, Sources: p.srcs}
	seen := map[string]bool{}
	for _, name := range p.names {
		g := &gen{p: p, file: name, src: p.srcs[name], f: p.files[name], ids: map[string]int{}}
		_, g.spans = labels(p.fset, g.f)
		g.file1()
		sort.SliceStable(g.out, func(i, j int) bool {
			a, b := g.out[i], g.out[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.Operator != b.Operator {
				return a.Operator < b.Operator
			}
			return a.Text < b.Text
		})
		for _, m := range g.out {
			key := fmt.Sprintf("%s\x00%d\x00%d\x00%s", m.File, m.Start, m.End, m.Text)
			if seen[key] {
				continue
			}
			seen[key] = true
			if err := p.compiles(m.File, m.Apply(g.src)); err != nil {
				m.NotCompiling = err.Error()
			}
			set.Mutants = append(set.Mutants, m)
		}
	}
	return set, nil
}

// gen generates the mutants of one file.
type gen struct {
	p     *pkg
	file  string
	src   []byte
	f     *ast.File
	spans []span
	skips [][2]token.Pos // code no mutant touches
	fn    string
	out   []Mutant
	ids   map[string]int
}

func (g *gen) off(p token.Pos) int { return g.p.fset.Position(p).Offset }

func (g *gen) text(n ast.Node) string { return string(g.src[g.off(n.Pos()):g.off(n.End())]) }

func (g *gen) file1() {
	for _, d := range g.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			g.fn = declName(d)
			g.skips = g.skips[:0]
			ast.Inspect(d.Body, g.findSkips)
			ast.Inspect(d.Body, g.visit)
			g.earlyReturns(d)
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				vs := s.(*ast.ValueSpec)
				g.fn = vs.Names[0].Name
				g.skips = g.skips[:0]
				for _, v := range vs.Values {
					ast.Inspect(v, g.visit)
				}
			}
		}
	}
}

// isHas says whether e is a call of a deviation switch (cfg.has(X)).
func isHas(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "has"
}

// pureSwitch says whether e is made of deviation switches only.
func pureSwitch(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return pureSwitch(e.X)
	case *ast.UnaryExpr:
		return e.Op == token.NOT && pureSwitch(e.X)
	case *ast.BinaryExpr:
		return (e.Op == token.LAND || e.Op == token.LOR) && pureSwitch(e.X) && pureSwitch(e.Y)
	}
	return isHas(e)
}

// withoutDeviations evaluates e with every deviation switch off, where
// the switches alone decide it.
func withoutDeviations(e ast.Expr) (value, known bool) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return withoutDeviations(e.X)
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			v, k := withoutDeviations(e.X)
			return !v, k
		}
	case *ast.BinaryExpr:
		if e.Op != token.LAND && e.Op != token.LOR {
			return false, false
		}
		a, ka := withoutDeviations(e.X)
		b, kb := withoutDeviations(e.Y)
		// The value that decides the operator: false for &&, true for ||.
		decides := e.Op == token.LOR
		if ka && a == decides || kb && b == decides {
			return decides, true
		}
		return !decides, ka && kb
	case *ast.CallExpr:
		return false, isHas(e)
	}
	return false, false
}

// onlyUnder says whether e is false with every deviation off.
func onlyUnder(e ast.Expr) bool {
	v, k := withoutDeviations(e)
	return k && !v
}

// alwaysWithout says whether e is true with every deviation off.
func alwaysWithout(e ast.Expr) bool {
	v, k := withoutDeviations(e)
	return k && v
}

// isMessageCall says whether c builds an error or message text, or takes
// the device lock: code no mutant touches.
func isMessageCall(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "fmt" || id.Name == "errors") {
		return true
	}
	return sel.Sel.Name == "Lock" || sel.Sel.Name == "Unlock"
}

// findSkips records the code of a function body no mutant touches: the
// deviation switches, the code only a deviation runs, message texts and
// the lock.
func (g *gen) findSkips(n ast.Node) bool {
	skip := func(n ast.Node) { g.skips = append(g.skips, [2]token.Pos{n.Pos(), n.End()}) }
	switch n := n.(type) {
	case *ast.CallExpr:
		if isHas(n) || isMessageCall(n) {
			skip(n)
			return false
		}
	case *ast.DeferStmt:
		skip(n)
		return false
	case *ast.BinaryExpr:
		// a && has(X) is false, a || !has(X) true, whatever a is.
		if n.Op == token.LAND && onlyUnder(n) || n.Op == token.LOR && alwaysWithout(n) {
			skip(n)
			return false
		}
	case *ast.IfStmt:
		if onlyUnder(n.Cond) || isCtxCheck(n) {
			// Its condition too: negated, it would run a deviation's code.
			g.skips = append(g.skips, [2]token.Pos{n.Pos(), n.Body.End()})
		}
		if alwaysWithout(n.Cond) && n.Else != nil {
			skip(n.Else)
		}
	case *ast.SwitchStmt:
		if n.Tag != nil {
			return true
		}
		for _, c := range n.Body.List {
			cc := c.(*ast.CaseClause)
			dead := len(cc.List) > 0
			for _, e := range cc.List {
				dead = dead && onlyUnder(e)
			}
			if dead {
				skip(cc)
			}
		}
	}
	return true
}

// isCtxCheck says whether an if statement checks its context
// (if err := ctx.Err(); err != nil): harness code, not the device's.
func isCtxCheck(n *ast.IfStmt) bool {
	a, ok := n.Init.(*ast.AssignStmt)
	if !ok || len(a.Rhs) != 1 {
		return false
	}
	c, ok := a.Rhs[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Err"
}

// label returns the rules of the code [pos, end) and whether mutants may
// be made of it.
func (g *gen) label(pos, end token.Pos) ([]string, bool) {
	for _, s := range g.skips {
		if s[0] <= pos && end <= s[1] {
			return nil, false
		}
	}
	ids := labelAt(g.spans, pos, end)
	if len(ids) == 0 || ids[0] == NoRule {
		return nil, false
	}
	return ids, true
}

// add records a mutant of node n replacing [pos, end) with text.
func (g *gen) add(n ast.Node, op string, pos, end token.Pos, text string) {
	ids, ok := g.label(n.Pos(), n.End())
	if !ok {
		return
	}
	if op == OpEarlyReturn {
		// The return skips the whole body: the rules of the statements
		// in it annotated apart are carried out by what it removes too.
		ids = withInner(ids, g.spans, n.Pos(), n.End())
	}
	start, stop := g.off(pos), g.off(end)
	m := Mutant{File: g.file, Line: g.p.fset.Position(pos).Line, Func: g.fn, Operator: op,
		Label: ids, Start: start, End: stop, Text: text}
	m.Before, m.After = g.snippets(start, stop, text)
	key := strings.Join([]string{g.file, g.fn, op, g.text(n), string(g.src[start:stop]), text}, "\x00")
	g.ids[key]++
	sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(g.ids[key])))
	m.ID = fmt.Sprintf("%s.%s.%s.%s", strings.TrimSuffix(g.file, ".go"), g.fn, op, hex.EncodeToString(sum[:])[:6])
	g.out = append(g.out, m)
}

// snippets returns the source lines an edit touches, before and after it,
// with runs of white space made one space.
func (g *gen) snippets(start, stop int, text string) (string, string) {
	ls := strings.LastIndexByte(string(g.src[:start]), '\n') + 1
	le := len(g.src)
	if i := strings.IndexByte(string(g.src[stop:]), '\n'); i >= 0 {
		le = stop + i
	}
	before := string(g.src[ls:le])
	after := string(g.src[ls:start]) + text + string(g.src[stop:le])
	return squeeze(before), squeeze(after)
}

func squeeze(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// typeOf returns the type of e, or nil.
func (g *gen) typeOf(e ast.Expr) types.Type {
	if tv, ok := g.p.info.Types[e]; ok {
		return tv.Type
	}
	return nil
}

// isInteger says whether e is an integer expression (not a literal).
func (g *gen) isInteger(e ast.Expr) bool {
	if _, lit := e.(*ast.BasicLit); lit {
		return false
	}
	t := g.typeOf(e)
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// sameType says whether a and b have one type, and are not both constants.
func (g *gen) sameType(a, b ast.Expr) bool {
	ta, tb := g.p.info.Types[a], g.p.info.Types[b]
	if ta.Type == nil || tb.Type == nil || ta.Value != nil && tb.Value != nil {
		return false
	}
	return types.Identical(ta.Type, tb.Type) && g.text(a) != g.text(b)
}

var toggles = map[token.Token]struct {
	to token.Token
	op string
}{
	token.LSS: {token.LEQ, OpBoundary}, token.LEQ: {token.LSS, OpBoundary},
	token.GTR: {token.GEQ, OpBoundary}, token.GEQ: {token.GTR, OpBoundary},
	token.EQL: {token.NEQ, OpNegate}, token.NEQ: {token.EQL, OpNegate},
}

// ordered lists the operators whose operands matter in order.
var ordered = map[token.Token]bool{token.SUB: true, token.QUO: true, token.REM: true, token.SHL: true, token.SHR: true,
	token.LSS: true, token.LEQ: true, token.GTR: true, token.GEQ: true}

func (g *gen) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.CallExpr:
		if isHas(n) || isMessageCall(n) {
			return false
		}
		g.swapAdjacent(n, n.Args)
	case *ast.DeferStmt:
		return false
	case *ast.BinaryExpr:
		if pureSwitch(n) {
			return false
		}
		if t, ok := toggles[n.Op]; ok {
			g.add(n, t.op, n.OpPos, n.OpPos+token.Pos(len(n.Op.String())), t.to.String())
		}
		if ordered[n.Op] && g.sameType(n.X, n.Y) {
			g.add(n, OpSwap, n.Pos(), n.End(), g.text(n.Y)+" "+n.Op.String()+" "+g.text(n.X))
		}
	case *ast.IfStmt:
		if b, ok := n.Cond.(*ast.BinaryExpr); ok && (b.Op == token.EQL || b.Op == token.NEQ) {
			break // the toggle of == and != negates it already
		}
		if !pureSwitch(n.Cond) {
			if u, ok := n.Cond.(*ast.UnaryExpr); ok && u.Op == token.NOT {
				g.add(n.Cond, OpNegate, n.Cond.Pos(), n.Cond.End(), g.text(u.X))
			} else {
				g.add(n.Cond, OpNegate, n.Cond.Pos(), n.Cond.End(), "!("+g.text(n.Cond)+")")
			}
		}
	case *ast.BasicLit:
		if n.Kind == token.INT {
			if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				g.add(n, OpConstant, n.Pos(), n.End(), strconv.FormatInt(v+1, 10))
				if v > 0 {
					g.add(n, OpConstant, n.Pos(), n.End(), strconv.FormatInt(v-1, 10))
				}
			}
		}
	case *ast.Ident:
		if obj, ok := g.p.info.Uses[n]; ok && obj.Parent() == types.Universe {
			switch n.Name {
			case "true":
				g.add(n, OpConstant, n.Pos(), n.End(), "false")
			case "false":
				g.add(n, OpConstant, n.Pos(), n.End(), "true")
			}
		}
	case *ast.AssignStmt:
		if n.Tok != token.DEFINE {
			g.add(n, OpDrop, n.Pos(), n.End(), "")
		}
		g.offByOne(n.Rhs...)
		if len(n.Lhs) == len(n.Rhs) {
			g.swapAdjacent(n, n.Rhs)
		}
	case *ast.IncDecStmt:
		g.add(n, OpDrop, n.Pos(), n.End(), "")
	case *ast.ExprStmt:
		if _, ok := n.X.(*ast.CallExpr); ok {
			g.add(n, OpDrop, n.Pos(), n.End(), "")
		}
	case *ast.ReturnStmt:
		g.offByOne(n.Results...)
	case *ast.IndexExpr:
		g.offByOne(n.Index)
	case *ast.CompositeLit:
		var vals []ast.Expr
		for _, e := range n.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				e = kv.Value
			}
			vals = append(vals, e)
		}
		g.swapAdjacent(n, vals)
	}
	return true
}

// offByOne adds x+1 and x-1 for each integer expression of es: the
// values assigned, returned and indexed with (arguments and fields are
// left alone, to keep the count of mutants a sweep can run).
func (g *gen) offByOne(es ...ast.Expr) {
	for _, e := range es {
		if !g.isInteger(e) {
			continue
		}
		t := g.text(e)
		g.add(e, OpOffByOne, e.Pos(), e.End(), "("+t+" + 1)")
		g.add(e, OpOffByOne, e.Pos(), e.End(), "("+t+" - 1)")
	}
}

// swapAdjacent swaps each pair of neighbours of es that share a type.
func (g *gen) swapAdjacent(n ast.Node, es []ast.Expr) {
	for i := 0; i+1 < len(es); i++ {
		a, b := es[i], es[i+1]
		if !g.sameType(a, b) {
			continue
		}
		// The edit spans both, keeping what lies between them.
		mid := string(g.src[g.off(a.End()):g.off(b.Pos())])
		g.add(n, OpSwap, a.Pos(), b.End(), g.text(b)+mid+g.text(a))
	}
}

// earlyReturns adds the function returning at once: with zero values (or
// bare, for no results), and with its first return statement when that
// reads only parameters and package-level names.
func (g *gen) earlyReturns(fd *ast.FuncDecl) {
	if len(fd.Body.List) == 0 {
		return
	}
	at := fd.Body.Lbrace + 1
	var zero string
	if fd.Type.Results == nil || len(fd.Type.Results.List) == 0 || fd.Type.Results.List[0].Names != nil {
		zero = "return"
	} else {
		var zs []string
		for _, f := range fd.Type.Results.List {
			z, ok := g.zeroOf(f.Type)
			if !ok {
				zs = nil
				break
			}
			for range max(1, len(f.Names)) {
				zs = append(zs, z)
			}
		}
		if zs != nil {
			zero = "return " + strings.Join(zs, ", ")
		}
	}
	if zero != "" {
		g.add(fd.Body, OpEarlyReturn, at, at, " "+zero+";")
	}
	var first *ast.ReturnStmt
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if r, ok := n.(*ast.ReturnStmt); ok && first == nil {
			first = r
		}
		_, lit := n.(*ast.FuncLit)
		return first == nil && !lit
	})
	if first == nil || len(first.Results) == 0 || !g.readsOnlyOuter(first, fd) {
		return
	}
	if r := "return " + g.exprList(first.Results); r != zero && first != fd.Body.List[0] && !g.allZero(first.Results) {
		g.add(fd.Body, OpEarlyReturn, at, at, " "+r+";")
	}
}

// allZero says whether every expression of es is a zero constant or nil,
// as the zero-value early return already has them.
func (g *gen) allZero(es []ast.Expr) bool {
	for _, e := range es {
		tv := g.p.info.Types[e]
		switch {
		case tv.IsNil():
		case tv.Value != nil && (tv.Value.ExactString() == "0" || tv.Value.ExactString() == "false" || tv.Value.ExactString() == `""`):
		default:
			return false
		}
	}
	return true
}

func (g *gen) exprList(es []ast.Expr) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, g.text(e))
	}
	return strings.Join(parts, ", ")
}

// readsOnlyOuter says whether n names only parameters, the receiver and
// package-level or universe objects of fd.
func (g *gen) readsOnlyOuter(n ast.Node, fd *ast.FuncDecl) bool {
	params := map[types.Object]bool{}
	lists := []*ast.FieldList{fd.Recv, fd.Type.Params}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, f := range l.List {
			for _, id := range f.Names {
				params[g.p.info.Defs[id]] = true
			}
		}
	}
	ok := true
	ast.Inspect(n, func(n ast.Node) bool {
		id, isID := n.(*ast.Ident)
		if !isID {
			return ok
		}
		obj := g.p.info.Uses[id]
		if obj == nil || obj.Parent() == nil {
			return ok // a field or method name: its selector's X decides
		}
		if !params[obj] && obj.Parent() != types.Universe && obj.Parent() != obj.Pkg().Scope() {
			ok = false
		}
		return ok
	})
	return ok
}

// zeroOf returns the zero value of a result type as written.
func (g *gen) zeroOf(t ast.Expr) (string, bool) {
	typ := g.typeOf(t)
	if typ == nil {
		return "", false
	}
	switch u := typ.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false", true
		case u.Info()&types.IsString != 0:
			return `""`, true
		case u.Info()&types.IsNumeric != 0:
			return "0", true
		}
	case *types.Pointer, *types.Slice, *types.Map, *types.Interface, *types.Signature, *types.Chan:
		return "nil", true
	case *types.Struct, *types.Array:
		return g.text(t) + "{}", true
	}
	return "", false
}

// Path returns the absolute path of m's file.
func (s *Set) Path(m Mutant) string { return filepath.Join(s.Dir, m.File) }
