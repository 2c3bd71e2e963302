package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/srqconform/srqconform/conformance"
)

// outputs are where a run writes its report: the report in format to
// report (standard output when empty), the JSON report to json, and the
// counterexamples' replay files to replayDir.
type outputs struct {
	report, format string
	json           string
	replayDir      string
}

// check makes sure, before a run, that every output can be written: the
// report files can be created (or opened for writing) and the replay
// directory exists or can be made, and takes a file. It leaves existing
// reports as they are.
func (o outputs) check() error {
	for _, f := range []struct{ flag, path string }{{"-o", o.report}, {"-json", o.json}} {
		if err := checkWritable(f.path); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	if err := checkDir(o.replayDir); err != nil {
		return fmt.Errorf("-replay-dir: %w", err)
	}
	return nil
}

// checkWritable makes sure a report can be written to path: an existing
// regular file opens for writing (it is not truncated), a missing one can
// be created (it is created and removed again).
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a directory, want a file", path)
	case err == nil && !st.Mode().IsRegular():
		return nil // a device or pipe: opening it may block or have effects
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("open the output file for writing: %w", err)
		}
		return f.Close()
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("create the output file: %w", err)
		}
		f.Close()
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove the test-created output file: %w", err)
		}
		return nil
	}
	return fmt.Errorf("stat the output file: %w", err)
}

// write writes rep to every output, the JSON report and the replay files
// first, and returns every error met; one output that fails does not stop
// the others.
func (o outputs) write(rep *conformance.Report, stdout, stderr io.Writer) error {
	var errs []error
	if o.json != "" {
		if err := writeReport(o.json, "json", rep, stdout); err != nil {
			errs = append(errs, fmt.Errorf("-json: %w", err))
		}
	}
	if o.replayDir != "" {
		if err := saveReplays(o.replayDir, rep, stderr); err != nil {
			errs = append(errs, fmt.Errorf("-replay-dir: %w", err))
		}
	}
	if err := writeReport(o.report, o.format, rep, stdout); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// where names the outputs a report went to, for a message.
func (o outputs) where() string {
	s := "standard output"
	if o.report != "" {
		s = o.report
	}
	if o.json != "" {
		s += " and " + o.json
	}
	return s
}

// checkDir makes sure dir, when given, is a directory files can be
// created in: it makes it if need be.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".srqconform-check-*")
	if err != nil {
		return fmt.Errorf("create a file in it: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}
