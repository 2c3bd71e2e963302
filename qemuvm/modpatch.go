package qemuvm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Patch is a patch to a software RDMA driver's sources, read from a
// file.
type Patch struct {
	// File is the patch's host path; Name its base name.
	File string `json:"-"`
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of the patch file's bytes.
	SHA256 string `json:"sha256"`
	// Strip is the -p level that makes its paths relative to the
	// driver's directory: 1 for a/rxe_resp.c, 5 for
	// a/drivers/infiniband/sw/rxe/rxe_resp.c.
	Strip int `json:"strip"`
	// Files are the files it touches, relative to the driver's directory.
	Files []string `json:"files"`
}

// String is "NAME (sha256 0123456789ab)".
func (p Patch) String() string { return fmt.Sprintf("%s (sha256 %.12s)", p.Name, p.SHA256) }

// ReadPatch reads a patch for provider's driver (rxe or siw) and finds
// how its paths are written: relative to the driver's directory
// (a/rxe_resp.c, or rxe_resp.c without a prefix) or to the kernel tree
// (a/drivers/infiniband/sw/rxe/rxe_resp.c). A patch that touches a file
// outside the driver's directory, or none, is refused: only the driver
// is rebuilt.
func ReadPatch(file, provider string) (Patch, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Patch{}, fmt.Errorf("vm: read patch: %w", err)
	}
	sum := sha256.Sum256(data)
	abs, err := filepath.Abs(file)
	if err != nil {
		return Patch{}, fmt.Errorf("vm: patch %s: %w", file, err)
	}
	p := Patch{File: abs, Name: filepath.Base(file), SHA256: hex.EncodeToString(sum[:])}
	p.Strip, p.Files, err = patchPaths(data, provider)
	if err != nil {
		return Patch{}, fmt.Errorf("vm: patch %s: %w", file, err)
	}
	return p, nil
}

// patchPaths returns the -p level of a unified diff's paths for
// provider's driver directory and the files it touches, relative to that
// directory.
func patchPaths(data []byte, provider string) (int, []string, error) {
	dir, ok := driverDirs[provider]
	if !ok {
		return 0, nil, fmt.Errorf("unknown provider %q; expected rxe or siw", provider)
	}
	strip := -1
	var files []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "+++ ") {
			continue
		}
		name := strings.TrimSpace(line[4:])
		if i := strings.IndexByte(name, '\t'); i >= 0 {
			name = name[:i]
		}
		if name == "/dev/null" {
			continue
		}
		s, rel, err := stripFor(name, dir)
		if err != nil {
			return 0, nil, err
		}
		if strip >= 0 && s != strip {
			return 0, nil, fmt.Errorf("its paths disagree: %q needs -p%d, an earlier one -p%d; expected one way of writing them", name, s, strip)
		}
		strip = s
		if len(files) == 0 || files[len(files)-1] != rel {
			files = append(files, rel)
		}
	}
	if strip < 0 {
		return 0, nil, errors.New("no ---/+++ file lines; expected a unified diff (git format-patch or diff -u)")
	}
	return strip, files, nil
}

// stripFor returns the -p level that makes name relative to the driver
// directory dir (drivers/infiniband/sw/rxe) and the path it leaves.
func stripFor(name, dir string) (int, string, error) {
	parts := strings.Split(path.Clean(name), "/")
	base := path.Base(dir)
	dirParts := strings.Split(dir, "/")
	for i := 0; i+len(dirParts) < len(parts); i++ {
		if strings.Join(parts[i:i+len(dirParts)], "/") == dir {
			return i + len(dirParts), strings.Join(parts[i+len(dirParts):], "/"), nil
		}
	}
	switch {
	case len(parts) == 1:
		return 0, parts[0], nil
	case len(parts) == 2 && (parts[0] == "a" || parts[0] == "b"):
		return 1, parts[1], nil
	case len(parts) == 2 && parts[0] == base:
		return 1, parts[1], nil
	}
	return 0, "", fmt.Errorf("it touches %s, outside %s; expected only the driver's files, as a/%s_x.c or a/%s/%s_x.c (only the driver is rebuilt)", name, dir, base, dir, base)
}

// PatchError is a patch that does not apply to the driver's sources.
type PatchError struct {
	Patch Patch
	// First is patch's line about the first failure ("Hunk #2 FAILED
	// at 812."); Hunk is that hunk's text, from the reject file.
	First string
	Hunk  string
}

// Error implements error: the first line says which patch and hunk.
func (e *PatchError) Error() string {
	s := fmt.Sprintf("patch %s does not apply to the kernel's own sources: %s", e.Patch, e.First)
	if e.Hunk != "" {
		s += "\n" + e.Hunk
	}
	return s
}

var (
	hunkFailRe = regexp.MustCompile(`^Hunk #\d+ FAILED at \d+`)
	patchingRe = regexp.MustCompile(`^(?:patching|checking) file '?([^']+)'?$`)
)

// patchFailure finds the first failure in GNU patch's output and the
// first hunk of its reject file's text.
func patchFailure(out, rej string) (first, hunk string) {
	file := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if m := patchingRe.FindStringSubmatch(l); m != nil {
			file = m[1]
			continue
		}
		failed := hunkFailRe.MatchString(l) || strings.HasPrefix(l, "can't find file") ||
			strings.Contains(l, "Reversed (or previously applied) patch detected") ||
			strings.Contains(l, "malformed patch") || strings.Contains(l, "Only garbage")
		if failed {
			first = l
			if file != "" {
				first += " (in " + file + ")"
			}
			break
		}
	}
	if first == "" {
		first = strings.TrimSpace(tail(out, 3))
	}
	var h []string
	for _, l := range strings.Split(rej, "\n") {
		if strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "***************") {
			if len(h) > 0 && (strings.HasPrefix(l, "@@") && strings.HasPrefix(h[0], "@@") || l == "***************") {
				break
			}
		}
		if len(h) > 0 || strings.HasPrefix(l, "@@") {
			h = append(h, l)
		}
		if len(h) == 25 {
			h = append(h, "...")
			break
		}
	}
	return first, strings.TrimRight(strings.Join(h, "\n"), "\n")
}

// applyPatch applies p in the driver directory dir with GNU patch.
func applyPatch(ctx context.Context, p Patch, dir string) error {
	if _, err := exec.LookPath("patch"); err != nil {
		return &MissingToolError{Tool: "patch", Package: "patch", Detail: "applying -patch needs it"}
	}
	rej := filepath.Join(dir, ".srqconform.rej")
	cmd := exec.CommandContext(ctx, "patch", "-d", dir, fmt.Sprintf("-p%d", p.Strip), "--batch", "--forward",
		"--no-backup-if-mismatch", "--reject-file="+rej, "-i", p.File)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rejText, _ := os.ReadFile(rej)
	first, hunk := patchFailure(string(out), string(rejText))
	return &PatchError{Patch: p, First: first, Hunk: hunk}
}

// BuildError is a patched driver that does not compile.
type BuildError struct {
	Provider string
	Suite    string
	Compiler string
	// First is the first compiler error, its path relative to the
	// driver's directory; Excerpt the lines from it on (at most 15), or
	// the output's last lines when no line reads as an error.
	First   string
	Excerpt string
}

// Error implements error: the first line is the first compiler error.
func (e *BuildError) Error() string {
	return fmt.Sprintf("the patched %s driver does not build with %s in the %s chroot: %s\n%s", e.Provider, e.Compiler, e.Suite, e.First, e.Excerpt)
}

var compilerErrRe = regexp.MustCompile(`(?m)^(\S+:\d+(?::\d+)?: (?:fatal )?error: .*|ERROR: modpost: .*)$`)

// newBuildError reads make's output: jobPrefix (the chroot's job
// directory) is cut from paths.
func newBuildError(provider string, r *buildRoot, out, jobPrefix string, runErr error) *BuildError {
	out = strings.ReplaceAll(out, jobPrefix, "")
	e := &BuildError{Provider: provider, Suite: r.Suite, Compiler: r.Compiler}
	lines := strings.Split(out, "\n")
	loc := compilerErrRe.FindStringIndex(out)
	if loc == nil {
		e.First = "make failed (" + runErr.Error() + ") with no compiler error line"
		e.Excerpt = tail(out, 15)
		return e
	}
	e.First = out[loc[0]:loc[1]]
	start := strings.Count(out[:loc[0]], "\n")
	end := min(start+15, len(lines))
	e.Excerpt = strings.TrimRight(strings.Join(lines[start:end], "\n"), "\n")
	return e
}

// ModuleBuild describes a driver module built with patches for one
// Debian kernel.
type ModuleBuild struct {
	// Path is the cached module file (debug info stripped).
	Path string `json:"-"`
	// Provider is rxe or siw; Module the module's name (rdma_rxe, siw).
	Provider string `json:"provider"`
	Module   string `json:"module"`
	Release  string `json:"release"`
	Version  string `json:"version"`
	Suite    string `json:"suite"`
	Compiler string `json:"compiler"`
	Vermagic string `json:"vermagic"`
	// Patches are applied in this order.
	Patches []Patch `json:"patches"`
	// Key is the cache key (ModuleCacheKey).
	Key string `json:"key"`
	// Durations of the build's stages; Total covers them, a build
	// root's making included.
	Durations map[string]time.Duration `json:"durations"`
	Total     time.Duration            `json:"total"`
	// Cached says nothing was built.
	Cached bool `json:"-"`
}

// ModuleCacheKey is the hex key a patched module is cached under: it
// covers the kernel's release and Debian version, the provider and each
// patch's hash, in order.
func ModuleCacheKey(release, version, provider string, patches []Patch) string {
	h := sha256.New()
	fmt.Fprintf(h, "srqconform patched module 1\n%s\n%s\n%s\n", release, version, provider)
	for _, p := range patches {
		fmt.Fprintf(h, "%s\n", p.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PatchedModule returns the provider's module (rdma_rxe.ko, siw.ko) for
// the kernel pk built with opts.Patches, from the cache when it holds
// one for the same kernel, provider and patches. Building makes (once)
// pk's build root (ensureBuildRoot), copies the driver's pristine
// sources, applies the patches and compiles them with the kernel's own
// compiler; a patch that does not apply is a *PatchError, a driver that
// does not build a *BuildError.
func PatchedModule(ctx context.Context, opts Options, pk *PreparedKernel) (*ModuleBuild, error) {
	prov := opts.provider()
	var patches []Patch
	for _, f := range opts.Patches {
		p, err := ReadPatch(f, prov)
		if err != nil {
			return nil, err
		}
		patches = append(patches, p)
	}
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	key := ModuleCacheKey(pk.Release, pk.Version, prov, patches)
	dir := filepath.Join(cache, "modpatch", safeName(prov+"_"+pk.Release)+"_"+key[:16])
	if b, err := readModuleBuild(dir); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(filepath.Join(cache, "modpatch"), 0o755); err != nil {
		return nil, fmt.Errorf("vm: create patched module cache: %w", err)
	}
	unlock, err := lockFile(filepath.Join(cache, "lock-modpatch-"+pk.Suite))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if b, err := readModuleBuild(dir); err == nil { // built while we waited
		return b, nil
	}
	start := time.Now()
	r, err := ensureBuildRoot(ctx, opts, pk, cache)
	if err != nil {
		return nil, err
	}
	b := &ModuleBuild{Provider: prov, Module: moduleNames[prov], Release: pk.Release, Version: pk.Version, Suite: pk.Suite,
		Compiler: r.Compiler, Patches: patches, Key: key, Durations: map[string]time.Duration{}}
	if !r.Cached {
		b.Durations["chroot"] = r.Total
	}
	lap := time.Now()
	ko, job, err := makeModule(ctx, r, prov, patches)
	if job != "" {
		defer os.RemoveAll(job)
	}
	if err != nil {
		return nil, err
	}
	b.Durations["build"] = time.Since(lap).Round(time.Millisecond)
	if out, err := exec.CommandContext(ctx, "strip", "--strip-debug", ko).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("vm: strip --strip-debug %s: %v; output: %s", ko, err, tail(string(out), 5))
	}
	if b.Vermagic, err = checkVermagic(ctx, pk, ko, job); err != nil {
		return nil, err
	}
	b.Total = time.Since(start).Round(time.Millisecond)
	if err := saveModuleBuild(b, ko, dir); err != nil {
		return nil, err
	}
	opts.logf("vm: %s.ko for %s with %d patch(es) built with %s in %v, cached in %s", b.Module, pk.Release, len(patches), b.Compiler, b.Total, dir)
	return b, nil
}

// readModuleBuild reads a cached patched module: module.ko and
// build.json in dir.
func readModuleBuild(dir string) (*ModuleBuild, error) {
	var b ModuleBuild
	if err := readBuild(dir, "module.ko", &b); err != nil {
		return nil, err
	}
	b.Path = filepath.Join(dir, "module.ko")
	b.Cached = true
	return &b, nil
}

// saveModuleBuild stores the module and its description in dir.
func saveModuleBuild(b *ModuleBuild, ko, dir string) error {
	if err := saveBuild(b, ko, "module.ko", dir); err != nil {
		return err
	}
	b.Path = filepath.Join(dir, "module.ko")
	return nil
}
