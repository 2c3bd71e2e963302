package qemuvm

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Where the guest's rdma-core comes from (Options.RDMACore).
const (
	// RDMACoreSuite runs the rdma-core of the kernel's own Debian suite
	// (libibverbs1, ibverbs-providers, librdmacm and the libraries they
	// need, glibc included), downloaded and cached like the kernel.
	RDMACoreSuite = "suite"
	// RDMACoreHost copies the host's libibverbs and provider in.
	RDMACoreHost = "host"
)

// RDMACores returns the values Options.RDMACore accepts besides ""
// (suite for a suite kernel, host for a custom one).
func RDMACores() []string { return []string{RDMACoreSuite, RDMACoreHost} }

// rdmaCore returns the effective Options.RDMACore.
func (o Options) rdmaCore() string {
	if o.RDMACore != "" {
		return o.RDMACore
	}
	if o.Kernel.Suite == "" {
		return RDMACoreHost
	}
	return RDMACoreSuite
}

// Userspace describes the rdma-core a guest ran.
type Userspace struct {
	// Source is RDMACoreSuite or RDMACoreHost.
	Source string `json:"source"`
	// Suite is the Debian suite the libraries came from ("" for host).
	Suite string `json:"suite,omitempty"`
	// RDMACoreVersion and LibibverbsVersion are the Debian versions of
	// ibverbs-providers and libibverbs1.
	RDMACoreVersion   string `json:"rdma_core"`
	LibibverbsVersion string `json:"libibverbs"`
	// Packages are the Debian packages unpacked, as name=version.
	Packages []string `json:"packages,omitempty"`
	// Root is the unpacked tree on the host ("" for host).
	Root string `json:"-"`
	// Patched describes a provider rebuilt with patches; nil without.
	Patched *RDMACoreBuild `json:"patched,omitempty"`
}

// String names the rdma-core as reports show it: "56.1-1 (trixie)",
// "44.0-2 (host)", "56.1-1 (trixie) + fix.patch".
func (u *Userspace) String() string {
	where := u.Suite
	if u.Source == RDMACoreHost {
		where = "host"
	}
	s := fmt.Sprintf("%s (%s)", u.RDMACoreVersion, where)
	if u.Patched != nil {
		s += " + " + strings.Join(u.Patched.PatchNames, " + ")
	}
	return s
}

// userspacePackages are the suite's packages a guest's rdma-core is made
// of. Alternatives are tried in order (trixie renamed librdmacm1 for the
// 64-bit time_t transition). glibc comes too: trixie's and sid's
// libibverbs need a newer one than the host's.
var userspacePackages = [][]string{
	{"libibverbs1"}, {"ibverbs-providers"}, {"librdmacm1t64", "librdmacm1"},
	{"libnl-3-200"}, {"libnl-route-3-200"}, {"libc6"}, {"libgcc-s1"},
}

// SuiteUserspace returns the rdma-core of a Debian suite, unpacked
// under opts.CacheDir (downloaded the first time, like a kernel).
func SuiteUserspace(ctx context.Context, opts Options, suite string) (*Userspace, error) {
	if _, ok := suiteSources[suite]; !ok {
		return nil, &UnknownSuiteError{Suite: suite}
	}
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("vm: create cache directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(cache, "lock-"+suite))
	if err != nil {
		return nil, err
	}
	defer unlock()
	a := &aptState{dir: filepath.Join(cache, "apt", suite), opts: opts}
	if err := a.ensureLists(ctx, suite); err != nil {
		return nil, err
	}
	u := &Userspace{Source: RDMACoreSuite, Suite: suite}
	var pkgs []debPkg
	for _, alts := range userspacePackages {
		var rec map[string]string
		var errs []string
		for _, name := range alts {
			r, err := a.showRecord(ctx, name)
			if err == nil {
				rec = r
				pkgs = append(pkgs, debPkg{name, r["Version"]})
				break
			}
			errs = append(errs, err.Error())
		}
		if rec == nil {
			return nil, fmt.Errorf("vm: rdma-core of %s: none of %s is in the suite: %s", suite, strings.Join(alts, ", "), strings.Join(errs, "; "))
		}
		switch alts[0] {
		case "libibverbs1":
			u.LibibverbsVersion = rec["Version"]
		case "ibverbs-providers":
			u.RDMACoreVersion = rec["Version"]
		}
	}
	for _, p := range pkgs {
		u.Packages = append(u.Packages, p.name+"="+p.version)
	}
	sum := sha256.Sum256([]byte(strings.Join(u.Packages, "\n")))
	root := filepath.Join(cache, "rdma-core", safeName(suite+"_"+u.RDMACoreVersion+"_"+hex.EncodeToString(sum[:6])))
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		opts.logf("vm: fetching %s", strings.Join(u.Packages, " "))
		if err := a.fetchInto(ctx, filepath.Join(cache, "debs"), pkgs, root); err != nil {
			return nil, err
		}
		meta, _ := json.MarshalIndent(u, "", "  ")
		if err := os.WriteFile(filepath.Join(root, "userspace.json"), append(meta, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("vm: %w", err)
		}
	}
	u.Root = root
	return u, nil
}

// fetchInto downloads pkgs into debsDir (those not there yet) and
// unpacks them all into root.
func (a *aptState) fetchInto(ctx context.Context, debsDir string, pkgs []debPkg, root string) error {
	var debs []string
	for _, p := range pkgs {
		deb, err := a.download(ctx, debsDir, p)
		if err != nil {
			return err
		}
		debs = append(debs, deb)
	}
	return unpackDebs(ctx, debs, root)
}

// HostUserspace describes the host's rdma-core (dpkg's versions).
func HostUserspace(ctx context.Context) *Userspace {
	return &Userspace{Source: RDMACoreHost, RDMACoreVersion: dpkgVersion(ctx, "ibverbs-providers"),
		LibibverbsVersion: dpkgVersion(ctx, "libibverbs1")}
}

// inRoot returns the file under root that stands for the absolute guest
// path p, following symbolic links inside root. Debian packages of
// bookworm still ship /lib/... while newer ones ship /usr/lib/...: a
// path missing under one is looked up under the other. It returns ""
// when root has no such file.
func inRoot(root, p string) string {
	return inRootDepth(root, clean(p), 0)
}

func inRootDepth(root, p string, depth int) string {
	if depth > 20 {
		return ""
	}
	cands := []string{p}
	if rest, ok := strings.CutPrefix(p, "usr/"); ok {
		cands = append(cands, rest)
	} else {
		cands = append(cands, "usr/"+p)
	}
	for _, c := range cands {
		full := filepath.Join(root, filepath.FromSlash(c))
		fi, err := os.Lstat(full)
		if err != nil {
			continue
		}
		switch {
		case fi.Mode().IsRegular():
			return full
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return ""
			}
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(c), target)
			}
			return inRootDepth(root, clean(target), depth+1)
		}
	}
	return ""
}

// substitute replaces, in the guest tree, every file or symbolic link
// that the suite's rdma-core (or a library it needs) also holds with the
// suite's file. A symbolic link to a file of the same directory stays a
// link, so that the guest sees the real file name (libibverbs.so.1.14.56.1).
// It returns the guest paths replaced.
func (u *Userspace) substitute(t *tree, keep ...string) ([]string, error) {
	keys := make([]string, 0, len(t.entries))
	for k, e := range t.entries {
		if e.kind != kindDir && !under(k, keep) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var replaced []string
	for _, k := range keys {
		src := u.find("/" + k)
		if src == "" {
			continue
		}
		fi, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("vm: rdma-core of %s: %w", u.Suite, err)
		}
		mode := uint32(fi.Mode().Perm())
		dir, base := path.Split(k)
		if real := filepath.Base(src); real != base {
			t.entries[k] = &entry{kind: kindSymlink, target: real, mode: 0o777}
			t.entries[dir+real] = &entry{kind: kindFile, hostPath: src, mode: mode}
		} else {
			t.entries[k] = &entry{kind: kindFile, hostPath: src, mode: mode}
		}
		replaced = append(replaced, "/"+k)
	}
	return replaced, nil
}

// under reports whether the guest path k (without its leading slash) is
// one of dirs or lies below one of them.
func under(k string, dirs []string) bool {
	for _, d := range dirs {
		d = clean(d)
		if k == d || strings.HasPrefix(k, d+"/") {
			return true
		}
	}
	return false
}

// Guest paths that must come from the suite's rdma-core, per provider.
func rdmaCoreGuestFiles(provider, providerLib string) []string {
	return []string{"/usr/lib/x86_64-linux-gnu/libibverbs.so.1", providerLib, "/etc/libibverbs.d/" + provider + ".driver"}
}

// addUserspace adds the suite's provider library and .driver file to
// the guest at the paths the host uses, then puts the suite's files in
// place of the host's wherever the suite has them, and checks that the
// guest's libibverbs, provider and .driver file are the suite's and that
// the program's libibverbs and librdmacm symbols are all defined there.
// extra are guest paths of files the caller placed deliberately (Options.
// ExtraFiles): they stay the host's, their libraries become the suite's,
// and their imports are checked like the program's.
func (u *Userspace) addUserspace(t *tree, prog, provider string, extra map[string]string) error {
	pattern := filepath.Join(u.Root, "usr/lib/x86_64-linux-gnu/libibverbs", "lib"+provider+"-rdmav*.so")
	libs, _ := filepath.Glob(pattern)
	if len(libs) == 0 {
		return fmt.Errorf("vm: rdma-core %s of %s has no %s; expected the provider library of %s in ibverbs-providers", u.RDMACoreVersion, u.Suite, pattern, provider)
	}
	sort.Strings(libs)
	providerLib := "/usr/lib/x86_64-linux-gnu/libibverbs/" + filepath.Base(libs[len(libs)-1])
	if !t.has(providerLib) {
		if err := t.addHostFileAs(providerLib, libs[len(libs)-1], 0o644); err != nil {
			return err
		}
	}
	keep := make([]string, 0, len(extra))
	for g := range extra {
		keep = append(keep, "/"+clean(g))
	}
	replaced, err := u.substitute(t, keep...)
	if err != nil {
		return err
	}
	// The host's provider under another ABI suffix (rdmav34 beside sid's
	// rdmav65) would never be loaded: leave it out.
	for k := range t.entries {
		if path.Dir(k) == "usr/lib/x86_64-linux-gnu/libibverbs" && !slices.Contains(replaced, "/"+k) {
			delete(t.entries, k)
		}
	}
	var missing []string
	for _, want := range rdmaCoreGuestFiles(provider, providerLib) {
		if !slices.Contains(replaced, "/"+clean(want)) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("vm: rdma-core %s of %s: the guest's %s did not come from it (replaced: %s); expected the suite's files there",
			u.RDMACoreVersion, u.Suite, strings.Join(missing, ", "), strings.Join(replaced, ", "))
	}
	for _, lib := range []string{"libibverbs.so.1", "librdmacm.so.1"} {
		file := inRoot(u.Root, "/usr/lib/x86_64-linux-gnu/"+lib)
		if file == "" {
			continue
		}
		progs := []string{prog}
		for _, src := range extra {
			if static, err := isStaticELF(src); err == nil && !static {
				progs = append(progs, src)
			}
		}
		for _, p := range progs {
			if err := checkImports(p, lib, file); err != nil {
				return fmt.Errorf("vm: rdma-core %s of %s: %w", u.RDMACoreVersion, u.Suite, err)
			}
		}
	}
	return nil
}

// checkImports checks that every symbol the ELF program prog imports
// from the library soname, at the version it was linked against, is
// defined by the library file lib. Versioned symbols are how libibverbs
// keeps a program built against an older release working with a newer
// one: a missing one would fail only when the guest loads it.
func checkImports(prog, soname, lib string) error {
	pf, err := elf.Open(prog)
	if err != nil {
		return fmt.Errorf("read the imports of %s: %w", prog, err)
	}
	defer pf.Close()
	imports, err := pf.ImportedSymbols()
	if err != nil {
		return fmt.Errorf("read the imports of %s: %w", prog, err)
	}
	lf, err := elf.Open(lib)
	if err != nil {
		return fmt.Errorf("read the symbols of %s: %w", lib, err)
	}
	defer lf.Close()
	syms, err := lf.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("read the symbols of %s: %w", lib, err)
	}
	defined := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			defined[s.Name+"@"+s.Version] = true
			defined[s.Name+"@"] = true
		}
	}
	var missing []string
	for _, s := range imports {
		if s.Library != soname {
			continue
		}
		if !defined[s.Name+"@"+s.Version] {
			missing = append(missing, s.Name+"@"+s.Version)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s imports %s from %s, which %s does not define; expected every imported symbol at its version", prog, strings.Join(missing, ", "), soname, lib)
	}
	return nil
}

// guestUserspace returns the rdma-core Options.RDMACore selects for a
// guest booting pk.
func guestUserspace(ctx context.Context, opts Options, pk *PreparedKernel) (*Userspace, error) {
	if opts.rdmaCore() == RDMACoreHost {
		if len(opts.RDMACorePatches) > 0 {
			return nil, fmt.Errorf("vm: Options.RDMACorePatches with the host's rdma-core; expected RDMACore %q (patches apply to a suite's source)", RDMACoreSuite)
		}
		return HostUserspace(ctx), nil
	}
	if pk.Suite == "" {
		return nil, fmt.Errorf("vm: Options.RDMACore is %q with the custom kernel %s, which belongs to no Debian suite; expected %q", RDMACoreSuite, pk.Image, RDMACoreHost)
	}
	u, err := SuiteUserspace(ctx, opts, pk.Suite)
	if err != nil || len(opts.RDMACorePatches) == 0 {
		return u, err
	}
	return PatchedUserspace(ctx, opts, u, opts.provider(), opts.RDMACorePatches)
}
