package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/srqconform/srqconform/conformance"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeCommand is a srqconform command line from an indented block of
// README.md or a file of docs/, with the exit status the text gives it.
type readmeCommand struct {
	file     string // the document, relative to the repository
	line     int    // 1-based line in file
	text     string // as written, continuation lines joined
	args     []string
	synopsis bool // a usage line ([-flag ...]), not an example
	want     int  // the exit status the README says (0 unless it says "exit N")
}

var exitSays = regexp.MustCompile(`\bexit (\d+)\b`)

// docFiles returns the documents whose commands the tests run, relative
// to the repository: README.md, then docs/*.md in order.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, docs, "filepath.Glob(../../docs/*.md) found no documents")
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, strings.TrimPrefix(d, "../../"))
	}
	return files
}

// readmeCommands returns the srqconform commands of the indented blocks of
// file (relative to the repository): lines that start with "srqconform" or
// "./srqconform". A comment line just above a command, or at its end, that
// says "exit N" gives its status.
func readmeCommands(t *testing.T, file string) []readmeCommand {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", file))
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	var out []readmeCommand
	comment := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "    ") {
			comment = ""
			continue
		}
		text := strings.TrimSpace(l)
		start := i
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if strings.HasPrefix(text, "#") {
			comment += " " + text
			continue
		}
		var rest string
		found := false
		for _, p := range []string{"srqconform ", "./srqconform "} {
			if r, ok := strings.CutPrefix(text, p); ok {
				rest, found = r, true
				break
			}
		}
		if !found {
			comment = ""
			continue
		}
		c := readmeCommand{file: file, line: start + 1, text: text}
		if k := strings.Index(rest, " #"); k >= 0 {
			comment += " " + rest[k:]
			rest = rest[:k]
		}
		if m := exitSays.FindStringSubmatch(comment); m != nil {
			fmt.Sscan(m[1], &c.want)
		}
		comment = ""
		// A synopsis spans lines that are indented further and start with "[".
		for i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "[") && strings.HasPrefix(lines[i+1], "     ") {
			i++
			rest += " " + strings.TrimSpace(lines[i])
		}
		c.synopsis = strings.Contains(rest, "[")
		c.args, err = shellWords(rest)
		require.NoError(t, err, "%s line %d", file, c.line)
		out = append(out, c)
	}
	return out
}

// shellWords splits s as a shell would split words, for the quoting
// README.md uses: single and double quotes, no escapes or expansions.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case r == '$' || r == '\\' || r == '*' || r == '`':
			return nil, fmt.Errorf("%q: %q needs a shell; the README test does not run it", s, r)
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unterminated quote", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// needsHardware reports why a README command cannot run here, or "".
func needsHardware(c readmeCommand) string {
	switch {
	case len(c.args) > 0 && (c.args[0] == "vm" || c.args[0] == "corpus"):
		return "boots QEMU"
	case strings.Contains(c.text, "-driver cgo"):
		return "needs the cgo driver and a device"
	}
	return ""
}

// TestReadmeExamples runs every srqconform command of README.md and of
// docs/*.md that needs no hardware, in order, each document in a temporary
// directory of its own (later examples use the files earlier ones write),
// and checks its exit status is the one the text gives. Usage lines are
// checked for their command and flags.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of the README and docs/")
	}
	for _, file := range docFiles(t) {
		t.Run(file, func(t *testing.T) { runDocExamples(t, file) })
	}
}

// runDocExamples runs the commands of one document, as TestReadmeExamples
// says.
func runDocExamples(t *testing.T, file string) {
	cmds := readmeCommands(t, file)
	t.Chdir(t.TempDir())
	ran := 0
	for _, c := range cmds {
		if c.synopsis {
			checkSynopsis(t, c)
			continue
		}
		if why := needsHardware(c); why != "" {
			t.Logf("%s:%d: skipped (%s): %s", c.file, c.line, why, c.text)
			continue
		}
		args, redirect := c.args, ""
		if k := len(args) - 2; k >= 0 && args[k] == ">" {
			args, redirect = args[:k], args[k+1] // "> FILE": standard output to a file
		}
		code, out, errs := srq(t, args...)
		for try := 1; try < 3 && code != c.want && undecided(errs); try++ {
			// A concurrent history porcupine did not decide within its
			// bound (a busy host, the race detector) is no verdict: the
			// example, whose seed is random, runs again.
			t.Logf("%s:%d: a history left undecided; running the example again: %s", c.file, c.line, errs)
			code, out, errs = srq(t, args...)
		}
		assert.Equal(t, c.want, code, "%s:%d: %s\nstderr:\n%s\nstdout:\n%.2000s", c.file, c.line, c.text, errs, out)
		if redirect != "" {
			require.NoError(t, os.WriteFile(redirect, []byte(out), 0o644), "%s:%d", c.file, c.line)
		}
		ran++
	}
	if file == "README.md" {
		assert.GreaterOrEqual(t, ran, 5, "README.md has fewer runnable examples than it had")
	}
}

// checkSynopsis checks that a usage line's command exists and that every
// flag it names is one the command has.
func checkSynopsis(t *testing.T, c readmeCommand) {
	t.Helper()
	require.NotEmpty(t, c.args, "%s:%d", c.file, c.line)
	verb := c.args[0]
	if !assert.Contains(t, commands, verb, "%s:%d: %s", c.file, c.line, c.text) {
		return
	}
	code, usage, _ := srq(t, verb, "-h")
	require.Equal(t, exitOK, code)
	for _, f := range regexp.MustCompile(`\[(-[a-z-]+)`).FindAllStringSubmatch(strings.Join(c.args, " "), -1) {
		// PrintDefaults puts "  -flag type" or, for a bool, "  -flag\tusage".
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(f[1])+`(\s|$)`, usage, "%s:%d: srqconform %s has no flag %s", c.file, c.line, verb, f[1])
	}
}

func TestReadmeCommandsAreFound(t *testing.T) {
	var texts []string
	for _, c := range append(readmeCommands(t, "README.md"), readmeCommands(t, "docs/cli.md")...) {
		texts = append(texts, fmt.Sprintf("%v %d %s", c.synopsis, c.want, strings.Join(c.args, "|")))
	}
	// The parser finds the examples, their statuses, quoting and usage lines.
	assert.Contains(t, texts, "false 1 run|-deviations|mlx5|-replay-dir|cx|-json|mlx5.json")
	assert.Contains(t, texts, "false 0 replay|-deviations||cx/01-QUERY-ATTR.json")
	assert.Contains(t, texts, "false 0 run")
	assert.Contains(t, texts, "true 0 profiles|[-format|text|yaml|json]|[NAME|FILE]")
}

// TestExitStatusesAreDocumented checks that docs/cli.md's table and the
// package documentation list every exit status the command uses.
func TestExitStatusesAreDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../docs/cli.md")
	require.NoError(t, err)
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for code, what := range map[int]string{exitOK: "conformant", exitDeviates: "deviations", exitUsage: "usage", exitHarness: "harness", exitInterrupted: "interrupted"} {
		assert.Regexp(t, fmt.Sprintf(`(?m)^\|? *%d *\|[^\n]*%s`, code, what), string(readme), "docs/cli.md exit status %d", code)
		assert.Regexp(t, fmt.Sprintf(`(?m)^//\t%d +[^\n]*%s`, code, what), string(doc), "package doc exit status %d", code)
	}
}

// TestDocsBuildTheBinary checks that no document runs the command through
// go run, which turns every non-zero exit status into 1 and does not pass
// signals on (issue 20, item 8).
func TestDocsBuildTheBinary(t *testing.T) {
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join("../..", file))
		require.NoError(t, err)
		for i, l := range strings.Split(string(b), "\n") {
			assert.NotContains(t, l, "go run ./cmd/srqconform", "%s:%d: build the binary once and run ./srqconform", file, i+1)
		}
	}
}

// TestCLIReferenceNamesEveryFlag checks that docs/cli.md has a usage line
// for every command, naming every flag the command's -h lists.
func TestCLIReferenceNamesEveryFlag(t *testing.T) {
	synopsis := map[string]string{}
	for _, c := range readmeCommands(t, "docs/cli.md") {
		if c.synopsis {
			synopsis[c.args[0]] += " " + strings.Join(c.args, " ")
		}
	}
	flagLine := regexp.MustCompile(`(?m)^  (-[a-z-]+)`)
	for _, verb := range commands {
		text, ok := synopsis[verb]
		if !assert.True(t, ok, "docs/cli.md has no usage line for srqconform %s", verb) {
			continue
		}
		code, usage, errs := srq(t, verb, "-h")
		require.Equal(t, exitOK, code, "srqconform %s -h: %s", verb, errs)
		for _, f := range flagLine.FindAllStringSubmatch(usage, -1) {
			assert.Regexp(t, `(^|[\[ |])`+regexp.QuoteMeta(f[1])+`([\] ]|$)`, text, "docs/cli.md: srqconform %s does not name %s", verb, f[1])
		}
	}
}

// TestDocsNumbers checks the counts docs/internals.md gives against the
// code.
func TestDocsNumbers(t *testing.T) {
	b, err := os.ReadFile("../../docs/internals.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(\d+) scenarios`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "docs/internals.md gives no count of scenarios")
	assert.Equal(t, fmt.Sprint(len(conformance.Scenarios())), m[1], "docs/internals.md: scenarios, against len(conformance.Scenarios())")
}

// TestReportsIndexNamesEveryFile checks that reports/README.md names every
// file under reports/ (a name may use shell braces, rxe-{trixie,sid}.md),
// and that every file it names exists.
func TestReportsIndexNamesEveryFile(t *testing.T) {
	b, err := os.ReadFile("../../reports/README.md")
	require.NoError(t, err)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^` ]+)`|\\]\\(([^) ]+)\\)").FindAllStringSubmatch(string(b), -1) {
		for _, name := range expandBraces(m[1] + m[2]) {
			named[name] = true
		}
	}
	var files []string
	require.NoError(t, filepath.WalkDir("../../reports", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("../../reports", path)
		files = append(files, filepath.ToSlash(rel))
		return nil
	}))
	for _, f := range files {
		if f == "README.md" {
			continue
		}
		dir := filepath.Dir(f)
		if strings.HasSuffix(f, ".html") && named[dir+"/"] {
			continue // a directory of HTML pages, named as a whole
		}
		if strings.HasPrefix(f, "concurrent/") && named["concurrent/README.md"] {
			continue // indexed by concurrent/README.md
		}
		assert.True(t, named[f], "reports/README.md does not name reports/%s", f)
	}
	for name := range named {
		if strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".txt") {
			if strings.HasPrefix(name, "../") || strings.HasPrefix(name, ".") {
				continue // outside reports/, or a kind of file (`.json`)
			}
			_, err := os.Stat(filepath.Join("../../reports", name))
			assert.NoError(t, err, "reports/README.md names %s", name)
		}
	}
}

// expandBraces expands the shell brace groups of s: "a-{b,c}.{d,e}" is
// a-b.d, a-b.e, a-c.d and a-c.e.
func expandBraces(s string) []string {
	i := strings.Index(s, "{")
	j := strings.Index(s, "}")
	if i < 0 || j < i {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, expandBraces(s[:i]+alt+s[j+1:])...)
	}
	return out
}
