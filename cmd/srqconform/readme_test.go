package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeCommand is a srqconform command line from an indented block of
// README.md, with the exit status the README gives it.
type readmeCommand struct {
	line     int    // 1-based line in README.md
	text     string // as written, continuation lines joined
	args     []string
	synopsis bool // a usage line ([-flag ...]), not an example
	want     int  // the exit status the README says (0 unless it says "exit N")
}

var exitSays = regexp.MustCompile(`\bexit (\d+)\b`)

// readmeCommands returns the srqconform commands of README.md's indented
// blocks: lines that start with "go run ./cmd/srqconform", "srqconform" or
// "./srqconform". A comment line just above a command, or at its end, that
// says "exit N" gives its status.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
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
		for _, p := range []string{"go run ./cmd/srqconform ", "srqconform ", "./srqconform "} {
			if r, ok := strings.CutPrefix(text, p); ok {
				rest, found = r, true
				break
			}
		}
		if !found {
			comment = ""
			continue
		}
		c := readmeCommand{line: start + 1, text: text}
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
		require.NoError(t, err, "README.md line %d", c.line)
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
	case len(c.args) > 0 && c.args[0] == "vm":
		return "boots QEMU"
	case strings.Contains(c.text, "-driver cgo"):
		return "needs the cgo driver and a device"
	}
	return ""
}

// TestReadmeExamples runs every srqconform command of README.md that needs
// no hardware, in order, in one temporary directory (later examples use
// the files earlier ones write), and checks its exit status is the one
// the README gives. Usage lines are checked for their command and flags.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command of the README")
	}
	cmds := readmeCommands(t)
	t.Chdir(t.TempDir())
	ran := 0
	for _, c := range cmds {
		if why := needsHardware(c); why != "" {
			t.Logf("README.md:%d: skipped (%s): %s", c.line, why, c.text)
			continue
		}
		if c.synopsis {
			checkSynopsis(t, c)
			continue
		}
		args, redirect := c.args, ""
		if k := len(args) - 2; k >= 0 && args[k] == ">" {
			args, redirect = args[:k], args[k+1] // "> FILE": standard output to a file
		}
		code, out, errs := srq(t, args...)
		assert.Equal(t, c.want, code, "README.md:%d: %s\nstderr:\n%s\nstdout:\n%.2000s", c.line, c.text, errs, out)
		if redirect != "" {
			require.NoError(t, os.WriteFile(redirect, []byte(out), 0o644), "README.md:%d", c.line)
		}
		ran++
	}
	assert.GreaterOrEqual(t, ran, 5, "README.md has fewer runnable examples than it had")
}

// checkSynopsis checks that a usage line's command exists and that every
// flag it names is one the command has.
func checkSynopsis(t *testing.T, c readmeCommand) {
	t.Helper()
	require.NotEmpty(t, c.args, "README.md:%d", c.line)
	verb := c.args[0]
	if !assert.Contains(t, commands, verb, "README.md:%d: %s", c.line, c.text) {
		return
	}
	code, usage, _ := srq(t, verb, "-h")
	require.Equal(t, exitOK, code)
	for _, f := range regexp.MustCompile(`\[(-[a-z-]+)`).FindAllStringSubmatch(strings.Join(c.args, " "), -1) {
		// PrintDefaults puts "  -flag type" or, for a bool, "  -flag\tusage".
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(f[1])+`(\s|$)`, usage, "README.md:%d: srqconform %s has no flag %s", c.line, verb, f[1])
	}
}

func TestReadmeCommandsAreFound(t *testing.T) {
	var texts []string
	for _, c := range readmeCommands(t) {
		texts = append(texts, fmt.Sprintf("%v %d %s", c.synopsis, c.want, strings.Join(c.args, "|")))
	}
	// The parser finds the examples, their statuses, quoting and usage lines.
	assert.Contains(t, texts, "false 1 run|-deviations|mlx5|-replay-dir|cx|-json|mlx5.json")
	assert.Contains(t, texts, "false 0 replay|-deviations||cx/01-QUERY-ATTR.json")
	assert.Contains(t, texts, "false 0 run")
	assert.Contains(t, texts, "true 0 profiles|[-format|text|yaml|json]|[NAME|FILE]")
}

// TestExitStatusesAreDocumented checks that README.md's table and the
// package documentation list every exit status the command uses.
func TestExitStatusesAreDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	doc, err := os.ReadFile("main.go")
	require.NoError(t, err)
	for code, what := range map[int]string{exitOK: "conformant", exitDeviates: "deviations", exitUsage: "usage", exitHarness: "harness", exitInterrupted: "interrupted"} {
		assert.Regexp(t, fmt.Sprintf(`(?m)^\|? *%d *\|[^\n]*%s`, code, what), string(readme), "README.md exit status %d", code)
		assert.Regexp(t, fmt.Sprintf(`(?m)^//\t%d +[^\n]*%s`, code, what), string(doc), "package doc exit status %d", code)
	}
}
