package qemuvm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// driverDirs are the kernel-tree directories of the software RDMA
// drivers a build root holds, by provider.
var driverDirs = map[string]string{
	"rxe": "drivers/infiniband/sw/rxe",
	"siw": siwSourceDir,
}

// moduleNames are the module each provider's directory builds.
var moduleNames = map[string]string{"rxe": "rdma_rxe", "siw": "siw"}

// moduleConfigs are the Kconfig symbols that enable them.
var moduleConfigs = map[string]string{"rxe": "CONFIG_RDMA_RXE", "siw": "CONFIG_RDMA_SIW"}

// buildRoot is a chroot of a kernel's own Debian suite that can build
// that kernel's RDMA drivers out of tree: it holds the compiler the
// kernel's headers name, the headers and kbuild of the kernel's exact
// version, and, under /build/pristine/PROVIDER, the drivers' sources
// from the same version's linux-source. It is built once per kernel and
// kept under the cache's buildroot directory (about 450 MB).
type buildRoot struct {
	// Dir is the chroot's host path.
	Dir      string `json:"-"`
	Release  string `json:"release"`
	Version  string `json:"version"`
	Suite    string `json:"suite"`
	Compiler string `json:"compiler"`
	// Packages are the Debian packages unpacked, as name=version.
	Packages []string `json:"packages"`
	// Durations of the stages that made the root; Total covers them.
	Durations map[string]time.Duration `json:"durations"`
	Total     time.Duration            `json:"total"`
	// Cached says the root was already there.
	Cached bool `json:"-"`
}

// headers is the kernel's headers directory inside the chroot.
func (r *buildRoot) headers() string { return "/usr/src/linux-headers-" + r.Release }

// readBuildRoot reads a finished build root: root.json and chroot/ in
// dir.
func readBuildRoot(dir string) (*buildRoot, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "root.json"))
	if err != nil {
		return nil, err
	}
	var r buildRoot
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	r.Dir = filepath.Join(dir, "chroot")
	for _, p := range driverDirs {
		if _, err := os.Stat(filepath.Join(r.Dir, "build", "pristine", filepath.Base(p), "Makefile")); err != nil {
			return nil, err
		}
	}
	r.Cached = true
	return &r, nil
}

// ensureBuildRoot returns pk's build root, making it when the cache has
// none. Making one needs root, mmdebstrap and the Debian mirror.
func ensureBuildRoot(ctx context.Context, opts Options, pk *PreparedKernel, cache string) (*buildRoot, error) {
	if pk.Suite == "" {
		return nil, fmt.Errorf("vm: kernel modules are built only for Debian suite kernels, and %s is a custom kernel; build the module in its own tree and give its modules directory", pk.Image)
	}
	top := filepath.Join(cache, "buildroot")
	dir := filepath.Join(top, safeName(pk.Release+"_"+pk.Version))
	if r, err := readBuildRoot(dir); err == nil {
		return r, nil
	}
	if err := os.MkdirAll(top, 0o755); err != nil {
		return nil, fmt.Errorf("vm: create build root directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(cache, "lock-buildroot-"+pk.Suite))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r, err := readBuildRoot(dir); err == nil { // made while we waited
		return r, nil
	}
	r, err := makeBuildRoot(ctx, opts, pk, cache, top, dir)
	if err != nil {
		return nil, fmt.Errorf("vm: making the %s build chroot for kernel %s (%s): %w", pk.Suite, pk.Release, pk.Version, err)
	}
	return r, nil
}

func makeBuildRoot(ctx context.Context, opts Options, pk *PreparedKernel, cache, top, dir string) (*buildRoot, error) {
	if err := checkSiwTools(); err != nil {
		return nil, err
	}
	start := time.Now()
	r := &buildRoot{Release: pk.Release, Version: pk.Version, Suite: pk.Suite, Durations: map[string]time.Duration{}}
	lap := time.Now()
	stage := func(name string) {
		r.Durations[name] = time.Since(lap).Round(time.Millisecond)
		opts.logf("vm: build chroot: %s took %v", name, r.Durations[name])
		lap = time.Now()
	}
	a := &aptState{dir: filepath.Join(cache, "apt", pk.Suite), opts: opts}
	if err := a.ensureLists(ctx, pk.Suite); err != nil {
		return nil, err
	}
	pkgs, kbuild, err := siwPackages(ctx, a, pk)
	if err != nil {
		return nil, err
	}
	var debs []string
	for _, p := range pkgs {
		r.Packages = append(r.Packages, p.name+"="+p.version)
		deb, err := a.download(ctx, filepath.Join(cache, "debs"), p)
		if err != nil {
			return nil, err
		}
		debs = append(debs, deb)
	}
	stage("download")

	work, err := os.MkdirTemp(top, ".make-")
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	defer os.RemoveAll(work)
	staging, chroot := filepath.Join(work, "staging"), filepath.Join(work, "chroot")
	// The headers, their -common and kbuild: unpacked to a staging
	// directory, of which only usr/ goes into the chroot (bookworm's
	// packages also ship ./lib/modules, which would replace the merged-/usr
	// chroot's /lib symlink).
	for _, deb := range debs[:len(debs)-1] {
		if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, staging).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg-deb -x %s %s: %v; output: %s", deb, staging, err, tail(string(out), 5))
		}
	}
	hdrs := r.headers()
	kv, err := os.ReadFile(filepath.Join(staging, hdrs, ".kernelvariables"))
	if err != nil {
		return nil, fmt.Errorf("read the kernel's compiler from linux-headers-%s: %w", pk.Release, err)
	}
	if r.Compiler, err = kernelCompiler(string(kv)); err != nil {
		return nil, fmt.Errorf("%s/.kernelvariables: %w", hdrs, err)
	}
	stage("unpack")

	include := append([]string{r.Compiler, "make", "libc6-dev"}, kbuild...)
	args := []string{"--variant=essential", "--mode=root", "-q",
		"--aptopt=Acquire::Check-Valid-Until \"false\"",
		"--include=" + strings.Join(include, ","),
		pk.Suite, chroot, "-"}
	cmd := exec.CommandContext(ctx, "mmdebstrap", args...)
	cmd.Stdin = strings.NewReader(a.sourcesList(pk.Suite))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mmdebstrap %s: %v; expected a %s chroot with %s; output:\n%s", strings.Join(args, " "), err, pk.Suite, r.Compiler, tail(string(out), 15))
	}
	stage("chroot")

	if out, err := exec.CommandContext(ctx, "cp", "-a", filepath.Join(staging, "usr")+"/.", filepath.Join(chroot, "usr")+"/").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cp -a %s/usr into the chroot: %v; output: %s", staging, err, tail(string(out), 5))
	}
	if err := extractDriverSources(ctx, debs[len(debs)-1], pk.Version, filepath.Join(chroot, "build", "pristine")); err != nil {
		return nil, err
	}
	stage("sources")
	r.Total = time.Since(start).Round(time.Millisecond)
	meta, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(work, "root.json"), append(meta, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	os.RemoveAll(staging)
	os.RemoveAll(dir)
	if err := os.Rename(work, dir); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	r.Dir = filepath.Join(dir, "chroot")
	opts.logf("vm: build chroot for %s with %s made in %v, kept in %s", pk.Release, r.Compiler, r.Total, dir)
	return r, nil
}

// extractDriverSources streams the software RDMA drivers' directories
// (driverDirs) out of the linux-source .deb (a tarball inside the
// package) into dst/PROVIDER.
func extractDriverSources(ctx context.Context, deb, version, dst string) error {
	mm, err := majorMinor(version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	top := "linux-source-" + mm
	script := `set -o pipefail; dpkg-deb --fsys-tarfile "$1" | tar -xO "./usr/src/$2.tar.xz" | xz -dc | tar -x -C "$3" --strip-components=4 "$2/` + driverDirs["rxe"] + `" "$2/` + driverDirs["siw"] + `"`
	cmd := exec.CommandContext(ctx, "bash", "-c", script, "bash", deb, top, dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("extract %s/drivers/infiniband/sw/{rxe,siw} from %s: %v; output: %s", top, deb, err, tail(string(out), 5))
	}
	for p, d := range driverDirs {
		if _, err := os.Stat(filepath.Join(dst, p, "Makefile")); err != nil {
			return fmt.Errorf("extract %s/%s from %s left no Makefile in %s; expected the %s driver's sources", top, d, deb, filepath.Join(dst, p), p)
		}
	}
	return nil
}

// makeModule copies provider's pristine sources in r to a job directory
// of the chroot, applies patches (in order) there and builds the module.
// It returns the built .ko's host path and the job directory, which the
// caller removes.
func makeModule(ctx context.Context, r *buildRoot, provider string, patches []Patch) (ko, job string, err error) {
	job, err = os.MkdirTemp(filepath.Join(r.Dir, "build"), "job-")
	if err != nil {
		return "", "", fmt.Errorf("vm: %w", err)
	}
	pristine := filepath.Join(r.Dir, "build", "pristine", provider)
	if out, err := exec.CommandContext(ctx, "cp", "-a", pristine+"/.", job+"/").CombinedOutput(); err != nil {
		return "", job, fmt.Errorf("cp -a %s %s: %v; output: %s", pristine, job, err, tail(string(out), 5))
	}
	for _, p := range patches {
		if err := applyPatch(ctx, p, job); err != nil {
			return "", job, err
		}
	}
	inChroot := "/build/" + filepath.Base(job)
	cfg := moduleConfigs[provider]
	// /proc in a private mount namespace: sid's objtool reads it, and the
	// mount ends with the namespace.
	script := `mount -t proc proc "$1/proc" && exec chroot "$1" make -j"$5" -C "$2" M="$3" "$4=m" modules`
	mk := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", r.Dir, r.headers(), inChroot, cfg, strconv.Itoa(runtime.NumCPU()))
	if out, err := mk.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", job, ctx.Err()
		}
		return "", job, newBuildError(provider, r, string(out), inChroot+"/", err)
	}
	ko = filepath.Join(job, moduleNames[provider]+".ko")
	if _, err := os.Stat(ko); err != nil {
		return "", job, fmt.Errorf("make -C %s M=%s %s=m modules in the %s chroot succeeded but left no %s; expected the module there", r.headers(), inChroot, cfg, r.Suite, filepath.Base(ko))
	}
	return ko, job, nil
}
