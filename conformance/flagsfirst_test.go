package conformance_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckAfterTheCallersFlagParse builds and runs a program that parses
// its own flags and then calls Check outside go test: the run must not
// panic on the testing flags rapid reads (it did: "Short called before
// Init").
func TestCheckAfterTheCallersFlagParse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "flagsfirst")
	out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/flagsfirst").CombinedOutput()
	require.NoError(t, err, "go build ./testdata/flagsfirst: %s", out)
	out, err = exec.Command(bin, "-cases", "5").CombinedOutput()
	require.NoError(t, err, "flagsfirst -cases 5: %s", out)
	require.True(t, strings.HasPrefix(string(out), "cases 5 conformant true"), "flagsfirst printed %q, want cases 5 conformant true", out)
}
