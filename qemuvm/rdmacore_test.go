package qemuvm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles makes files (path -> contents) and symbolic links (path ->
// "->target") under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(c, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSubstituteSuiteUserspace: the guest's host libibverbs, provider,
// .driver file and loader are replaced by a suite's, found under /lib or
// /usr/lib whichever the suite's packages use, and the guest sees the
// suite's real file names; what the suite lacks stays the host's.
func TestSubstituteSuiteUserspace(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		// bookworm-style packages ship /lib, newer ones /usr/lib.
		"lib/x86_64-linux-gnu/libc.so.6":                        "suite libc",
		"lib/x86_64-linux-gnu/ld-linux-x86-64.so.2":             "suite ld.so",
		"lib64/ld-linux-x86-64.so.2":                            "->/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.1":      "suite ibverbs",
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1":              "->libibverbs.so.1.14.56.1",
		"usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so": "suite rxe",
		"usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so": "suite siw",
		"etc/libibverbs.d/rxe.driver":                           "driver rxe\n",
		"usr/share/doc/libibverbs1/changelog.Debian.gz":         "doc",
	})
	tr := newTree()
	for p, e := range map[string]*entry{
		"/usr/lib/x86_64-linux-gnu/libibverbs.so.1":              {kind: kindSymlink, target: "libibverbs.so.1.14.44.0"},
		"/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0":      {kind: kindFile, data: []byte("host ibverbs")},
		"/usr/lib/x86_64-linux-gnu/libc.so.6":                    {kind: kindFile, data: []byte("host libc")},
		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2":         {kind: kindFile, data: []byte("host ld.so")},
		"/usr/lib64/ld-linux-x86-64.so.2":                        {kind: kindSymlink, target: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
		"/usr/lib/x86_64-linux-gnu/libmnl.so.0":                  {kind: kindFile, data: []byte("host mnl")},
		"/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so": {kind: kindFile, data: []byte("host rxe")},
		"/etc/libibverbs.d/rxe.driver":                           {kind: kindFile, data: []byte("host driver")},
	} {
		if err := tr.put(p, e); err != nil {
			t.Fatal(err)
		}
	}
	u := &Userspace{Source: RDMACoreSuite, Suite: "trixie", RDMACoreVersion: "56.1-1", Root: root}
	replaced, err := u.substitute(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(replaced) != 6 {
		t.Errorf("substitute replaced %v; want the 6 guest paths the suite holds", replaced)
	}
	want := map[string]string{ // guest path -> host file (under root) or "->target" or "=data"
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1":              "->libibverbs.so.1.14.56.1",
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.1":      "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.1",
		"usr/lib/x86_64-linux-gnu/libc.so.6":                    "lib/x86_64-linux-gnu/libc.so.6",
		"usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2":         "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"usr/lib64/ld-linux-x86-64.so.2":                        "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so": "usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so",
		"etc/libibverbs.d/rxe.driver":                           "etc/libibverbs.d/rxe.driver",
		"usr/lib/x86_64-linux-gnu/libmnl.so.0":                  "=host mnl",
	}
	for p, w := range want {
		e := tr.entries[p]
		var got string
		switch {
		case e == nil:
			got = "(missing)"
		case e.kind == kindSymlink:
			got = "->" + e.target
		case e.hostPath != "":
			got = strings.TrimPrefix(e.hostPath, root+"/")
		default:
			got = "=" + string(e.data)
		}
		if got != w {
			t.Errorf("guest %s is %q; want %q", p, got, w)
		}
	}
	if s := u.String(); s != "56.1-1 (trixie)" {
		t.Errorf("Userspace.String() = %q; want %q", s, "56.1-1 (trixie)")
	}
}

// TestAddUserspaceNeedsTheSuitesProvider: a suite without the
// provider's library is an error naming what was looked for.
func TestAddUserspaceNeedsTheSuitesProvider(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so": "rxe"})
	u := &Userspace{Source: RDMACoreSuite, Suite: "sid", RDMACoreVersion: "65.0-1.1", Root: root}
	err := u.addUserspace(newTree(), "/nonexistent", "siw", nil)
	if err == nil || !strings.Contains(err.Error(), "libsiw-rdmav*.so") {
		t.Errorf("addUserspace for siw without libsiw = %v; want an error naming libsiw-rdmav*.so", err)
	}
	// The provider is there but the guest has no libibverbs.so.1 to replace.
	err = u.addUserspace(newTree(), "/nonexistent", "rxe", nil)
	if err == nil || !strings.Contains(err.Error(), "libibverbs.so.1") || !strings.Contains(err.Error(), "rxe.driver") {
		t.Errorf("addUserspace without a guest libibverbs = %v; want an error naming libibverbs.so.1 and rxe.driver", err)
	}
}

// TestCheckImports holds a host program linked with libibverbs to the
// host's libibverbs (every import defined) and to libc (none defined).
func TestCheckImports(t *testing.T) {
	prog := firstExisting([]string{"/usr/bin/ibv_devinfo"})
	verbs := inRoot("/", "/usr/lib/x86_64-linux-gnu/libibverbs.so.1")
	libc := inRoot("/", "/usr/lib/x86_64-linux-gnu/libc.so.6")
	if prog == "" || verbs == "" || libc == "" {
		t.Skip("needs ibverbs-utils' ibv_devinfo, libibverbs1 and libc6 on the host")
	}
	if err := checkImports(prog, "libibverbs.so.1", verbs); err != nil {
		t.Errorf("checkImports(ibv_devinfo, host libibverbs) = %v; want nil", err)
	}
	err := checkImports(prog, "libibverbs.so.1", libc)
	if err == nil || !strings.Contains(err.Error(), "ibv_get_device_list@IBVERBS_1.1") {
		t.Errorf("checkImports(ibv_devinfo, libc as libibverbs) = %v; want ibv_get_device_list@IBVERBS_1.1 missing", err)
	}
	if err := checkImports("/nonexistent", "libibverbs.so.1", verbs); err == nil {
		t.Error("checkImports of a missing program = nil; want an error")
	}
}

// TestRDMACoreDefault: a suite kernel runs its suite's rdma-core unless
// told otherwise, a custom kernel the host's, and a custom kernel cannot
// ask for a suite's.
func TestRDMACoreDefault(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Kernel: SuiteKernel("sid")}, RDMACoreSuite},
		{Options{Kernel: SuiteKernel("sid"), RDMACore: RDMACoreHost}, RDMACoreHost},
		{Options{Kernel: CustomKernel("/k", "/m")}, RDMACoreHost},
	} {
		if got := c.opts.rdmaCore(); got != c.want {
			t.Errorf("rdmaCore() of %+v = %q; want %q", c.opts, got, c.want)
		}
	}
	_, err := guestUserspace(context.Background(), Options{RDMACore: RDMACoreSuite}, &PreparedKernel{Image: "/k"})
	if err == nil || !strings.Contains(err.Error(), "no Debian suite") {
		t.Errorf("guestUserspace(suite, custom kernel) = %v; want an error saying it has no suite", err)
	}
}

// TestAddUserspaceLeavesOutTheHostsProvider: the guest gets the suite's
// provider under its ABI suffix (sid's rdmav65) and not the host's
// (rdmav34), which the suite's libibverbs would never load.
func TestAddUserspaceLeavesOutTheHostsProvider(t *testing.T) {
	prog := hostIbvDevinfo(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav65.so": "suite rxe",
		"etc/libibverbs.d/rxe.driver":                           "driver rxe\n",
	})
	copyHostVerbs(t, root, "usr/lib/x86_64-linux-gnu/libibverbs.so.1")
	tr := newTree()
	for p, e := range map[string]*entry{
		"/usr/lib/x86_64-linux-gnu/libibverbs.so.1":              {kind: kindFile, data: []byte("host ibverbs")},
		"/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so": {kind: kindFile, data: []byte("host rxe")},
		"/etc/libibverbs.d/rxe.driver":                           {kind: kindFile, data: []byte("host driver")},
	} {
		if err := tr.put(p, e); err != nil {
			t.Fatal(err)
		}
	}
	u := &Userspace{Source: RDMACoreSuite, Suite: "sid", RDMACoreVersion: "65.0-1.1", Root: root}
	if err := u.addUserspace(tr, prog, "rxe", nil); err != nil {
		t.Fatalf("addUserspace: %v", err)
	}
	if tr.has("/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so") {
		t.Error("the guest still holds the host's librxe-rdmav34.so")
	}
	if e := tr.entries["usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav65.so"]; e == nil || !strings.HasPrefix(e.hostPath, root) {
		t.Errorf("the guest's librxe-rdmav65.so is %+v; want the suite's", e)
	}
}

// TestExtraExecutablesGetTheSuitesLibraries: a host tool passed in
// ExtraFiles (ibv_devinfo) stays the host's, but the libibverbs it
// brings is replaced by the suite's instead of clashing with it. CI
// failed this way: the suite's libibverbs.so.1 symlink names another
// file than the host's.
func TestExtraExecutablesGetTheSuitesLibraries(t *testing.T) {
	tool := hostIbvDevinfo(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"usr/lib/x86_64-linux-gnu/libibverbs.so.1":              "->libibverbs.so.1.99.0.0",
		"usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav99.so": "suite rxe",
		"etc/libibverbs.d/rxe.driver":                           "driver rxe\n",
		"usr/bin/ibv_devinfo":                                   "the suite's ibv_devinfo",
	})
	copyHostVerbs(t, root, "usr/lib/x86_64-linux-gnu/libibverbs.so.1.99.0.0")
	tr := newTree()
	if err := tr.addData("/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so", []byte("host rxe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tr.addData("/etc/libibverbs.d/rxe.driver", []byte("host driver"), 0o644); err != nil {
		t.Fatal(err)
	}
	u := &Userspace{Source: RDMACoreSuite, Suite: "sid", RDMACoreVersion: "99.0-1", Root: root}
	opts := Options{Program: tool, ExtraFiles: map[string]string{"/usr/bin/ibv_devinfo": tool}}
	if err := addUserland(context.Background(), tr, opts, "rxe", u); err != nil {
		t.Fatalf("addUserland(ExtraFiles with the host's ibv_devinfo, suite rdma-core): %v; want no error", err)
	}
	if e := tr.entries["usr/bin/ibv_devinfo"]; e == nil || e.hostPath != tool {
		t.Errorf("guest /usr/bin/ibv_devinfo is %+v; want the host's %s, as ExtraFiles asked", e, tool)
	}
	if e := tr.entries["usr/lib/x86_64-linux-gnu/libibverbs.so.1"]; e == nil || e.kind != kindSymlink || e.target != "libibverbs.so.1.99.0.0" {
		t.Errorf("guest libibverbs.so.1 is %+v; want a symlink to the suite's libibverbs.so.1.99.0.0", e)
	}
}

// hostIbvDevinfo returns the host's ibv_devinfo, or skips the test
// when the host lacks it or libibverbs.
func hostIbvDevinfo(t *testing.T) string {
	t.Helper()
	prog := firstExisting([]string{"/usr/bin/ibv_devinfo"})
	if prog == "" || inRoot("/", "/usr/lib/x86_64-linux-gnu/libibverbs.so.1") == "" {
		t.Skip("needs ibverbs-utils' ibv_devinfo and libibverbs1 on the host")
	}
	return prog
}

// copyHostVerbs copies the host's libibverbs.so.1 to rel under root.
func copyHostVerbs(t *testing.T, root, rel string) {
	t.Helper()
	data, err := os.ReadFile(inRoot("/", "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, rel), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
