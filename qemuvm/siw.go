package qemuvm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SiwBuild describes a siw.ko built for one Debian kernel.
type SiwBuild struct {
	// Path is the cached module file.
	Path string `json:"-"`
	// Release and Version are the kernel's release (the modules
	// directory name) and its Debian package version.
	Release string `json:"release"`
	Version string `json:"version"`
	// Suite is the Debian suite whose chroot compiled it.
	Suite string `json:"suite"`
	// Compiler is the kernel's compiler as the headers' .kernelvariables
	// name it (gcc-12, gcc-14, ...), the one the chroot held.
	Compiler string `json:"compiler"`
	// Vermagic is the module's vermagic, equal to the kernel's.
	Vermagic string `json:"vermagic"`
	// Packages are the Debian packages the build used, as name=version.
	Packages []string `json:"packages"`
	// Durations of the build's stages, by name; Total covers them all.
	Durations map[string]time.Duration `json:"durations"`
	Total     time.Duration            `json:"total"`
	// Cached says the module came from the cache: nothing was built.
	Cached bool `json:"-"`
}

// siwSourceDir is the siw driver's directory in the kernel tree.
const siwSourceDir = "drivers/infiniband/sw/siw"

// SiwModule returns a siw.ko for the kernel pk, building it when the
// cache under opts.CacheDir has none for pk's exact release and version.
// Debian configures its kernels without siw (CONFIG_RDMA_SIW is not
// set), so the module is compiled out of tree from Debian's own
// linux-source-X.Y and linux-headers-RELEASE of pk's version, inside a
// minimal chroot of pk's suite (mmdebstrap) that holds the compiler the
// headers name. Building needs root, mmdebstrap and the Debian mirror;
// a cached module needs nothing.
func SiwModule(ctx context.Context, opts Options, pk *PreparedKernel) (*SiwBuild, error) {
	if pk.Suite == "" {
		return nil, fmt.Errorf("vm: siw.ko is built only for Debian suite kernels, and %s is a custom kernel; build it with CONFIG_RDMA_SIW=m and give its modules directory", pk.Image)
	}
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cache, "siw", safeName(pk.Release+"_"+pk.Version))
	if b, err := readSiwBuild(dir); err == nil {
		b.Cached = true
		return b, nil
	}
	if err := os.MkdirAll(filepath.Join(cache, "siw"), 0o755); err != nil {
		return nil, fmt.Errorf("vm: create siw cache directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(cache, "lock-siw-"+pk.Suite))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if b, err := readSiwBuild(dir); err == nil { // built while we waited
		b.Cached = true
		return b, nil
	}
	b, err := buildSiw(ctx, opts, pk, cache, dir)
	if err != nil {
		return nil, fmt.Errorf("vm: building siw.ko for kernel %s (%s): %w", pk.Release, pk.Version, err)
	}
	return b, nil
}

// readSiwBuild reads a cached build: siw.ko and build.json in dir.
func readSiwBuild(dir string) (*SiwBuild, error) {
	var b SiwBuild
	if err := readBuild(dir, "siw.ko", &b); err != nil {
		return nil, err
	}
	b.Path = filepath.Join(dir, "siw.ko")
	return &b, nil
}

// readBuild reads dir/build.json into meta, and fails when dir/name, the
// module it describes, is missing.
func readBuild(dir, name string, meta any) error {
	raw, err := os.ReadFile(filepath.Join(dir, "build.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, meta); err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(dir, name))
	return err
}

// siwTools are the host programs a build runs, with their packages.
var siwTools = [][2]string{
	{"mmdebstrap", "mmdebstrap"},
	{"dpkg-deb", "dpkg"},
	{"tar", "tar"},
	{"xz", "xz-utils"},
	{"bash", "bash"},
	{"chroot", "coreutils"},
	{"unshare", "util-linux"},
	{"mount", "mount"},
}

// checkSiwTools reports the first missing build tool, or a non-root
// user (mmdebstrap's root mode and chroot need root): what making a build
// root (siw.ko, a patched module) needs.
func checkSiwTools() error {
	for _, t := range siwTools {
		if _, err := exec.LookPath(t[0]); err != nil {
			return &MissingToolError{Tool: t[0], Package: t[1], Detail: "building siw.ko needs it"}
		}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("building siw.ko needs root (mmdebstrap and chroot), and this process runs as uid %d; run as root or use a cached module", os.Geteuid())
	}
	return nil
}

func buildSiw(ctx context.Context, opts Options, pk *PreparedKernel, cache, dir string) (*SiwBuild, error) {
	start := time.Now()
	r, err := ensureBuildRoot(ctx, opts, pk, cache)
	if err != nil {
		return nil, err
	}
	b := &SiwBuild{Release: pk.Release, Version: pk.Version, Suite: pk.Suite, Compiler: r.Compiler, Packages: r.Packages, Durations: map[string]time.Duration{}}
	if !r.Cached {
		for k, v := range r.Durations {
			b.Durations[k] = v
		}
	}
	lap := time.Now()
	built, job, err := makeModule(ctx, r, "siw", nil)
	if job != "" {
		defer os.RemoveAll(job)
	}
	if err != nil {
		return nil, err
	}
	b.Durations["build"] = time.Since(lap).Round(time.Millisecond)
	if b.Vermagic, err = checkVermagic(ctx, pk, built, job); err != nil {
		return nil, err
	}
	b.Total = time.Since(start).Round(time.Millisecond)
	if err := saveSiwBuild(b, built, dir); err != nil {
		return nil, err
	}
	opts.logf("vm: siw build: siw.ko for %s built with %s in %v, cached in %s", pk.Release, b.Compiler, b.Total, dir)
	return b, nil
}

// checkVermagic returns the vermagic of the module ko, refusing one that
// is not the kernel pk's; work is a scratch directory.
func checkVermagic(ctx context.Context, pk *PreparedKernel, ko, work string) (string, error) {
	got, err := moduleVermagic(ko)
	if err != nil {
		return "", err
	}
	want, err := kernelVermagic(ctx, pk, work)
	if err != nil {
		return "", err
	}
	if got != want {
		return "", fmt.Errorf("the built %s has vermagic %q, the kernel's ib_core %q; expected them equal (wrong headers or compiler?)", filepath.Base(ko), got, want)
	}
	return got, nil
}

// saveSiwBuild stores the module and its description in dir.
func saveSiwBuild(b *SiwBuild, built, dir string) error {
	if err := saveBuild(b, built, "siw.ko", dir); err != nil {
		return err
	}
	b.Path = filepath.Join(dir, "siw.ko")
	return nil
}

// saveBuild stores a built module as dir/name and its description meta
// as dir/build.json, atomically (through a temporary sibling).
func saveBuild(meta any, built, name, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".save-")
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(tmp)
	data, err := os.ReadFile(built)
	if err != nil {
		return fmt.Errorf("vm: read built module: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	js, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "build.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	return nil
}

// siwPackages resolves the packages a build unpacks, all of pk's exact
// version: linux-headers-RELEASE, the linux-headers-* and linux-kbuild-*
// packages it depends on, and last linux-source-X.Y. It also returns the
// runtime dependencies of kbuild (its tools run in the chroot).
func siwPackages(ctx context.Context, a *aptState, pk *PreparedKernel) ([]debPkg, []string, error) {
	name := "linux-headers-" + pk.Release
	rec, err := a.showRecord(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if rec["Version"] != pk.Version {
		return nil, nil, fmt.Errorf("%s has version %s, the kernel %s; expected the same version (the package lists moved on: run again to fetch the newer kernel)", name, rec["Version"], pk.Version)
	}
	pkgs := []debPkg{{name, pk.Version}}
	var kbuild []string
	for _, d := range parseDepends(rec["Depends"]) {
		if !strings.HasPrefix(d.name, "linux-headers-") && !strings.HasPrefix(d.name, "linux-kbuild-") {
			continue
		}
		if !strings.HasPrefix(d.name, "linux-kbuild-") {
			pkgs = append(pkgs, debPkg{d.name, pk.Version})
		} else {
			kr, err := a.showRecord(ctx, d.name)
			if err != nil {
				return nil, nil, err
			}
			pkgs = append(pkgs, debPkg{d.name, kbuildVersion(kr["Version"], pk.Version)})
			for _, dd := range parseDepends(kr["Depends"]) {
				kbuild = append(kbuild, dd.name)
			}
		}
	}
	if len(pkgs) == 1 {
		return nil, nil, fmt.Errorf("%s %s depends on %q; expected linux-headers-*-common and linux-kbuild-* among them", name, pk.Version, rec["Depends"])
	}
	mm, err := majorMinor(pk.Version)
	if err != nil {
		return nil, nil, err
	}
	return append(pkgs, debPkg{"linux-source-" + mm, pk.Version}), kbuild, nil
}

// kbuildVersion is the linux-kbuild version to unpack for a kernel of
// version kernel when the archive's candidate is candidate: the kernel's
// own, unless the candidate is a later Debian revision of the same
// upstream release (headers depend on kbuild >= their version, and a
// security update can publish kbuild 6.1.192-3 while the image and
// headers stay 6.1.192-2; the older kbuild is then gone from the
// archive). Kbuild's tools come from the same upstream source.
func kbuildVersion(candidate, kernel string) string {
	i, j := strings.LastIndexByte(candidate, '-'), strings.LastIndexByte(kernel, '-')
	if i <= 0 || j <= 0 || candidate[:i] != kernel[:j] {
		return kernel
	}
	rc, err1 := strconv.Atoi(candidate[i+1:])
	rk, err2 := strconv.Atoi(kernel[j+1:])
	if err1 != nil || err2 != nil || rc <= rk {
		return kernel
	}
	return candidate
}

// majorMinor returns "6.12" for the Debian kernel version "6.12.117-1".
func majorMinor(version string) (string, error) {
	f := strings.SplitN(version, ".", 3)
	if len(f) < 2 || f[0] == "" || f[1] == "" || strings.Trim(f[0]+f[1], "0123456789") != "" {
		return "", fmt.Errorf("kernel package version %q: expected MAJOR.MINOR.PATCH-REVISION", version)
	}
	return f[0] + "." + f[1], nil
}

var kernelCCRe = regexp.MustCompile(`(?m)^\s*CC\s*:?=.*?\b(gcc-\d+)\s*$`)

// kernelCompiler returns the gcc-N package named by the CC line of a
// linux-headers .kernelvariables file.
func kernelCompiler(kernelvariables string) (string, error) {
	m := kernelCCRe.FindStringSubmatch(kernelvariables)
	if m == nil {
		return "", fmt.Errorf("no line CC = gcc-N; expected the kernel's compiler there, got:\n%s", tail(kernelvariables, 10))
	}
	return m[1], nil
}

// moduleVermagic returns the vermagic= string of a kernel module file.
func moduleVermagic(ko string) (string, error) {
	data, err := os.ReadFile(ko)
	if err != nil {
		return "", fmt.Errorf("vm: %w", err)
	}
	return vermagicOf(data, ko)
}

func vermagicOf(data []byte, what string) (string, error) {
	i := bytes.Index(data, []byte("vermagic="))
	if i < 0 {
		return "", fmt.Errorf("vm: %s has no vermagic= string; expected a kernel module", what)
	}
	s := data[i+len("vermagic="):]
	if j := bytes.IndexByte(s, 0); j >= 0 {
		s = s[:j]
	}
	return string(s), nil
}

// kernelVermagic returns the vermagic of pk's own ib_core module.
func kernelVermagic(ctx context.Context, pk *PreparedKernel, work string) (string, error) {
	src, err := newDirModules(ctx, pk.ModulesDir, filepath.Join(work, "kmods"))
	if err != nil {
		return "", err
	}
	if _, found, err := src.Info("ib_core"); err != nil || !found {
		return "", errors.Join(fmt.Errorf("vm: kernel %s: expected an ib_core module to compare vermagic with", pk.Release), err)
	}
	return moduleVermagic(src.plain["ib_core"])
}
