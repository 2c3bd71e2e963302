package qemuvm

import (
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Host locations searched for the tools copied into the guest.
var (
	busyboxCandidates  = []string{"/bin/busybox", "/usr/bin/busybox"}
	rdmaCandidates     = []string{"/usr/bin/rdma", "/sbin/rdma", "/usr/sbin/rdma", "/bin/rdma"}
	providerGlobs      = []string{"/usr/lib/x86_64-linux-gnu/libibverbs/libPROV-rdmav*.so", "/usr/lib64/libibverbs/libPROV-rdmav*.so", "/usr/local/lib/libibverbs/libPROV-rdmav*.so"}
	driverFileDefaults = []string{"/etc/libibverbs.d/PROV.driver", "/usr/local/etc/libibverbs.d/PROV.driver"}
	// rdmacmLibs are librdmacm and the libgcc_s its threads dlopen (for
	// pthread_exit); a program not linked with librdmacm still finds them
	// in the guest, and ldd does not list a dlopened library.
	rdmacmLibs = []string{"/usr/lib/x86_64-linux-gnu/librdmacm.so.1", "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", "/lib/x86_64-linux-gnu/libgcc_s.so.1"}
)

// forProvider puts a provider name into candidate paths.
func forProvider(paths []string, provider string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.ReplaceAll(p, "PROV", provider)
	}
	return out
}

// firstExisting returns the first path that exists.
func firstExisting(paths []string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// findBusybox returns a static busybox.
func findBusybox(override string) (string, error) {
	p := override
	if p == "" {
		p = firstExisting(busyboxCandidates)
	}
	if p == "" {
		return "", &MissingToolError{Tool: "busybox (" + strings.Join(busyboxCandidates, " or ") + ")", Package: "busybox-static"}
	}
	if _, err := os.Stat(p); err != nil {
		return "", &MissingToolError{Tool: p, Package: "busybox-static", Detail: err.Error()}
	}
	static, err := isStaticELF(p)
	if err != nil {
		return "", fmt.Errorf("vm: busybox %s: %w; expected a statically linked ELF executable (Debian package busybox-static)", p, err)
	}
	if !static {
		return "", &MissingToolError{Tool: "a statically linked busybox", Package: "busybox-static",
			Detail: p + " is dynamically linked (it has an ELF interpreter)"}
	}
	return p, nil
}

// isStaticELF reports whether p is an ELF file without an interpreter.
func isStaticELF(p string) (bool, error) {
	f, err := elf.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// findHostFile returns override (which must exist) or the first default
// that exists; pkg names the Debian package for the error.
func findHostFile(what, override string, defaults []string, pkg string) (string, error) {
	if override != "" {
		if _, err := os.Stat(override); err != nil {
			return "", fmt.Errorf("vm: %s: stat %s: %w; expected the file to exist", what, override, err)
		}
		return override, nil
	}
	var found []string
	for _, d := range defaults {
		if strings.ContainsAny(d, "*?[") {
			m, _ := filepath.Glob(d)
			sort.Strings(m)
			found = append(found, m...)
		} else if _, err := os.Stat(d); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", &MissingToolError{Tool: what + " (" + strings.Join(defaults, ", ") + ")", Package: pkg}
	}
	return found[len(found)-1], nil
}

// lddLibs runs ldd on a host binary and returns the libraries it needs.
func lddLibs(ctx context.Context, bin string) ([]string, error) {
	if _, err := exec.LookPath("ldd"); err != nil {
		return nil, &MissingToolError{Tool: "ldd", Package: "libc-bin"}
	}
	out, err := exec.CommandContext(ctx, "ldd", bin).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "not a dynamic executable") {
		return nil, fmt.Errorf("vm: ldd %s: %v; output: %s", bin, err, strings.TrimSpace(string(out)))
	}
	libs, perr := parseLdd(string(out))
	if perr != nil {
		return nil, fmt.Errorf("vm: ldd %s: %w; expected every library to resolve on the host", bin, perr)
	}
	return libs, nil
}

// addWithLibs adds a host binary at its own path plus its libraries.
func addWithLibs(ctx context.Context, t *tree, bin string) error {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if err := t.addHostPath(abs); err != nil {
		return err
	}
	return addLibs(ctx, t, abs)
}

func addLibs(ctx context.Context, t *tree, bin string) error {
	libs, err := lddLibs(ctx, bin)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if err := t.addHostPath(l); err != nil {
			return err
		}
	}
	return nil
}

// addTree copies a host file or directory (recursively) to guest path dst.
func addTree(ctx context.Context, t *tree, dst, src string) error {
	st, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("vm: extra file for %s: stat %s: %w", dst, src, err)
	}
	if !st.IsDir() {
		if err := t.addHostFileAs(dst, src, 0); err != nil {
			return err
		}
		if st.Mode().Perm()&0o111 != 0 {
			// An executable may be dynamically linked: bring its libraries.
			if static, err := isStaticELF(src); err == nil && !static {
				return addLibs(ctx, t, src)
			}
		}
		return nil
	}
	return filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		g := path.Join(dst, filepath.ToSlash(rel))
		if de.IsDir() {
			return t.mkdirAll(g)
		}
		if !de.Type().IsRegular() {
			return nil
		}
		return t.addHostFileAs(g, p, 0)
	})
}

// addExtraFiles adds Options.ExtraFiles (guest path -> host file or
// directory), in guest path order, with the libraries of executables.
func addExtraFiles(ctx context.Context, t *tree, files map[string]string) error {
	extra := make([]string, 0, len(files))
	for g := range files {
		extra = append(extra, g)
	}
	sort.Strings(extra)
	for _, g := range extra {
		if !path.IsAbs(g) {
			return fmt.Errorf("vm: ExtraFiles guest path %q is not absolute", g)
		}
		if c := path.Clean(g); c == "/" || c == guestRoot || strings.HasPrefix(c, guestRoot+"/") || c == "/init" {
			return fmt.Errorf("vm: ExtraFiles guest path %q is reserved (/, /init and %s are the runner's)", g, guestRoot)
		}
		if err := addTree(ctx, t, g, files[g]); err != nil {
			return err
		}
	}
	return nil
}

// addUserland adds Options.ExtraFiles and then, when user is a suite's
// rdma-core, puts it in place of the host's. The order matters: an
// extra executable's host libibverbs must be replaced too, not clash
// with the suite's afterwards.
func addUserland(ctx context.Context, t *tree, opts Options, prov string, user *Userspace) error {
	if err := addExtraFiles(ctx, t, opts.ExtraFiles); err != nil {
		return err
	}
	if user == nil || user.Root == "" {
		return nil
	}
	return user.addUserspace(t, opts.Program, prov, opts.ExtraFiles)
}

// buildInitramfs assembles the guest image into initrd and returns the
// module load order.
// replace maps module names to host files loaded instead of the
// kernel's own (siw, which Debian does not build, or a patched module);
// user is the rdma-core put in place of the host's (nil: the host's).
func buildInitramfs(ctx context.Context, opts Options, pk *PreparedKernel, replace map[string]string, user *Userspace, nonce, work, initrd string) ([]string, error) {
	busybox, err := findBusybox(opts.Busybox)
	if err != nil {
		return nil, err
	}
	rdma, err := findHostFile("rdma (iproute2)", opts.Rdma, rdmaCandidates, "iproute2")
	if err != nil {
		return nil, err
	}
	prov := opts.provider()
	provOverride, driverOverride := "", ""
	if prov == "rxe" {
		provOverride, driverOverride = opts.RXEProvider, opts.RXEDriverFile
	}
	provider, err := findHostFile(prov+" provider lib"+prov+"-rdmav*.so", provOverride, forProvider(providerGlobs, prov), "ibverbs-providers")
	if err != nil {
		return nil, err
	}
	driverFile, err := findHostFile(prov+".driver", driverOverride, forProvider(driverFileDefaults, prov), "ibverbs-providers")
	if err != nil {
		return nil, err
	}

	src, err := newDirModules(ctx, pk.ModulesDir, filepath.Join(work, "modules"))
	if err != nil {
		return nil, err
	}
	required, optional := RequiredModules, OptionalModules
	if prov == "siw" {
		if replace["siw"] == "" {
			return nil, fmt.Errorf("vm: provider siw without a siw.ko for kernel %s", pk.Release)
		}
		required, optional = SiwRequiredModules, SiwOptionalModules
	}
	for name, file := range replace {
		src.files[name] = file
	}
	order, err := LoadOrder(src, required, optional)
	if err != nil {
		return nil, fmt.Errorf("%w (kernel %s)", err, pk.ModulesDir)
	}

	t := newTree()
	if err := t.addHostFileAs(guestBusybox, busybox, 0o755); err != nil {
		return nil, err
	}
	for _, m := range order {
		if err := t.addHostFileAs(guestModules+"/"+m+".ko", src.plain[m], 0o644); err != nil {
			return nil, err
		}
	}
	progGuest := guestProg + "/" + filepath.Base(opts.Program)
	if err := t.addHostFileAs(progGuest, opts.Program, 0o755); err != nil {
		return nil, err
	}
	if err := addLibs(ctx, t, opts.Program); err != nil {
		return nil, err
	}
	if err := addWithLibs(ctx, t, rdma); err != nil {
		return nil, err
	}
	if err := addWithLibs(ctx, t, provider); err != nil {
		return nil, err
	}
	if err := t.addHostFileAs("/etc/libibverbs.d/"+prov+".driver", driverFile, 0o644); err != nil {
		return nil, err
	}
	for _, l := range rdmacmLibs {
		if _, err := os.Stat(l); err == nil && !t.has(l) {
			if err := addWithLibs(ctx, t, l); err != nil {
				return nil, err
			}
		}
	}
	if err := addUserland(ctx, t, opts, prov, user); err != nil {
		return nil, err
	}
	// Minimal account databases for programs that look up the user.
	if !t.has("/etc/passwd") {
		if err := t.addData("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644); err != nil {
			return nil, err
		}
		if err := t.addData("/etc/group", []byte("root:x:0:\n"), 0o644); err != nil {
			return nil, err
		}
	}
	if opts.Dir != "" {
		if err := t.mkdirAll(opts.Dir); err != nil {
			return nil, err
		}
	}
	script := initScript(initConfig{Nonce: nonce, Modules: order, Program: progGuest, Provider: prov,
		Args: opts.Args, Env: opts.Env, Dir: opts.Dir, WatchKernel: len(opts.Patches) > 0})
	if err := t.addData("/init", []byte(script), 0o755); err != nil {
		return nil, err
	}
	if err := t.writeGzipCpio(initrd); err != nil {
		return nil, err
	}
	return order, nil
}
