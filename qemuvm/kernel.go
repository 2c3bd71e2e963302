package qemuvm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Defaults for the private apt state.
const (
	// DefaultMirror is the Debian archive used for every suite.
	DefaultMirror = "http://deb.debian.org/debian"
	// DefaultSecurityMirror is the archive of the -security suites.
	DefaultSecurityMirror = "http://deb.debian.org/debian-security"
	// DefaultKeyring verifies both archives.
	DefaultKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
)

// aptSource is one line of a private sources.list.
type aptSource struct {
	security bool // use the security mirror
	suite    string
}

// suiteSources lists, per supported suite, the archives whose
// linux-image-amd64 is considered; apt picks the highest version.
var suiteSources = map[string][]aptSource{
	"bookworm": {{false, "bookworm"}, {true, "bookworm-security"}},
	"trixie":   {{false, "trixie"}, {true, "trixie-security"}},
	"sid":      {{false, "sid"}},
}

// Suites returns the Debian suite names accepted in Kernel.Suite.
func Suites() []string {
	s := make([]string, 0, len(suiteSources))
	for k := range suiteSources {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// Kernel selects the guest kernel: either a Debian suite, or a kernel
// image and modules directory supplied by the user.
type Kernel struct {
	// Suite is "bookworm", "trixie" or "sid". The newest kernel of the
	// suite is resolved at run time from its linux-image-amd64.
	Suite string
	// Image is the path of a bzImage/vmlinuz, used when Suite is empty.
	Image string
	// ModulesDir is the matching lib/modules/RELEASE directory, used
	// when Suite is empty.
	ModulesDir string
}

// SuiteKernel returns a Kernel for a Debian suite.
func SuiteKernel(suite string) Kernel { return Kernel{Suite: suite} }

// CustomKernel returns a Kernel for a user-built image and the
// lib/modules/RELEASE directory that belongs to it.
func CustomKernel(image, modulesDir string) Kernel {
	return Kernel{Image: image, ModulesDir: modulesDir}
}

// String describes the kernel selection.
func (k Kernel) String() string {
	if k.Suite != "" {
		return "Debian " + k.Suite
	}
	return fmt.Sprintf("custom kernel %s (modules %s)", k.Image, k.ModulesDir)
}

// PreparedKernel is a kernel ready to boot: a vmlinuz and its modules
// on the host.
type PreparedKernel struct {
	Suite      string   // empty for a custom kernel
	Packages   []string // Debian packages unpacked, as name=version
	Version    string   // Debian version of the kernel package
	Release    string   // kernel release, from the modules directory name
	Image      string   // path of the kernel image
	ModulesDir string   // path of lib/modules/RELEASE
}

// PrepareKernel resolves, downloads and unpacks the kernel selected by
// opts.Kernel, reusing the cache under opts.CacheDir. For a custom
// kernel it only checks that the paths exist.
func PrepareKernel(ctx context.Context, opts Options) (*PreparedKernel, error) {
	k := opts.Kernel
	if k.Suite == "" {
		return prepareCustom(k)
	}
	if _, ok := suiteSources[k.Suite]; !ok {
		return nil, &UnknownSuiteError{Suite: k.Suite}
	}
	if k.Image != "" || k.ModulesDir != "" {
		return nil, fmt.Errorf("vm: kernel selection names both suite %q and image %q / modules %q; give one or the other", k.Suite, k.Image, k.ModulesDir)
	}
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("vm: create cache directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(cache, "lock-"+k.Suite))
	if err != nil {
		return nil, err
	}
	defer unlock()
	a := &aptState{dir: filepath.Join(cache, "apt", k.Suite), opts: opts}
	if err := a.ensureLists(ctx, k.Suite); err != nil {
		return nil, err
	}
	pkgs, err := a.resolve(ctx)
	if err != nil {
		return nil, fmt.Errorf("vm: resolve kernel for suite %s: %w", k.Suite, err)
	}
	pk := &PreparedKernel{Suite: k.Suite, Version: pkgs[0].version}
	for _, p := range pkgs {
		pk.Packages = append(pk.Packages, p.name+"="+p.version)
	}
	root := filepath.Join(cache, "kernels", safeName(pkgs[0].name+"_"+pkgs[0].version))
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		opts.logf("vm: fetching %s", strings.Join(pk.Packages, " "))
		if err := a.fetchInto(ctx, filepath.Join(cache, "debs"), pkgs, root); err != nil {
			return nil, err
		}
	}
	if err := locateKernel(root, pk); err != nil {
		return nil, err
	}
	return pk, nil
}

func prepareCustom(k Kernel) (*PreparedKernel, error) {
	if k.Image == "" || k.ModulesDir == "" {
		return nil, fmt.Errorf("vm: no kernel selected: expected Kernel.Suite (one of %s) or both Kernel.Image and Kernel.ModulesDir, got image %q and modules directory %q",
			strings.Join(Suites(), ", "), k.Image, k.ModulesDir)
	}
	st, err := os.Stat(k.Image)
	if err != nil {
		return nil, fmt.Errorf("vm: kernel image: stat %s: %w; expected a bzImage/vmlinuz file", k.Image, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("vm: kernel image %s is a %s; expected a bzImage/vmlinuz file", k.Image, st.Mode().Type())
	}
	st, err = os.Stat(k.ModulesDir)
	if err != nil {
		return nil, fmt.Errorf("vm: kernel modules: stat %s: %w; expected a lib/modules/RELEASE directory", k.ModulesDir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("vm: kernel modules path %s is not a directory; expected a lib/modules/RELEASE directory", k.ModulesDir)
	}
	img, _ := filepath.Abs(k.Image)
	mods, _ := filepath.Abs(k.ModulesDir)
	return &PreparedKernel{Image: img, ModulesDir: mods, Release: filepath.Base(mods)}, nil
}

// debPkg is a Debian package name and exact version.
type debPkg struct{ name, version string }

// aptState is a private apt configuration: its own sources.list, lists
// and package cache, so the system's apt state is left alone.
type aptState struct {
	dir  string
	opts Options
	// debSrc adds deb-src lines beside the deb lines (apt-get source).
	debSrc bool
}

func (a *aptState) args(extra ...string) []string {
	d := a.dir
	args := []string{
		"-o", "Dir::Etc::sourcelist=" + filepath.Join(d, "sources.list"),
		"-o", "Dir::Etc::sourceparts=" + filepath.Join(d, "sources.list.d"),
		"-o", "Dir::State::Lists=" + filepath.Join(d, "lists"),
		"-o", "Dir::State::status=" + filepath.Join(d, "status"),
		"-o", "Dir::Cache=" + filepath.Join(d, "cache"),
		"-o", "Acquire::Languages=none",
		"-o", "APT::Sandbox::User=root",
		"-q",
	}
	return append(args, extra...)
}

func (a *aptState) sourcesList(suite string) string {
	mirror, sec := a.opts.Mirror, a.opts.SecurityMirror
	if mirror == "" {
		mirror = DefaultMirror
	}
	if sec == "" {
		sec = DefaultSecurityMirror
	}
	keyring := a.opts.Keyring
	if keyring == "" {
		keyring = DefaultKeyring
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# written by srqconform vm for suite %s\n", suite)
	for _, s := range suiteSources[suite] {
		uri := mirror
		if s.security {
			uri = sec
		}
		fmt.Fprintf(&b, "deb [arch=amd64 signed-by=%s target-=DEP-11,DEP-11-icons,DEP-11-icons-small,DEP-11-icons-hidpi,CNF] %s %s main\n", keyring, uri, s.suite)
		if a.debSrc {
			fmt.Fprintf(&b, "deb-src [signed-by=%s] %s %s main\n", keyring, uri, s.suite)
		}
	}
	return b.String()
}

// ensureLists writes the private sources.list and runs apt-get update
// when the lists are missing, stale or were fetched for other sources.
func (a *aptState) ensureLists(ctx context.Context, suite string) error {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return &MissingToolError{Tool: "apt-get", Package: "apt"}
	}
	for _, sub := range []string{"sources.list.d", "lists/partial", "cache"} {
		if err := os.MkdirAll(filepath.Join(a.dir, sub), 0o755); err != nil {
			return fmt.Errorf("vm: apt state: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(a.dir, "status")); err != nil {
		if err := os.WriteFile(filepath.Join(a.dir, "status"), nil, 0o644); err != nil {
			return fmt.Errorf("vm: apt state: %w", err)
		}
	}
	want := a.sourcesList(suite)
	srcPath := filepath.Join(a.dir, "sources.list")
	stamp := filepath.Join(a.dir, "lists", ".srqconform-updated")
	old, _ := os.ReadFile(srcPath)
	fresh := false
	if string(old) == want {
		if st, err := os.Stat(stamp); err == nil {
			maxAge := a.opts.ListsMaxAge
			if maxAge == 0 {
				maxAge = 12 * time.Hour
			}
			fresh = maxAge < 0 || time.Since(st.ModTime()) < maxAge
		}
	} else {
		os.Remove(stamp)
		if err := os.WriteFile(srcPath, []byte(want), 0o644); err != nil {
			return fmt.Errorf("vm: apt state: %w", err)
		}
	}
	if fresh {
		return nil
	}
	a.opts.logf("vm: apt-get update for %s (private state in %s)", suite, a.dir)
	args := a.args("update")
	out, err := exec.CommandContext(ctx, "apt-get", args...).CombinedOutput()
	// apt-get update exits 0 even when some indexes failed; "W:"/"E:" lines tell.
	if err == nil && !bytes.Contains(out, []byte("\nE: ")) && !bytes.HasPrefix(out, []byte("E: ")) && !bytes.Contains(out, []byte("Failed to fetch")) {
		return os.WriteFile(stamp, nil, 0o644)
	}
	status := "exited with status 0 but reported failed downloads"
	if err != nil {
		status = err.Error()
	}
	msg := fmt.Sprintf("apt-get %s: %s; output:\n%s", strings.Join(args, " "), status, tail(string(out), 15))
	if _, statErr := os.Stat(stamp); statErr == nil {
		a.opts.logf("vm: warning: refreshing package lists failed, using the old ones: %s", msg)
		return nil
	}
	return fmt.Errorf("vm: download of Debian package lists for %s failed, expected a successful apt-get update: %s", suite, msg)
}

// showRecord returns the fields of the candidate version of pkg.
func (a *aptState) showRecord(ctx context.Context, pkg string) (map[string]string, error) {
	args := a.args("show", "--no-all-versions", pkg)
	cmd := exec.CommandContext(ctx, "apt-cache", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache %s: %v; stderr: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	rec := parseControl(string(out))
	if rec["Version"] == "" {
		return nil, fmt.Errorf("apt-cache show %s printed no Version field; output: %q", pkg, tail(string(out), 5))
	}
	return rec, nil
}

// resolve finds the kernel packages behind linux-image-amd64: the
// versioned linux-image-* package and, for kernels split into several
// packages (7.x), its linux-binary-* and linux-modules-* dependencies.
// The versioned image package comes first.
func (a *aptState) resolve(ctx context.Context) ([]debPkg, error) {
	meta, err := a.showRecord(ctx, "linux-image-amd64")
	if err != nil {
		return nil, err
	}
	img := ""
	for _, d := range parseDepends(meta["Depends"]) {
		if strings.HasPrefix(d.name, "linux-image-") && d.name != "linux-image-amd64" {
			img = d.name
			break
		}
	}
	if img == "" {
		return nil, fmt.Errorf("linux-image-amd64 %s depends on %q, expected a linux-image-RELEASE-amd64 package among them", meta["Version"], meta["Depends"])
	}
	rec, err := a.showRecord(ctx, img)
	if err != nil {
		return nil, err
	}
	pkgs := []debPkg{{img, rec["Version"]}}
	for _, d := range parseDepends(rec["Depends"]) {
		if strings.HasPrefix(d.name, "linux-binary-") || strings.HasPrefix(d.name, "linux-modules-") {
			v := d.version
			if v == "" {
				r, err := a.showRecord(ctx, d.name)
				if err != nil {
					return nil, err
				}
				v = r["Version"]
			}
			pkgs = append(pkgs, debPkg{d.name, v})
		}
	}
	return pkgs, nil
}

// download fetches name=version into debsDir unless it is cached there,
// and returns the .deb path.
func (a *aptState) download(ctx context.Context, debsDir string, p debPkg) (string, error) {
	final := filepath.Join(debsDir, safeName(p.name+"_"+p.version+"_amd64.deb"))
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(debsDir, 0o755); err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	tmp, err := os.MkdirTemp(debsDir, ".download-")
	if err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(tmp)
	args := a.args("download", p.name+"="+p.version)
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("vm: download of %s=%s failed: apt-get %s: %v; output:\n%s", p.name, p.version, strings.Join(args, " "), err, tail(string(out), 10))
	}
	files, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(files) != 1 {
		return "", fmt.Errorf("vm: apt-get download %s=%s left %d .deb files in %s, expected 1; output:\n%s", p.name, p.version, len(files), tmp, tail(string(out), 10))
	}
	if err := os.Rename(files[0], final); err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	return final, nil
}

// unpackDebs extracts debs into root (atomically, through a temporary
// sibling directory) and marks it complete.
func unpackDebs(ctx context.Context, debs []string, root string) error {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return &MissingToolError{Tool: "dpkg-deb", Package: "dpkg"}
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(root), ".unpack-")
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, deb := range debs {
		out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, tmp).CombinedOutput()
		if err != nil {
			return fmt.Errorf("vm: dpkg-deb -x %s %s: %v; output: %s", deb, tmp, err, tail(string(out), 5))
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	os.RemoveAll(root)
	if err := os.Rename(tmp, root); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	return nil
}

// locateKernel finds the kernel image and its modules directory under
// an unpacked kernel. Debian has used two layouts: boot/vmlinuz-RELEASE
// beside lib/modules/RELEASE (6.x), and usr/lib/modules/RELEASE/vmlinuz
// (7.x, in linux-binary-*).
func locateKernel(root string, pk *PreparedKernel) error {
	images := map[string]string{} // release -> image
	boots, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	for _, b := range boots {
		images[strings.TrimPrefix(filepath.Base(b), "vmlinuz-")] = b
	}
	for _, d := range []string{"lib/modules", "usr/lib/modules"} {
		ins, _ := filepath.Glob(filepath.Join(root, d, "*", "vmlinuz"))
		for _, b := range ins {
			images[filepath.Base(filepath.Dir(b))] = b
		}
	}
	if len(images) != 1 {
		var found []string
		for r, p := range images {
			found = append(found, r+": "+p)
		}
		sort.Strings(found)
		return fmt.Errorf("vm: expected exactly one kernel image (boot/vmlinuz-RELEASE or usr/lib/modules/RELEASE/vmlinuz) in unpacked %s under %s, found %d %v",
			strings.Join(pk.Packages, " "), root, len(images), found)
	}
	for release, img := range images {
		for _, d := range []string{"lib/modules", "usr/lib/modules"} {
			m := filepath.Join(root, d, release)
			if st, err := os.Stat(filepath.Join(m, "kernel")); err == nil && st.IsDir() {
				pk.Image, pk.ModulesDir, pk.Release = img, m, release
				return nil
			}
		}
		return fmt.Errorf("vm: unpacked %s has the image %s but no lib/modules/%s/kernel or usr/lib/modules/%s/kernel directory", strings.Join(pk.Packages, " "), img, release, release)
	}
	return nil
}

// parseControl parses the first RFC 822 style record of apt-cache show.
func parseControl(s string) map[string]string {
	rec := map[string]string{}
	last := ""
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			if len(rec) > 0 {
				break
			}
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != "" {
				rec[last] += "\n" + strings.TrimSpace(line)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		last = k
		rec[k] = strings.TrimSpace(v)
	}
	return rec
}

// depend is one non-alternative dependency.
type depend struct{ name, version string }

// parseDepends parses a Depends field, dropping alternatives ("a | b")
// and keeping an exact "(= V)" version when present.
func parseDepends(s string) []depend {
	var ds []depend
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" || strings.Contains(part, "|") {
			continue
		}
		name, rest, _ := strings.Cut(part, " ")
		name = strings.TrimSuffix(name, ":any")
		d := depend{name: name}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "(=") && strings.HasSuffix(rest, ")") {
			d.version = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(rest, "(="), ")"))
		}
		ds = append(ds, d)
	}
	return ds
}

// safeName makes a cache file name out of a package name and version.
func safeName(s string) string {
	return strings.NewReplacer(":", "%3a", "/", "_").Replace(s)
}

// lockFile takes an exclusive flock on path; the returned function
// releases it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("vm: open lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vm: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
