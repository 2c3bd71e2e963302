package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/srqconform/srqconform/drivers"
	"github.com/srqconform/srqconform/drivers/emu"
)

// connModes are the values -conn takes (drivers/cgo reads them).
var connModes = []string{"verbs", "rdmacm"}

// checkDevice refuses device flags that do not fit the driver before any
// work: a -conn that is not a connection mode or is given to the emulator,
// -deviations given to the cgo driver, or a -deviations list with an empty
// or unknown entry (the emulator then opens once, to check values and
// conflicts).
func (d *deviceFlags) checkDevice() error {
	if err := d.check(); err != nil {
		return err
	}
	if d.conn != "" && !slices.Contains(connModes, d.conn) {
		return fmt.Errorf("unknown connection mode %q for -conn: want %s", d.conn, strings.Join(connModes, " or "))
	}
	if d.driver == "cgo" {
		if d.deviations != "" {
			return fmt.Errorf("-deviations %q: only the emulator (-driver emu) plays deviations, the driver is %s", d.deviations, d.driver)
		}
		return nil
	}
	if d.driver != "emu" {
		return nil // a driver a test registers
	}
	if d.conn != "" {
		return fmt.Errorf("-conn %s: the emulator's peers need no connection; -conn is for -driver cgo", d.conn)
	}
	return checkDeviations(d.deviations, d.config())
}

// checkDeviations checks a -deviations list for the emulator.
func checkDeviations(list string, cfg drivers.Config) error {
	if list == "" {
		return nil
	}
	known := map[string]bool{}
	for _, d := range emu.Catalogue() {
		known[string(d.Name)] = true
	}
	for s := range emu.Sets() {
		known[s] = true
	}
	for i, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		base, _, _ := strings.Cut(e, "=")
		switch {
		case e == "":
			return fmt.Errorf("-deviations %q: entry %d is empty; want comma-separated deviation or set names (srqconform deviations lists them)", list, i+1)
		case !known[base]:
			return fmt.Errorf("-deviations: unknown deviation or set %q (srqconform deviations lists them)", e)
		}
	}
	dev, err := emu.New().Open(context.Background(), cfg)
	if err != nil {
		return fmt.Errorf("-deviations %q: %w", list, err)
	}
	return dev.Close()
}

// cmdDeviations is srqconform deviations: the emulator's sets, then every
// behaviour and mutant, one line each.
func cmdDeviations(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("deviations", stdout, stderr, "deviations [-kind behaviour|mutant|race-mutant]")
	kind := fs.String("kind", "", "list only this kind: "+strings.Join(deviationKinds(), ", ")+" (default: every kind, and the sets)")
	if ok, code := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "deviations takes no arguments, got %q", fs.Args())
	}
	if *kind != "" && !slices.Contains(deviationKinds(), *kind) {
		return fail(stderr, "unknown kind %q: want one of %s", *kind, strings.Join(deviationKinds(), ", "))
	}
	if *kind == "" {
		sets := emu.Sets()
		var names []string
		for s := range sets {
			names = append(names, s)
		}
		sort.Strings(names)
		for _, s := range names {
			var ds []string
			for _, d := range sets[s] {
				ds = append(ds, string(d))
			}
			fmt.Fprintf(stdout, "%-28s %-11s %-24s %s\n", s, "set", "profile "+s, strings.Join(ds, ","))
		}
	}
	for _, d := range emu.Catalogue() {
		if *kind != "" && d.Kind != *kind {
			continue
		}
		fmt.Fprintf(stdout, "%-28s %-11s %-24s %s\n", d.Name, d.Kind, strings.Join(d.Breaks(), ","), d.Description)
	}
	return exitOK
}

// deviationKinds lists the kinds of deviation the catalogue holds.
func deviationKinds() []string {
	var kinds []string
	for _, d := range emu.Catalogue() {
		if !slices.Contains(kinds, d.Kind) {
			kinds = append(kinds, d.Kind)
		}
	}
	return kinds
}
