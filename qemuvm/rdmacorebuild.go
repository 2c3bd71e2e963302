package qemuvm

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RDMACoreBuild describes rdma-core libraries rebuilt from a suite's
// source with patches applied.
type RDMACoreBuild struct {
	// Suite and Version are the Debian suite and the version of its
	// rdma-core source package the build started from.
	Suite   string `json:"suite"`
	Version string `json:"version"`
	// PatchNames are the patch files' base names, PatchHashes their
	// SHA-256 sums, in the order applied.
	PatchNames  []string `json:"patch_names"`
	PatchHashes []string `json:"patch_hashes"`
	// Debian says Debian's changes (debian/patches) were applied
	// under the patches; false when the mirror had only the upstream
	// tarball.
	Debian bool `json:"debian"`
	// Targets are the ninja targets built (providers/siw/all, ...).
	Targets []string `json:"targets"`
	// Libraries are the rebuilt files, as guest paths.
	Libraries []string `json:"libraries"`
	// Dir is the cached build on the host: Dir/root holds the rebuilt
	// files at their guest paths.
	Dir string `json:"-"`
	// Total is how long the build took; Cached says nothing was built.
	Total  time.Duration `json:"total"`
	Cached bool          `json:"-"`
}

// RDMACorePatchError is a patch that does not apply to the suite's
// rdma-core, or after which it does not build. Excerpt is the first
// failing hunk or compiler error.
type RDMACorePatchError struct {
	Patch   string // the patch file ("" when the build failed after all applied)
	Stage   string // "apply", "configure" or "build"
	Suite   string
	Version string
	Excerpt string
}

// Error implements error.
func (e *RDMACorePatchError) Error() string {
	switch e.Stage {
	case "apply":
		return fmt.Sprintf("vm: patch %s does not apply to rdma-core %s of %s: %s", e.Patch, e.Version, e.Suite, e.Excerpt)
	case "configure":
		return fmt.Sprintf("vm: cmake could not configure rdma-core %s of %s with the patches applied: %s", e.Version, e.Suite, e.Excerpt)
	}
	return fmt.Sprintf("vm: rdma-core %s of %s does not build with the patches applied: %s", e.Version, e.Suite, e.Excerpt)
}

// rdmaCoreChrootPackages are what configuring and building rdma-core's
// libraries needs in the suite's chroot (a subset of its
// Build-Depends, without pandoc, cython and systemd), plus patch and
// xz-utils to unpack the source and apply the patches.
var rdmaCoreChrootPackages = []string{"gcc", "libc6-dev", "cmake", "ninja-build", "pkgconf", "python3",
	"libnl-3-dev", "libnl-route-3-dev", "libudev-dev", "patch", "xz-utils"}

// PatchedUserspace returns base, a suite's rdma-core, with the provider
// library (and libibverbs or librdmacm, when a patch touches them)
// rebuilt from the suite's rdma-core source with patches applied in
// order. The build runs in a chroot of the suite (mmdebstrap; root and
// the Debian mirror needed the first time) and is cached by suite,
// source version and the patches' hashes.
func PatchedUserspace(ctx context.Context, opts Options, base *Userspace, provider string, patches []string) (*Userspace, error) {
	if base.Source != RDMACoreSuite || base.Root == "" {
		return nil, fmt.Errorf("vm: rdma-core patches apply to a suite's rdma-core, and the guest's is %s; expected -rdma-core suite", base)
	}
	var texts []string
	b := &RDMACoreBuild{Suite: base.Suite}
	h := sha256.New()
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("vm: rdma-core patch: %w; expected a patch file (diff -u or git format-patch)", err)
		}
		if !strings.Contains(string(data), "\n+++ ") && !strings.HasPrefix(string(data), "+++ ") {
			return nil, fmt.Errorf("vm: rdma-core patch %s has no \"+++ \" line; expected a unified diff (diff -u or git format-patch)", p)
		}
		sum := sha256.Sum256(data)
		b.PatchNames = append(b.PatchNames, filepath.Base(p))
		b.PatchHashes = append(b.PatchHashes, hex.EncodeToString(sum[:]))
		h.Write(sum[:])
		texts = append(texts, string(data))
	}
	b.Targets = patchTargets(provider, texts)
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	a := &aptState{dir: filepath.Join(cache, "apt-src", base.Suite), opts: opts, debSrc: true}
	unlock, err := lockFile(filepath.Join(cache, "lock-rdma-core-build-"+base.Suite))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := a.ensureLists(ctx, base.Suite); err != nil {
		return nil, err
	}
	src, version, err := rdmaCoreSource(ctx, a)
	if err != nil {
		return nil, err
	}
	b.Version = version
	h.Write([]byte(provider + "\n" + version + "\n" + strings.Join(b.Targets, "\n")))
	dir := filepath.Join(cache, "rdma-core-build", safeName(base.Suite+"_"+version+"_"+hex.EncodeToString(h.Sum(nil))[:16]))
	if cached, err := readRDMACoreBuild(dir); err == nil {
		cached.Cached = true
		return base.withBuild(cached), nil
	}
	if err := buildRDMACore(ctx, opts, a, b, src, patches, dir); err != nil {
		return nil, err
	}
	return base.withBuild(b), nil
}

// withBuild returns a copy of u whose files are taken first from b.
func (u *Userspace) withBuild(b *RDMACoreBuild) *Userspace {
	c := *u
	c.Patched = b
	return &c
}

// find returns the host file that stands for the guest path p: the
// rebuilt one when there is one, else the suite's.
func (u *Userspace) find(p string) string {
	if u.Patched != nil {
		if f := inRoot(filepath.Join(u.Patched.Dir, "root"), p); f != "" {
			return f
		}
	}
	return inRoot(u.Root, p)
}

// readRDMACoreBuild reads a cached build: build.json and root/ in dir.
func readRDMACoreBuild(dir string) (*RDMACoreBuild, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "build.json"))
	if err != nil {
		return nil, err
	}
	var b RDMACoreBuild
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, err
	}
	b.Dir = dir
	for _, l := range b.Libraries {
		if _, err := os.Stat(filepath.Join(dir, "root", l)); err != nil {
			return nil, err
		}
	}
	return &b, nil
}

// patchTargets returns the ninja targets a build makes: the provider's
// directory always, and every other library directory of rdma-core a
// patch touches (libibverbs, librdmacm, providers/X).
func patchTargets(provider string, patches []string) []string {
	targets := []string{"providers/" + provider + "/all"}
	for _, p := range patches {
		for _, f := range patchedFiles(p) {
			parts := strings.Split(f, "/")
			var t string
			switch {
			case len(parts) > 2 && parts[0] == "providers":
				t = "providers/" + parts[1] + "/all"
			case len(parts) > 1 && (parts[0] == "libibverbs" || parts[0] == "librdmacm"):
				t = parts[0] + "/all"
			}
			if t != "" && !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
	}
	sort.Strings(targets[1:])
	return targets
}

// patchedFiles returns the files a unified diff changes, without the
// first path component (a/, b/), as patch -p1 sees them.
func patchedFiles(patch string) []string {
	var files []string
	sc := bufio.NewScanner(strings.NewReader(patch))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "+++ ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "\t")
		if _, rest, ok := strings.Cut(name, "/"); ok && name != "/dev/null" {
			files = append(files, rest)
		}
	}
	return files
}

// rdmaCoreSource downloads the suite's rdma-core source package (the
// .dsc and the files it names, checked by apt against the suite's
// Sources index) unless it is cached, and returns its directory and
// version.
func rdmaCoreSource(ctx context.Context, a *aptState) (string, string, error) {
	rec, err := a.showSource(ctx, "rdma-core")
	if err != nil {
		return "", "", err
	}
	version := rec["Version"]
	dir := filepath.Join(filepath.Dir(filepath.Dir(a.dir)), "rdma-core-src", safeName("rdma-core_"+version))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, version, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", fmt.Errorf("vm: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".download-")
	if err != nil {
		return "", "", fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(tmp)
	// The upstream tarball, then Debian's changes (debian/patches), each
	// checked by apt against the Sources index; not the .dsc, which the
	// mirror lacked for trixie's 56.1-1 and sid's 65.0-1.1 in November
	// 2026. It lacked sid's Debian tarball too: then the build is of the
	// upstream source alone, and build.json says so.
	args := a.args("source", "--download-only", "--tar-only", "rdma-core="+version)
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("vm: download of the rdma-core %s source failed: apt-get %s: %v; output:\n%s", version, strings.Join(args, " "), err, tail(string(out), 10))
	}
	args = a.args("source", "--download-only", "--diff-only", "rdma-core="+version)
	cmd = exec.CommandContext(ctx, "apt-get", args...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		a.opts.logf("vm: rdma-core %s: Debian's changes could not be downloaded, building the upstream source alone: apt-get %s: %v; output:\n%s", version, strings.Join(args, " "), err, tail(string(out), 4))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", "", fmt.Errorf("vm: %w", err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", fmt.Errorf("vm: %w", err)
	}
	return dir, version, nil
}

// showSource returns the fields of the candidate version of a source
// package.
func (a *aptState) showSource(ctx context.Context, pkg string) (map[string]string, error) {
	args := a.args("showsrc", "--only-source", pkg)
	out, err := exec.CommandContext(ctx, "apt-cache", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("vm: apt-cache %s: %v; output: %s", strings.Join(args, " "), err, tail(string(out), 5))
	}
	// showsrc prints every version; the first record is not always the
	// newest, so take the highest by dpkg's order.
	var best map[string]string
	for _, block := range strings.Split(string(out), "\n\n") {
		rec := parseControl(block)
		if rec["Version"] == "" {
			continue
		}
		if best == nil || exec.CommandContext(ctx, "dpkg", "--compare-versions", rec["Version"], "gt", best["Version"]).Run() == nil {
			best = rec
		}
	}
	if best == nil {
		return nil, fmt.Errorf("vm: apt-cache showsrc %s printed no Version field; expected the suite's source package, output: %q", pkg, tail(string(out), 5))
	}
	return best, nil
}

// rdmaCoreChroot returns a chroot of suite with rdmaCoreChrootPackages,
// made once and cached (under a name that changes with the list).
func rdmaCoreChroot(ctx context.Context, opts Options, a *aptState, suite, cache string) (string, error) {
	sum := sha256.Sum256([]byte(strings.Join(rdmaCoreChrootPackages, ",")))
	dir := filepath.Join(cache, "rdma-core-chroot", suite+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	os.RemoveAll(dir)
	args := []string{"--variant=essential", "--mode=root", "-q",
		"--aptopt=Acquire::Check-Valid-Until \"false\"",
		"--include=" + strings.Join(rdmaCoreChrootPackages, ","),
		suite, dir, "-"}
	cmd := exec.CommandContext(ctx, "mmdebstrap", args...)
	cmd.Stdin = strings.NewReader((&aptState{opts: opts}).sourcesList(suite))
	opts.logf("vm: rdma-core build: making a %s chroot in %s", suite, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("vm: mmdebstrap %s: %v; expected a %s chroot with %s; output:\n%s", strings.Join(args, " "), err, suite, strings.Join(rdmaCoreChrootPackages, ", "), tail(string(out), 15))
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	return dir, nil
}

// checkRDMACoreBuildTools reports the first missing host tool, or a
// non-root user.
func checkRDMACoreBuildTools() error {
	for _, t := range [][2]string{{"mmdebstrap", "mmdebstrap"}, {"chroot", "coreutils"}, {"unshare", "util-linux"}, {"mount", "mount"}, {"apt-get", "apt"}} {
		if _, err := exec.LookPath(t[0]); err != nil {
			return &MissingToolError{Tool: t[0], Package: t[1], Detail: "building rdma-core with patches needs it"}
		}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("vm: building rdma-core with patches needs root (mmdebstrap and chroot), and this process runs as uid %d; run as root or use a cached build", os.Geteuid())
	}
	return nil
}

// rdmaCoreBuildScript unpacks the source, applies the patches, configures
// and builds the targets, in the chroot. Each stage prints a marker line
// so that a failure can be told apart and excerpted.
const rdmaCoreBuildScript = `set -e
cd "$1"
shift
echo "@@stage unpack"
mkdir tree
tar -xf src/*.orig.tar.* -C tree --strip-components=1
if ls src/*.debian.tar.* >/dev/null 2>&1; then
  tar -xf src/*.debian.tar.* -C tree
  if [ -f tree/debian/patches/series ]; then
    for p in $(grep -v '^#' tree/debian/patches/series); do
      patch -d tree -p1 --batch --quiet < "tree/debian/patches/$p"
    done
  fi
  echo "@@debian-patches applied"
fi
for p in patches/*; do
  [ -e "$p" ] || continue
  echo "@@stage apply $p"
  patch -d tree -p1 --batch --forward < "$p"
done
echo "@@stage configure"
cmake -S tree -B out -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_INSTALL_SYSCONFDIR=/etc -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu \
  -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0 >/dev/null
echo "@@stage build"
ninja -C out "$@"
echo "@@stage done"
`

func buildRDMACore(ctx context.Context, opts Options, a *aptState, b *RDMACoreBuild, src string, patches []string, dir string) error {
	if err := checkRDMACoreBuildTools(); err != nil {
		return err
	}
	start := time.Now()
	cache := filepath.Dir(filepath.Dir(dir))
	chroot, err := rdmaCoreChroot(ctx, opts, a, b.Suite, cache)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp(filepath.Join(chroot, "tmp"), "build-")
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(work)
	for _, d := range []string{"src", "patches"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return fmt.Errorf("vm: %w", err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(src, "*"))
	for _, f := range files {
		if err := copyFile(f, filepath.Join(work, "src", filepath.Base(f))); err != nil {
			return err
		}
	}
	for i, p := range patches {
		if err := copyFile(p, filepath.Join(work, "patches", fmt.Sprintf("%03d-%s", i, filepath.Base(p)))); err != nil {
			return err
		}
	}
	opts.logf("vm: rdma-core build: %s %s with %s, targets %s", b.Suite, b.Version, strings.Join(b.PatchNames, ", "), strings.Join(b.Targets, " "))
	if err := os.WriteFile(filepath.Join(work, "build.sh"), []byte(rdmaCoreBuildScript), 0o755); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	inside := "/tmp/" + filepath.Base(work)
	// /proc in a private mount namespace, which ends with the build.
	script := `mount -t proc proc "$1/proc" && c=$1 && w=$2 && shift 2 && exec chroot "$c" sh "$w/build.sh" "$w" "$@"`
	args := append([]string{"--mount", "--propagation", "private", "--", "bash", "-c", script, "bash", chroot, inside}, b.Targets...)
	out, err := exec.CommandContext(ctx, "unshare", args...).CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("vm: rdma-core build: %w", ctx.Err())
		}
		return buildFailure(string(out), b, patches)
	}
	b.Debian = strings.Contains(string(out), "\n@@debian-patches applied")
	b.Libraries = nil
	root := filepath.Join(work, "install")
	built, _ := filepath.Glob(filepath.Join(work, "out", "lib", "*.so*"))
	for _, f := range built {
		base := filepath.Base(f)
		guest := "usr/lib/x86_64-linux-gnu/" + base
		if strings.Contains(base, "-rdmav") {
			guest = "usr/lib/x86_64-linux-gnu/libibverbs/" + base
		}
		if !b.wants(base) {
			continue
		}
		if err := copyPreservingLink(f, filepath.Join(root, guest)); err != nil {
			return err
		}
		b.Libraries = append(b.Libraries, guest)
	}
	if len(b.Libraries) == 0 {
		return fmt.Errorf("vm: rdma-core build of %s left no library in out/lib; expected the provider's; output:\n%s", strings.Join(b.Targets, " "), tail(string(out), 10))
	}
	b.Total = time.Since(start).Round(time.Millisecond)
	meta, _ := json.MarshalIndent(b, "", "  ")
	if err := os.WriteFile(filepath.Join(work, "build.json"), append(meta, '\n'), 0o644); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	final, err := os.MkdirTemp(filepath.Dir(dir), ".save-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("vm: %w", err)
		}
		if final, err = os.MkdirTemp(filepath.Dir(dir), ".save-"); err != nil {
			return fmt.Errorf("vm: %w", err)
		}
	}
	defer os.RemoveAll(final)
	for _, c := range [][]string{{"cp", "-a", root, filepath.Join(final, "root")}, {"cp", "-a", filepath.Join(work, "build.json"), final}} {
		if out, err := exec.CommandContext(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("vm: %s: %v; output: %s", strings.Join(c, " "), err, tail(string(out), 5))
		}
	}
	os.RemoveAll(dir)
	if err := os.Rename(final, dir); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	b.Dir = dir
	opts.logf("vm: rdma-core build: %s in %v, cached in %s", strings.Join(b.Libraries, " "), b.Total, dir)
	return nil
}

// wants reports whether a library file of out/lib belongs to a target
// built: the provider's lib<p>-rdmav*.so, libibverbs.so.*, librdmacm.so.*.
func (b *RDMACoreBuild) wants(base string) bool {
	for _, t := range b.Targets {
		switch {
		case strings.HasPrefix(t, "providers/"):
			if strings.HasPrefix(base, "lib"+path.Base(path.Dir(t))+"-rdmav") {
				return true
			}
		case t == "libibverbs/all":
			if strings.HasPrefix(base, "libibverbs.so") {
				return true
			}
		case t == "librdmacm/all":
			if strings.HasPrefix(base, "librdmacm.so") {
				return true
			}
		}
	}
	return false
}

// buildFailure turns the output of a failed build script into an
// RDMACorePatchError: the stage it reached and its first failing hunk,
// cmake error or compiler error.
func buildFailure(out string, b *RDMACoreBuild, patches []string) error {
	stage, patch := "", ""
	var body []string
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(line, "@@stage "); ok {
			stage, body = s, nil
			continue
		}
		body = append(body, line)
	}
	text := strings.Join(body, "\n")
	e := &RDMACorePatchError{Suite: b.Suite, Version: b.Version, Stage: stage}
	switch {
	case strings.HasPrefix(stage, "apply "):
		e.Stage = "apply"
		patch = strings.TrimPrefix(stage, "apply patches/")
		if n, err := strconv.Atoi(patch[:min(3, len(patch))]); err == nil && n < len(patches) {
			patch = patches[n]
		}
		e.Patch = patch
		e.Excerpt = firstFailedHunk(text)
	case stage == "configure":
		e.Excerpt = firstCMakeError(text)
	case stage == "build":
		e.Excerpt = firstCompilerError(text)
	default:
		return fmt.Errorf("vm: rdma-core build failed while %q; expected it to unpack, patch and build; output:\n%s", stage, tail(out, 15))
	}
	return e
}

var hunkFailedRe = regexp.MustCompile(`^Hunk #\d+ FAILED at \d+`)

// firstFailedHunk returns patch's first failing hunk with the file it
// was for ("patching file providers/siw/siw.c: Hunk #1 FAILED at 681."),
// or patch's last lines when it names none (a malformed patch, a
// missing file).
func firstFailedHunk(out string) string {
	file := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "patching file "):
			file = line
		case hunkFailedRe.MatchString(line):
			if file != "" {
				return file + ": " + line
			}
			return line
		case strings.Contains(line, "Reversed (or previously applied) patch detected"):
			return strings.TrimSpace(file + ": " + line)
		}
	}
	return tail(strings.TrimSpace(out), 5)
}

// firstCompilerError returns the first "file:line:col: error:" line of
// a build with the lines of source gcc shows below it, or the output's
// FAILED line and last lines when no compiler error is in it (a link
// error).
func firstCompilerError(out string) string {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if strings.Contains(line, ": error: ") || strings.Contains(line, ": fatal error: ") {
			end := min(i+3, len(lines))
			return strings.Join(lines[i:end], "\n")
		}
	}
	for i, line := range lines {
		if strings.HasPrefix(line, "FAILED: ") {
			end := min(i+6, len(lines))
			return strings.Join(lines[i:end], "\n")
		}
	}
	return tail(strings.TrimSpace(out), 8)
}

// firstCMakeError returns cmake's first "CMake Error" with the
// non-blank lines after it (five in all).
func firstCMakeError(out string) string {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "CMake Error") {
			var keep []string
			for _, l := range lines[i:] {
				if strings.TrimSpace(l) != "" && len(keep) < 5 {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "\n")
		}
	}
	return tail(strings.TrimSpace(out), 8)
}

// copyFile copies the regular file src to dst.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	return nil
}

// copyPreservingLink copies src to dst, as a link when src is one.
func copyPreservingLink(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	if target, err := os.Readlink(src); err == nil {
		return os.Symlink(target, dst)
	}
	return copyFile(src, dst)
}
