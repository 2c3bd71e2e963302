package qemuvm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// diffOf is a one-hunk unified diff of the file named old/new.
func diffOf(oldName, newName string) string {
	return "--- " + oldName + "\t2026-11-26 12:00:00\n+++ " + newName + "\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
}

func TestReadPatchFindsHowItsPathsAreWritten(t *testing.T) {
	for _, c := range []struct {
		provider, text string
		strip          int
		files          []string
	}{
		{"rxe", diffOf("a/rxe_resp.c", "b/rxe_resp.c"), 1, []string{"rxe_resp.c"}},
		{"rxe", diffOf("a/drivers/infiniband/sw/rxe/rxe_resp.c", "b/drivers/infiniband/sw/rxe/rxe_resp.c"), 5, []string{"rxe_resp.c"}},
		{"rxe", diffOf("drivers/infiniband/sw/rxe/rxe_srq.c", "drivers/infiniband/sw/rxe/rxe_srq.c"), 4, []string{"rxe_srq.c"}},
		{"rxe", diffOf("rxe_srq.c.orig", "rxe_srq.c"), 0, []string{"rxe_srq.c.orig", "rxe_srq.c"}},
		{"rxe", diffOf("rxe/rxe_srq.c", "rxe/rxe_srq.c"), 1, []string{"rxe_srq.c"}},
		{"siw", diffOf("a/drivers/infiniband/sw/siw/siw_verbs.c", "b/drivers/infiniband/sw/siw/siw_verbs.c"), 5, []string{"siw_verbs.c"}},
		{"rxe", "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n---\n" +
			diffOf("a/drivers/infiniband/sw/rxe/rxe_qp.c", "b/drivers/infiniband/sw/rxe/rxe_qp.c") +
			diffOf("a/drivers/infiniband/sw/rxe/rxe_srq.c", "b/drivers/infiniband/sw/rxe/rxe_srq.c"), 5, []string{"rxe_qp.c", "rxe_srq.c"}},
		{"rxe", "--- /dev/null\n+++ b/rxe_new.c\n@@ -0,0 +1 @@\n+x\n", 1, []string{"rxe_new.c"}},
	} {
		f := filepath.Join(t.TempDir(), "x.patch")
		require.NoError(t, os.WriteFile(f, []byte(c.text), 0o644))
		p, err := ReadPatch(f, c.provider)
		if !assert.NoError(t, err, "%s", c.text) {
			continue
		}
		assert.Equal(t, c.strip, p.Strip, "-p level of\n%s", c.text)
		assert.Equal(t, c.files, p.Files, "files of\n%s", c.text)
		assert.Len(t, p.SHA256, 64)
	}
}

func TestReadPatchRefusesWhatItCannotRebuild(t *testing.T) {
	for _, c := range []struct{ provider, text, want string }{
		{"rxe", diffOf("a/include/rdma/ib_verbs.h", "b/include/rdma/ib_verbs.h"), "outside drivers/infiniband/sw/rxe"},
		{"rxe", diffOf("a/drivers/infiniband/sw/siw/siw_verbs.c", "b/drivers/infiniband/sw/siw/siw_verbs.c"), "outside drivers/infiniband/sw/rxe"},
		{"rxe", diffOf("a/rxe_resp.c", "b/rxe_resp.c") + diffOf("a/drivers/infiniband/sw/rxe/rxe_qp.c", "b/drivers/infiniband/sw/rxe/rxe_qp.c"), "disagree"},
		{"rxe", "just some text\n", "expected a unified diff"},
		{"mlx5", diffOf("a/x.c", "b/x.c"), "unknown provider"},
	} {
		f := filepath.Join(t.TempDir(), "x.patch")
		require.NoError(t, os.WriteFile(f, []byte(c.text), 0o644))
		_, err := ReadPatch(f, c.provider)
		if assert.Error(t, err, "%s", c.text) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	_, err := ReadPatch(filepath.Join(t.TempDir(), "none.patch"), "rxe")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestModuleCacheKeyCoversKernelProviderAndEachPatch(t *testing.T) {
	p1, p2 := Patch{SHA256: strings.Repeat("1", 64)}, Patch{SHA256: strings.Repeat("2", 64)}
	base := ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-1", "rxe", []Patch{p1, p2})
	assert.Equal(t, base, ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-1", "rxe", []Patch{{Name: "renamed", SHA256: p1.SHA256}, p2}), "the key follows the content, not the name")
	seen := map[string]string{base: "base"}
	for name, k := range map[string]string{
		"release":  ModuleCacheKey("7.2.13+deb14-amd64", "6.12.118-1", "rxe", []Patch{p1, p2}),
		"version":  ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-2", "rxe", []Patch{p1, p2}),
		"provider": ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-1", "siw", []Patch{p1, p2}),
		"order":    ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-1", "rxe", []Patch{p2, p1}),
		"one less": ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-1", "rxe", []Patch{p1}),
		"none":     ModuleCacheKey("6.12.118+deb13-amd64", "6.12.118-1", "rxe", nil),
	} {
		if prev, dup := seen[k]; dup {
			t.Errorf("changing the %s gives the key of %s", name, prev)
		}
		seen[k] = name
	}
}

func TestPatchFailureNamesTheFirstFailingHunk(t *testing.T) {
	out := "patching file rxe_resp.c\nHunk #1 succeeded at 40 (offset 2 lines).\nHunk #2 FAILED at 812.\n1 out of 2 hunks FAILED -- saving rejects to file .srqconform.rej\npatching file rxe_srq.c\nHunk #1 FAILED at 10.\n"
	rej := "--- rxe_resp.c\n+++ rxe_resp.c\n@@ -812,3 +812,3 @@\n ctx\n-old\n+new\n@@ -900,1 +900,1 @@\n-x\n+y\n"
	first, hunk := patchFailure(out, rej)
	assert.Equal(t, "Hunk #2 FAILED at 812. (in rxe_resp.c)", first)
	assert.Equal(t, "@@ -812,3 +812,3 @@\n ctx\n-old\n+new", hunk)

	first, _ = patchFailure("can't find file to patch at input line 5\nPerhaps you used the wrong -p or --strip option?\n", "")
	assert.Equal(t, "can't find file to patch at input line 5", first)
	first, _ = patchFailure("patching file rxe_srq.c\nReversed (or previously applied) patch detected!  Skipping patch.\n", "")
	assert.Contains(t, first, "Reversed (or previously applied) patch detected")
}

func TestApplyPatchReportsTheHunkThatDoesNotApply(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("no GNU patch on this host")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rxe_srq.c"), []byte("a\nb\nc\n"), 0o644))
	good := filepath.Join(t.TempDir(), "good.patch")
	require.NoError(t, os.WriteFile(good, []byte(diffOf("a/rxe_srq.c", "b/rxe_srq.c")), 0o644))
	p, err := ReadPatch(good, "rxe")
	require.NoError(t, err)
	require.NoError(t, applyPatch(context.Background(), p, dir))
	b, _ := os.ReadFile(filepath.Join(dir, "rxe_srq.c"))
	assert.Equal(t, "a\nc\nc\n", string(b))

	// The same patch again: its context no longer matches.
	bad := filepath.Join(t.TempDir(), "bad.patch")
	require.NoError(t, os.WriteFile(bad, []byte("--- a/rxe_srq.c\n+++ b/rxe_srq.c\n@@ -1,2 +1,2 @@\n q\n-r\n+s\n"), 0o644))
	p, err = ReadPatch(bad, "rxe")
	require.NoError(t, err)
	err = applyPatch(context.Background(), p, dir)
	var pe *PatchError
	require.True(t, errors.As(err, &pe), "applyPatch: %v; want a *PatchError", err)
	assert.Contains(t, pe.First, "Hunk #1 FAILED at 1")
	assert.Contains(t, pe.Hunk, "-r")
	assert.True(t, strings.HasPrefix(err.Error(), "patch bad.patch (sha256 "), "first line: %s", err)
}

func TestBuildErrorIsTheFirstCompilerError(t *testing.T) {
	r := &buildRoot{Suite: "trixie", Compiler: "gcc-14"}
	out := `make: Entering directory '/usr/src/linux-headers-6.12.118+deb13-amd64'
  CC [M]  /build/job-123/rxe_srq.o
/build/job-123/rxe_srq.c: In function 'rxe_srq_from_init':
/build/job-123/rxe_srq.c:77:9: error: 'foo' undeclared (first use in this function)
   77 |         foo = 1;
      |         ^~~
/build/job-123/rxe_srq.c:80:2: error: expected ';' before '}' token
make[2]: *** [scripts/Makefile.build:243: /build/job-123/rxe_srq.o] Error 1
`
	e := newBuildError("rxe", r, out, "/build/job-123/", errors.New("exit status 2"))
	assert.Equal(t, "rxe_srq.c:77:9: error: 'foo' undeclared (first use in this function)", e.First)
	assert.True(t, strings.HasPrefix(e.Excerpt, e.First+"\n   77 |"), "excerpt:\n%s", e.Excerpt)
	assert.NotContains(t, e.Excerpt, "/build/job-123/")
	assert.Contains(t, strings.SplitN(e.Error(), "\n", 2)[0], "does not build with gcc-14 in the trixie chroot: rxe_srq.c:77:9: error:")

	e = newBuildError("rxe", r, "ERROR: modpost: \"rxe_foo\" [/build/job-1/rdma_rxe.ko] undefined!\n", "/build/job-1/", errors.New("exit status 2"))
	assert.Equal(t, `ERROR: modpost: "rxe_foo" [rdma_rxe.ko] undefined!`, e.First)

	e = newBuildError("rxe", r, "line1\nline2\nmake: *** no rule\n", "/x/", errors.New("exit status 2"))
	assert.Contains(t, e.First, "no compiler error line")
	assert.Contains(t, e.Excerpt, "make: *** no rule")
}
