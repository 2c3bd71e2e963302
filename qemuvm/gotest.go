package qemuvm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// guestPkgDir is where RunGoTest places the package's testdata and
// runs the test binary, mirroring go test's working directory.
const guestPkgDir = "/gotest/pkg"

// BuildGoTest compiles the tests of the Go package in pkgDir into a
// test binary in outDir (go test -c) and returns the binary's path.
// buildFlags are passed to go test before -c, e.g. "-tags=rxe" or
// "-race". Set CGO_ENABLED in the environment as the package needs.
func BuildGoTest(ctx context.Context, pkgDir, outDir string, buildFlags ...string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", &MissingToolError{Tool: "go", Package: "golang (or a Go toolchain in PATH)"}
	}
	abs, err := filepath.Abs(pkgDir)
	if err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("vm: Go package directory %s: expected an existing directory (stat error: %v)", pkgDir, err)
	}
	out := filepath.Join(outDir, filepath.Base(abs)+".test")
	args := append([]string{"test"}, buildFlags...)
	args = append(args, "-c", "-o", out, ".")
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = abs
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("vm: go %s (in %s): %v; output:\n%s", strings.Join(args, " "), abs, err, tail(string(msg), 30))
	}
	if _, err := os.Stat(out); err != nil {
		return "", fmt.Errorf("vm: go %s (in %s) succeeded but wrote no binary at %s; does the package have tests?", strings.Join(args, " "), abs, out)
	}
	return out, nil
}

// RunGoTest builds the tests of the Go package in pkgDir and runs the
// test binary inside the guest with testArgs (test binary flags such as
// "-test.v", "-test.run=^TestSRQ$"). As under go test, the working
// directory holds a copy of the package's testdata directory, so
// relative testdata paths work. opts.Program, opts.Args and opts.Dir are set by RunGoTest; the
// rest of opts (kernel, timeout, cache) is used as given. Test output
// is in Result.Output and the binary's exit status (0 pass, 1 fail) in
// Result.ExitCode.
func RunGoTest(ctx context.Context, opts Options, pkgDir string, testArgs []string, buildFlags ...string) (*Result, error) {
	tmp, err := os.MkdirTemp("", "srqconform-gotest-")
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin, err := BuildGoTest(ctx, pkgDir, tmp, buildFlags...)
	if err != nil {
		return nil, err
	}
	opts.Program = bin
	opts.Args = testArgs
	opts.Dir = guestPkgDir
	td := filepath.Join(pkgDir, "testdata")
	if st, err := os.Stat(td); err == nil && st.IsDir() {
		extra := map[string]string{guestPkgDir + "/testdata": td}
		for k, v := range opts.ExtraFiles {
			extra[k] = v
		}
		opts.ExtraFiles = extra
	}
	return Run(ctx, opts)
}
