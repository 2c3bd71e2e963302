package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/srqconform/srqconform/model"
)

// flagSet is a command's flags with its synopsis. A bad flag is one line
// on stderr and exit status 2; -h prints the full usage on stdout and
// exit status 0.
type flagSet struct {
	*flag.FlagSet
	synopsis       string
	stdout, stderr io.Writer
}

// newFlagSet returns the flag set of the command name; synopsis is its
// usage line without "srqconform".
func newFlagSet(name string, stdout, stderr io.Writer, synopsis string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis, stdout: stdout, stderr: stderr}
	// The flag package prints the error and the whole usage on a parse
	// error; parse prints them itself.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses the command's flags; it returns false and the exit code on
// -h or an error.
func (fs *flagSet) parse(args []string) (bool, int) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return true, exitOK
	case errors.Is(err, flag.ErrHelp):
		fs.printUsage(fs.stdout)
		return false, exitOK
	}
	fmt.Fprintf(fs.stderr, "srqconform: %v; run 'srqconform %s -h' for the flags\n", err, fs.Name())
	return false, exitUsage
}

// printUsage writes the synopsis and every flag with its default.
func (fs *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: srqconform %s\n\nflags:\n", fs.synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// check refuses a negative port or GID index. Port 0 is the driver's
// default (1).
func (d *deviceFlags) check() error {
	if d.port < 0 {
		return fmt.Errorf("-i (port) is %d, want 1 or more (0: port 1)", d.port)
	}
	if d.gid < 0 {
		return fmt.Errorf("-x (GID index) is %d, want 0 or more", d.gid)
	}
	return nil
}

// durations refuses a negative value of any of the duration flags named.
func (fs *flagSet) durations(names ...string) error {
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil {
			return fmt.Errorf("no flag -%s", n)
		}
		var d time.Duration
		g, ok := f.Value.(flag.Getter)
		if ok {
			d, ok = g.Get().(time.Duration)
		}
		if !ok {
			return fmt.Errorf("flag -%s is not a duration", n)
		}
		if d < 0 {
			return fmt.Errorf("-%s is %v, want 0 or more", n, d)
		}
	}
	return nil
}

// parseRules splits the -rules flag into rule IDs, refusing empty and
// unknown ones.
func parseRules(s string) ([]model.RuleID, error) {
	if s == "" {
		return nil, nil
	}
	var ids []model.RuleID
	for i, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, fmt.Errorf("-rules %q: rule ID %d is empty; want comma-separated rule IDs (see srqconform rules)", s, i+1)
		}
		rule, err := model.ParseRuleID(id)
		if err != nil {
			return nil, fmt.Errorf("unknown rule %q in -rules (see srqconform rules)", id)
		}
		ids = append(ids, rule)
	}
	return ids, nil
}

// set reports whether the flag named was given on the command line.
func (fs *flagSet) set(name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
