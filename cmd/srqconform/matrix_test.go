package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportsMatrixIsRegenerated runs the command reports/matrix.md says
// made it and compares: the file must hold the command's output, with
// only a note of its own between the heading and the tables.
func TestReportsMatrixIsRegenerated(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "reports", "matrix.md"))
	require.NoError(t, err)
	file := string(b)
	m := regexp.MustCompile(`(?s)\n    srqconform matrix (.*?)\n\n`).FindStringSubmatch(file)
	require.NotNil(t, m, "reports/matrix.md names no srqconform matrix command")
	args := []string{"matrix"}
	for _, a := range strings.Fields(strings.ReplaceAll(m[1], "\\\n", " ")) {
		args = append(args, filepath.Join(root, a))
	}
	code, out, errs := srq(t, args...)
	require.Equal(t, exitOK, code, errs)
	cut := strings.Index(out, "\n| |")
	require.Positive(t, cut)
	assert.True(t, strings.HasPrefix(file, out[:cut]), "reports/matrix.md does not start as the command's output")
	assert.True(t, strings.HasSuffix(file, out[cut:]), "reports/matrix.md's tables are not the command's output: regenerate them with %v", args)
}
