package qemuvm

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// RequiredModules are the kernel modules an rxe guest always needs, in
// no particular order; their dependencies are found from each module's
// depends= field.
var RequiredModules = []string{"rdma_rxe", "ib_uverbs", "dummy"}

// OptionalModules are loaded when the kernel ships them as modules.
// crc32_generic is needed by rxe on 6.1 and 6.12 (rxe asks the crypto
// API for "crc32"); newer kernels no longer have it. rdma_ucm brings
// the rdma_cm stack (rdma_cm, iw_cm, ib_cm) for librdmacm.
var OptionalModules = []string{"crc32_generic", "rdma_ucm"}

// SiwRequiredModules are the kernel modules a siw guest needs; siw
// itself is built for the kernel (SiwModule). ib_uverbs is named because
// siw on 6.1 and 7.2 does not depend on it, and no device reaches
// userspace without it.
var SiwRequiredModules = []string{"siw", "ib_uverbs", "rdma_ucm", "dummy"}

// SiwOptionalModules are loaded first when present. crc32c_generic
// registers crc32c before libcrc32c (on 6.1 and 6.12) asks for it: it is
// libcrc32c's soft dependency "pre: crc32c", an alias that LoadOrder
// cannot resolve by file name, and without it libcrc32c and siw fail to
// load.
var SiwOptionalModules = []string{"crc32c_generic"}

// ModuleInfo is the part of a kernel module's .modinfo section that the
// runner uses.
type ModuleInfo struct {
	Name    string   // module name, '-' replaced by '_'
	Depends []string // hard dependencies (depends=)
	PreDeps []string // softdep pre: modules
}

// modName normalises a module name or file name to the kernel's form.
func modName(s string) string {
	s = filepath.Base(s)
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		s = strings.TrimSuffix(s, ext)
	}
	s = strings.TrimSuffix(s, ".ko")
	return strings.ReplaceAll(s, "-", "_")
}

// ParseModinfo parses the NUL-separated key=value strings of a module's
// .modinfo section. fallbackName is used when there is no name= key
// (older kernels).
func ParseModinfo(section []byte, fallbackName string) ModuleInfo {
	mi := ModuleInfo{Name: modName(fallbackName)}
	for _, kv := range bytes.Split(section, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok {
			continue
		}
		switch k {
		case "name":
			if v != "" {
				mi.Name = modName(v)
			}
		case "depends":
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					mi.Depends = append(mi.Depends, modName(d))
				}
			}
		case "softdep":
			// e.g. "pre: crc32c post: foo"
			in := false
			for _, f := range strings.Fields(v) {
				switch f {
				case "pre:":
					in = true
				case "post:":
					in = false
				default:
					if in {
						mi.PreDeps = append(mi.PreDeps, modName(f))
					}
				}
			}
		}
	}
	return mi
}

// readModinfo extracts the .modinfo section of an uncompressed module.
func readModinfo(koPath string) (ModuleInfo, error) {
	f, err := elf.Open(koPath)
	if err != nil {
		return ModuleInfo{}, fmt.Errorf("modules: open %s as ELF: %w", koPath, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return ModuleInfo{}, fmt.Errorf("modules: %s has no .modinfo section; is it a kernel module?", koPath)
	}
	data, err := sec.Data()
	if err != nil {
		return ModuleInfo{}, fmt.Errorf("modules: read .modinfo of %s: %w", koPath, err)
	}
	return ParseModinfo(data, koPath), nil
}

// ModuleSource finds and decompresses modules by name. The default
// implementation reads a modules directory; tests substitute a fake.
type ModuleSource interface {
	// Info returns the module's metadata; found is false when the
	// kernel has no such module file.
	Info(name string) (mi ModuleInfo, found bool, err error)
	// BuiltIn reports whether the module is compiled into the kernel.
	BuiltIn(name string) bool
}

// LoadOrder returns the modules to insmod, dependencies first, for the
// given required and optional roots. Required modules (and all
// dependencies) that are neither files nor built in are an error;
// optional roots and soft pre-dependencies that are absent are skipped.
// Built-in modules are left out. Ties are broken by name, so the
// result is deterministic.
func LoadOrder(src ModuleSource, required, optional []string) ([]string, error) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var order []string
	var visit func(name string, chain []string, mustExist bool) error
	visit = func(name string, chain []string, mustExist bool) error {
		name = modName(name)
		switch state[name] {
		case visiting:
			return fmt.Errorf("modules: dependency cycle: %s -> %s", strings.Join(chain, " -> "), name)
		case done:
			return nil
		}
		mi, found, err := src.Info(name)
		if err != nil {
			return err
		}
		if !found {
			if src.BuiltIn(name) || !mustExist {
				state[name] = done
				return nil
			}
			via := ""
			if len(chain) > 0 {
				via = " (needed by " + strings.Join(chain, " -> ") + ")"
			}
			return fmt.Errorf("modules: kernel module %q%s: no module file found and not listed in modules.builtin", name, via)
		}
		state[name] = visiting
		chain = append(chain, name)
		deps := append([]string(nil), mi.Depends...)
		sort.Strings(deps)
		for _, d := range deps {
			if err := visit(d, chain, true); err != nil {
				return err
			}
		}
		pre := append([]string(nil), mi.PreDeps...)
		sort.Strings(pre)
		for _, d := range pre {
			if err := visit(d, chain, false); err != nil {
				return err
			}
		}
		state[name] = done
		order = append(order, name)
		return nil
	}
	// Optional modules first: crc32_generic must be registered before
	// rxe looks up its crc32 transform.
	opt := append([]string(nil), optional...)
	sort.Strings(opt)
	for _, r := range opt {
		if err := visit(r, nil, false); err != nil {
			return nil, err
		}
	}
	req := append([]string(nil), required...)
	sort.Strings(req)
	for _, r := range req {
		if err := visit(r, nil, true); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// dirModules is a ModuleSource over a kernel modules directory
// (lib/modules/RELEASE), decompressing into outDir as it goes.
type dirModules struct {
	ctx     context.Context
	root    string
	outDir  string
	files   map[string]string // module name -> file path
	builtin map[string]bool
	infos   map[string]ModuleInfo
	plain   map[string]string // module name -> decompressed .ko path
}

func newDirModules(ctx context.Context, root, outDir string) (*dirModules, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("modules: kernel modules directory %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("modules: kernel modules path %s is not a directory", root)
	}
	d := &dirModules{ctx: ctx, root: root, outDir: outDir, files: map[string]string{},
		builtin: map[string]bool{}, infos: map[string]ModuleInfo{}, plain: map[string]string{}}
	err = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		b := de.Name()
		if strings.HasSuffix(b, ".ko") || strings.HasSuffix(b, ".ko.xz") || strings.HasSuffix(b, ".ko.zst") || strings.HasSuffix(b, ".ko.gz") {
			n := modName(b)
			if _, dup := d.files[n]; !dup {
				d.files[n] = p
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("modules: scan %s: %w", root, err)
	}
	if len(d.files) == 0 {
		return nil, fmt.Errorf("modules: no *.ko, *.ko.xz, *.ko.zst or *.ko.gz files under %s; expected a lib/modules/RELEASE directory", root)
	}
	if b, err := os.ReadFile(filepath.Join(root, "modules.builtin")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				d.builtin[modName(l)] = true
			}
		}
	}
	return d, nil
}

func (d *dirModules) BuiltIn(name string) bool { return d.builtin[name] }

func (d *dirModules) Info(name string) (ModuleInfo, bool, error) {
	if mi, ok := d.infos[name]; ok {
		return mi, true, nil
	}
	src, ok := d.files[name]
	if !ok {
		return ModuleInfo{}, false, nil
	}
	ko, err := d.decompress(name, src)
	if err != nil {
		return ModuleInfo{}, true, err
	}
	mi, err := readModinfo(ko)
	if err != nil {
		return ModuleInfo{}, true, err
	}
	mi.Name = name
	d.infos[name] = mi
	return mi, true, nil
}

// decompress writes an uncompressed copy of the module into outDir
// (busybox insmod cannot read compressed modules) and returns its path.
func (d *dirModules) decompress(name, src string) (string, error) {
	if p, ok := d.plain[name]; ok {
		return p, nil
	}
	dst := filepath.Join(d.outDir, name+".ko")
	if err := os.MkdirAll(d.outDir, 0o755); err != nil {
		return "", fmt.Errorf("modules: %w", err)
	}
	var data []byte
	var err error
	switch {
	case strings.HasSuffix(src, ".ko"):
		data, err = os.ReadFile(src)
	case strings.HasSuffix(src, ".gz"):
		data, err = gunzipFile(src)
	case strings.HasSuffix(src, ".xz"):
		data, err = runTool(d.ctx, "xz-utils", "xz", "-dc", src)
	case strings.HasSuffix(src, ".zst"):
		data, err = runTool(d.ctx, "zstd", "zstd", "-dc", src)
	}
	if err != nil {
		return "", fmt.Errorf("modules: decompress %s: %w", src, err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return "", fmt.Errorf("modules: %w", err)
	}
	d.plain[name] = dst
	return dst, nil
}

func gunzipFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// runTool runs a host command and returns its stdout. A missing
// command is reported with the package that provides it.
func runTool(ctx context.Context, pkg, name string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath(name); err != nil {
		return nil, &MissingToolError{Tool: name, Package: pkg}
	}
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w; stderr: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
