package qemuvm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const siwPatch = `From 7bd6 Mon Sep 17 00:00:00 2001
Subject: [PATCH] siw: fix

diff --git a/providers/siw/siw.c b/providers/siw/siw.c
--- a/providers/siw/siw.c
+++ b/providers/siw/siw.c
@@ -1 +1 @@
-a
+b
`

const verbsPatch = `--- a/libibverbs/verbs.c	2026-11-26 12:00:00
+++ b/libibverbs/verbs.c	2026-11-26 12:00:00
@@ -1 +1 @@
-a
+b
--- a/providers/rxe/rxe.c
+++ b/providers/rxe/rxe.c
@@ -1 +1 @@
-a
+b
--- a/docs/new.md
+++ /dev/null
`

func TestPatchTargets(t *testing.T) {
	if got, want := patchedFiles(verbsPatch), []string{"libibverbs/verbs.c", "providers/rxe/rxe.c"}; !slices.Equal(got, want) {
		t.Errorf("patchedFiles = %q; want %q", got, want)
	}
	for _, c := range []struct {
		provider string
		patches  []string
		want     []string
	}{
		{"siw", []string{siwPatch}, []string{"providers/siw/all"}},
		{"siw", nil, []string{"providers/siw/all"}},
		{"siw", []string{siwPatch, verbsPatch}, []string{"providers/siw/all", "libibverbs/all", "providers/rxe/all"}},
		{"rxe", []string{verbsPatch}, []string{"providers/rxe/all", "libibverbs/all"}},
	} {
		if got := patchTargets(c.provider, c.patches); !slices.Equal(got, c.want) {
			t.Errorf("patchTargets(%s, %d patches) = %q; want %q", c.provider, len(c.patches), got, c.want)
		}
	}
	b := &RDMACoreBuild{Targets: []string{"providers/siw/all", "libibverbs/all"}}
	for base, want := range map[string]bool{"libsiw-rdmav34.so": true, "libibverbs.so.1.14.56.1": true, "librxe-rdmav34.so": false, "librdmacm.so.1": false} {
		if got := b.wants(base); got != want {
			t.Errorf("wants(%s) with targets %q = %v; want %v", base, b.Targets, got, want)
		}
	}
}

// Output of the build script as patch, cmake and ninja print it.
const (
	applyFailed = `@@stage unpack
@@stage apply patches/000-ok.patch
patching file providers/siw/siw.c
@@stage apply patches/001-stale.patch
patching file providers/siw/siw.h
Hunk #1 succeeded at 40 (offset 2 lines).
patching file providers/siw/siw.c
Hunk #2 FAILED at 681.
Hunk #3 FAILED at 700.
2 out of 3 hunks FAILED -- saving rejects to file providers/siw/siw.c.rej
`
	applyReversed = `@@stage apply patches/000-fix.patch
patching file providers/siw/siw.c
Reversed (or previously applied) patch detected!  Skipping patch.
1 out of 1 hunk ignored -- saving rejects to file providers/siw/siw.c.rej
`
	buildFailed = `@@stage configure
@@stage build
ninja: Entering directory 'out'
[1/12] Building C object util/CMakeFiles/rdma_util.dir/util.c.o
[2/12] Building C object providers/siw/CMakeFiles/siw-rdmav34.dir/siw.c.o
FAILED: providers/siw/CMakeFiles/siw-rdmav34.dir/siw.c.o
/usr/bin/cc -Iinclude -O2 -c ../tree/providers/siw/siw.c
../tree/providers/siw/siw.c: In function 'siw_post_recv':
../tree/providers/siw/siw.c:683:13: error: 'struct siw_qp' has no member named 'srqq'
  683 |         if (qp->srqq) {
      |               ^~
../tree/providers/siw/siw.c:690:1: error: expected ';' before '}' token
ninja: build stopped: subcommand failed.
`
	configureFailed = `@@stage configure
-- The C compiler identification is GNU 14.2.0
CMake Error at CMakeLists.txt:489 (pkg_check_modules):
  A required package was not found
Call Stack (most recent call first):
  CMakeLists.txt:489 (pkg_check_modules)
`
)

// TestBuildFailureExcerpts: a patch that does not apply names the patch
// file given and its first failing hunk; a build that fails gives the
// first compiler error; cmake's first error otherwise.
func TestBuildFailureExcerpts(t *testing.T) {
	b := &RDMACoreBuild{Suite: "trixie", Version: "56.1-1"}
	patches := []string{"/p/ok.patch", "/p/stale.patch"}
	for _, c := range []struct {
		out, stage, patch, excerpt string
	}{
		{applyFailed, "apply", "/p/stale.patch", "patching file providers/siw/siw.c: Hunk #2 FAILED at 681."},
		{applyReversed, "apply", "/p/ok.patch", "patching file providers/siw/siw.c: Reversed (or previously applied) patch detected!  Skipping patch."},
		{buildFailed, "build", "", "../tree/providers/siw/siw.c:683:13: error: 'struct siw_qp' has no member named 'srqq'\n  683 |         if (qp->srqq) {\n      |               ^~"},
		{configureFailed, "configure", "", "CMake Error at CMakeLists.txt:489 (pkg_check_modules):\n  A required package was not found\nCall Stack (most recent call first):\n  CMakeLists.txt:489 (pkg_check_modules)"},
	} {
		err := buildFailure(c.out, b, patches)
		var pe *RDMACorePatchError
		if !errors.As(err, &pe) {
			t.Errorf("buildFailure(%.30q) = %v; want an RDMACorePatchError", c.out, err)
			continue
		}
		if pe.Stage != c.stage || pe.Patch != c.patch || pe.Excerpt != c.excerpt {
			t.Errorf("buildFailure(%.30q) = stage %q, patch %q, excerpt %q; want %q, %q, %q", c.out, pe.Stage, pe.Patch, pe.Excerpt, c.stage, c.patch, c.excerpt)
		}
		if !strings.Contains(err.Error(), "56.1-1 of trixie") {
			t.Errorf("error %q does not name the rdma-core and suite", err)
		}
	}
	// A failure before any patch (the source did not unpack) is no
	// patch's fault: a plain error with the output's end.
	err := buildFailure("@@stage unpack\ndpkg-source: error: cannot read src/rdma-core_56.1-1.dsc\n", b, patches)
	var pe *RDMACorePatchError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("buildFailure at unpack = %v; want a plain error quoting dpkg-source", err)
	}
	if got := firstCompilerError("FAILED: lib/libsiw-rdmav34.so\ncc -o lib/libsiw-rdmav34.so\n/usr/bin/ld: undefined reference to `foo'\ncollect2: ld returned 1 exit status\n"); !strings.Contains(got, "undefined reference") {
		t.Errorf("firstCompilerError of a link failure = %q; want the linker's line", got)
	}
}

// TestPatchedUserspaceRefusesBadInput: no build starts for the host's
// rdma-core, a missing patch or a file that is not a diff.
func TestPatchedUserspaceRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	notDiff := filepath.Join(dir, "notes.txt")
	os.WriteFile(notDiff, []byte("just words\n"), 0o644)
	suite := &Userspace{Source: RDMACoreSuite, Suite: "sid", Root: dir}
	opts := Options{CacheDir: filepath.Join(dir, "cache")}
	for _, c := range []struct {
		base    *Userspace
		patch   string
		wantErr string
	}{
		{&Userspace{Source: RDMACoreHost, RDMACoreVersion: "44.0-2"}, notDiff, "expected -rdma-core suite"},
		{suite, filepath.Join(dir, "missing.patch"), "no such file"},
		{suite, notDiff, `has no "+++ " line`},
	} {
		_, err := PatchedUserspace(context.Background(), opts, c.base, "siw", []string{c.patch})
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("PatchedUserspace(%s, %s) = %v; want an error containing %q", c.base.Source, filepath.Base(c.patch), err, c.wantErr)
		}
	}
	if _, err := os.Stat(opts.CacheDir); err == nil {
		t.Errorf("PatchedUserspace made the cache %s for bad input; want nothing done", opts.CacheDir)
	}
}

// TestPatchedUserspaceFindsRebuiltFirst: the guest gets the rebuilt
// provider, and the suite's files where nothing was rebuilt.
func TestPatchedUserspaceFindsRebuiltFirst(t *testing.T) {
	suiteRoot, build := t.TempDir(), t.TempDir()
	writeFiles(t, suiteRoot, map[string]string{
		"usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so": "suite siw",
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1":              "suite verbs",
	})
	writeFiles(t, build, map[string]string{"root/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so": "patched siw"})
	u := (&Userspace{Source: RDMACoreSuite, Suite: "sid", RDMACoreVersion: "65.0-1.1", Root: suiteRoot}).
		withBuild(&RDMACoreBuild{Dir: build, PatchNames: []string{"fix.patch"}})
	for p, want := range map[string]string{
		"/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so": filepath.Join(build, "root/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so"),
		"/lib/x86_64-linux-gnu/libibverbs.so.1":                  filepath.Join(suiteRoot, "usr/lib/x86_64-linux-gnu/libibverbs.so.1"),
	} {
		if got := u.find(p); got != want {
			t.Errorf("find(%s) = %q; want %q", p, got, want)
		}
	}
	if s := u.String(); s != "65.0-1.1 (sid) + fix.patch" {
		t.Errorf("String() = %q; want %q", s, "65.0-1.1 (sid) + fix.patch")
	}
}

// TestIntegrationRDMACorePatch builds libsiw from the first of
// SRQCONFORM_VM_SUITES' rdma-core source with the repository's libsiw
// fix, and checks that a patch whose context is not in the source is
// refused with its failing hunk. It needs root, mmdebstrap and the
// Debian mirror the first time (a few minutes), and runs only with
// SRQCONFORM_VM_TEST=1.
func TestIntegrationRDMACorePatch(t *testing.T) {
	if os.Getenv("SRQCONFORM_VM_TEST") != "1" {
		t.Skip("set SRQCONFORM_VM_TEST=1 to build rdma-core in a chroot")
	}
	suite := testSuites()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var log strings.Builder
	opts := Options{CacheDir: os.Getenv("SRQCONFORM_VM_CACHE"), Log: &log}
	base, err := SuiteUserspace(ctx, opts, suite)
	if err != nil {
		t.Fatalf("SuiteUserspace(%s): %v", suite, err)
	}
	fix, err := filepath.Abs("../fixes/libsiw-post-recv-srq.patch")
	if err != nil {
		t.Fatal(err)
	}
	u, err := PatchedUserspace(ctx, opts, base, "siw", []string{fix})
	if err != nil {
		t.Fatalf("PatchedUserspace(%s, libsiw fix): %v\nlog:\n%s", suite, err, log.String())
	}
	lib := u.find("/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so")
	if !strings.HasPrefix(lib, u.Patched.Dir) {
		t.Errorf("the guest's libsiw would be %s; want the rebuilt one under %s", lib, u.Patched.Dir)
	}
	t.Logf("%s: %s in %v (cached %v, Debian's changes %v)", u, strings.Join(u.Patched.Libraries, " "), u.Patched.Total, u.Patched.Cached, u.Patched.Debian)

	stale := filepath.Join(t.TempDir(), "stale.patch")
	os.WriteFile(stale, []byte("--- a/providers/siw/siw.c\n+++ b/providers/siw/siw.c\n@@ -1,3 +1,3 @@\n no such line\n-in libsiw\n+at all\n"), 0o644)
	_, err = PatchedUserspace(ctx, opts, base, "siw", []string{stale})
	var pe *RDMACorePatchError
	if !errors.As(err, &pe) || pe.Stage != "apply" || pe.Patch != stale || !strings.Contains(pe.Excerpt, "Hunk #1 FAILED") {
		t.Errorf("PatchedUserspace(stale patch) = %v; want an apply error naming %s and Hunk #1", err, stale)
	}
}
