package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/srqconform/srqconform/model"
)

// profileArg resolves the value of a -profile flag: a built-in profile's
// name (srqconform profiles lists them), or else a profile file when the
// value names an existing file, holds a path separator or ends in .json,
// .yaml or .yml (model.LoadProfile reads it). A built-in name wins over a
// file of the same name in the working directory: write ./rxe for that.
func profileArg(s string) (model.Profile, error) {
	if p, err := model.ProfileByName(s); err == nil {
		return p, nil
	}
	if model.LooksLikeProfileFile(s) {
		return model.LoadProfile(s)
	}
	_, err := model.ProfileByName(s)
	return model.Profile{}, fmt.Errorf("%w, or a profile file (.yaml, .yml, .json)", err)
}

// printProfileFile is profiles -format yaml|json NAME: one profile in the
// file format, for a vendor to start from.
func printProfileFile(fs *flag.FlagSet, format string, stdout, stderr io.Writer) int {
	if !slices.Contains(model.ProfileFileFormats, format) {
		return fail(stderr, "unknown format %q: want text, %s", format, strings.Join(model.ProfileFileFormats, " or "))
	}
	if fs.NArg() != 1 {
		return fail(stderr, "profiles -format %s takes one profile name or file, got %d arguments", format, fs.NArg())
	}
	p, err := profileArg(fs.Arg(0))
	if err != nil {
		return fail(stderr, "%v", err)
	}
	b, err := model.MarshalProfile(p, format)
	if err != nil {
		return fail(stderr, "%v", err)
	}
	if _, err := stdout.Write(b); err != nil {
		return fail(stderr, "write profile: %v", err)
	}
	return exitOK
}
