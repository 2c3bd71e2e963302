package qemuvm

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestInitScript(t *testing.T) {
	s := initScript(initConfig{
		Nonce:   "abc123",
		Modules: []string{"crc32_generic", "ib_core", "rdma_rxe"},
		Program: "/srqvm/prog/srqconform",
		Args:    []string{"-json", "it's", "a b"},
		Env:     []string{"GOTRACEBACK=all"},
		Dir:     "/srqvm/pkg",
	})
	if !strings.HasPrefix(s, "#!/srqvm/bin/busybox sh\n") {
		t.Errorf("script does not start with the busybox shebang:\n%s", s)
	}
	want := []string{
		"mount -t proc proc /proc",
		"mount -t sysfs sysfs /sys",
		"mount -t devtmpfs devtmpfs /dev",
		"ip link add eth0 type dummy",
		"ip addr add 10.0.2.15/24 dev eth0",
		"rdma link add rxe0 type rxe netdev eth0",
		"M='@@SRQVM abc123'",
		`env 'GOTRACEBACK=all' '/srqvm/prog/srqconform' '-json' 'it'\''s' 'a b'`,
		"cd '/srqvm/pkg'",
		"base64 /srqvm/stdout",
		`echo "$M END stdout $(wc -c </srqvm/stdout)"`,
		`echo "$M FINISHED"`,
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("init script lacks %q:\n%s", w, s)
		}
	}
	// Modules are loaded in the given order, before the link is added.
	last := -1
	for _, m := range []string{"crc32_generic", "ib_core", "rdma_rxe"} {
		i := strings.Index(s, "insmod '/srqvm/modules/"+m+".ko'")
		if i < 0 || i < last {
			t.Fatalf("insmod %s missing or out of order (at %d, previous %d)", m, i, last)
		}
		last = i
	}
	if l := strings.Index(s, "rdma link add"); l < last {
		t.Errorf("rdma link add (at %d) comes before the last insmod (at %d)", l, last)
	}
	if !strings.HasSuffix(s, "poweroff -f\n") {
		t.Errorf("script does not end with poweroff -f")
	}
	// The script must at least parse as a POSIX shell script.
	if sh, err := exec.LookPath("sh"); err == nil {
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sh -n rejects the init script: %v\n%s", err, out)
		}
	}
}

func TestShellQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{"", "plain", "it's", `a "b" $c \d`, "new\nline", "'''"} {
		out, err := exec.Command(sh, "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("shellQuote(%q) printed %q (err %v)", s, out, err)
		}
	}
}

// fakeModules is a ModuleSource over a fixed table.
type fakeModules struct {
	mods    map[string]ModuleInfo
	builtin map[string]bool
}

func (f fakeModules) Info(name string) (ModuleInfo, bool, error) {
	mi, ok := f.mods[name]
	return mi, ok, nil
}
func (f fakeModules) BuiltIn(name string) bool { return f.builtin[name] }

func fakeFromModinfo(t *testing.T, sections map[string]string) fakeModules {
	t.Helper()
	f := fakeModules{mods: map[string]ModuleInfo{}, builtin: map[string]bool{}}
	for file, sec := range sections {
		mi := ParseModinfo([]byte(strings.ReplaceAll(sec, "|", "\x00")), file)
		f.mods[mi.Name] = mi
	}
	return f
}

func TestLoadOrder(t *testing.T) {
	// Modinfo strings as in Debian 6.1 (depends=, |-separated here for
	// readability) and a 7.x-like ib_uverbs with ib_uverbs_support.
	f := fakeFromModinfo(t, map[string]string{
		"rdma_rxe.ko":          "license=Dual BSD/GPL|depends=ib_core,ip6_udp_tunnel,udp_tunnel,ib_uverbs|name=rdma_rxe|vermagic=7.2",
		"ib_uverbs.ko":         "depends=ib_core,ib_uverbs_support|name=ib_uverbs",
		"ib_uverbs_support.ko": "depends=ib_core|name=ib_uverbs_support",
		"ib_core.ko":           "depends=|name=ib_core",
		"ip6_udp_tunnel.ko":    "depends=|name=ip6_udp_tunnel",
		"udp_tunnel.ko":        "depends=|name=udp_tunnel",
		"dummy.ko":             "depends=|name=dummy",
	})
	got, err := LoadOrder(f, RequiredModules, OptionalModules)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, m := range got {
		if _, dup := pos[m]; dup {
			t.Fatalf("%s loaded twice: %v", m, got)
		}
		pos[m] = i
	}
	if len(got) != 7 {
		t.Fatalf("LoadOrder = %v, want 7 modules", got)
	}
	for name, mi := range f.mods {
		for _, d := range mi.Depends {
			if pos[d] > pos[name] {
				t.Errorf("%s loaded before its dependency %s: %v", name, d, got)
			}
		}
	}
	// Deterministic.
	again, _ := LoadOrder(f, RequiredModules, OptionalModules)
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("LoadOrder not deterministic: %v then %v", got, again)
	}
}

func TestLoadOrderOptionalBuiltinAndSoftdep(t *testing.T) {
	f := fakeFromModinfo(t, map[string]string{
		"rdma_rxe.ko.xz":      "depends=ib_core,udp-tunnel|softdep=pre: crc32c post: nothing|name=rdma_rxe",
		"ib_uverbs.ko.xz":     "depends=ib_core|name=ib_uverbs",
		"dummy.ko.xz":         "depends=|name=dummy",
		"udp_tunnel.ko.xz":    "depends=|name=udp_tunnel",
		"crc32_generic.ko.xz": "depends=|name=crc32_generic",
	})
	f.builtin["ib_core"] = true
	got, err := LoadOrder(f, RequiredModules, OptionalModules)
	if err != nil {
		t.Fatal(err)
	}
	want := "[crc32_generic dummy ib_uverbs udp_tunnel rdma_rxe]"
	if fmt.Sprint(got) != want {
		t.Errorf("LoadOrder = %v, want %s (built-in ib_core and absent softdep crc32c skipped, optional crc32_generic first)", got, want)
	}
}

func TestLoadOrderErrors(t *testing.T) {
	f := fakeFromModinfo(t, map[string]string{
		"rdma_rxe.ko":  "depends=ib_core|name=rdma_rxe",
		"ib_uverbs.ko": "depends=|name=ib_uverbs",
		"dummy.ko":     "depends=|name=dummy",
	})
	_, err := LoadOrder(f, RequiredModules, nil)
	if err == nil || !strings.Contains(err.Error(), `"ib_core"`) || !strings.Contains(err.Error(), "needed by rdma_rxe") {
		t.Errorf("missing dependency: got error %v, want one naming ib_core and rdma_rxe", err)
	}
	f.mods["ib_core"] = ModuleInfo{Name: "ib_core", Depends: []string{"rdma_rxe"}}
	_, err = LoadOrder(f, RequiredModules, nil)
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: got error %v, want a dependency cycle error", err)
	}
}

func TestParseModinfo(t *testing.T) {
	mi := ParseModinfo([]byte("alias=rdma-link-rxe\x00depends=ib_core,ip6_udp_tunnel,udp_tunnel\x00retpoline=Y\x00intree=Y\x00name=rdma_rxe\x00vermagic=6.1.0-56-amd64 SMP\x00\x00\x00"), "/x/rdma_rxe.ko")
	if mi.Name != "rdma_rxe" || fmt.Sprint(mi.Depends) != "[ib_core ip6_udp_tunnel udp_tunnel]" {
		t.Errorf("ParseModinfo = %+v", mi)
	}
	mi = ParseModinfo([]byte("depends=\x00"), "/x/ip6-udp-tunnel.ko.xz")
	if mi.Name != "ip6_udp_tunnel" || len(mi.Depends) != 0 {
		t.Errorf("ParseModinfo without name= = %+v, want name from the file name and no deps", mi)
	}
}

// guestText renders what the init script would print for a result.
func guestText(nonce string, release string, exit int, stdout, stderr []byte, crlf bool) string {
	m := marker(nonce)
	var b strings.Builder
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	wrap := func(data []byte) {
		enc := base64.StdEncoding.EncodeToString(data)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + nl)
			enc = enc[76:]
		}
		if enc != "" {
			b.WriteString(enc + nl)
		}
	}
	fmt.Fprintf(&b, "%s RELEASE %s%s%s EXIT %d%s", m, release, nl, m, exit, nl)
	fmt.Fprintf(&b, "%s BEGIN stdout%s", m, nl)
	wrap(stdout)
	fmt.Fprintf(&b, "%s END stdout %d%s", m, len(stdout), nl)
	fmt.Fprintf(&b, "%s BEGIN stderr%s", m, nl)
	wrap(stderr)
	fmt.Fprintf(&b, "%s END stderr %d%s%s FINISHED%s", m, len(stderr), nl, m, nl)
	return b.String()
}

func TestParseMarkers(t *testing.T) {
	bin := make([]byte, 0, 600)
	for i := 0; i < 600; i++ {
		bin = append(bin, byte(i*7))
	}
	bin = append(bin, "\r\n@@SRQVM fake END stdout 0\n"...)
	console := "[    0.000000] Linux version 6.1.0\r\n@@SRQVM other-nonce EXIT 99\r\n@@SRQVM n1 LINK 0\r\n@@SRQVM n1 INSMOD-FAILED crc32_generic\r\n@@SRQVM n1 START\r\n"
	text := console + guestText("n1", "6.1.0-56-amd64", 3, bin, []byte("warning\n"), true)
	r, err := parseMarkers("n1", text)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Finished || !r.HaveExit || r.Exit != 3 || r.Release != "6.1.0-56-amd64" || r.Link != 0 || !r.ProgramStarted {
		t.Errorf("report = %+v", r)
	}
	if !bytes.Equal(r.Stdout, bin) {
		t.Errorf("stdout not returned byte for byte: got %d bytes, want %d", len(r.Stdout), len(bin))
	}
	if string(r.Stderr) != "warning\n" || fmt.Sprint(r.InsmodFailed) != "[crc32_generic]" {
		t.Errorf("stderr %q, insmod failures %v", r.Stderr, r.InsmodFailed)
	}

	// Empty output is present but empty.
	r, err = parseMarkers("n2", guestText("n2", "7.2", 0, nil, nil, false))
	if err != nil || !r.HaveStdout || r.Stdout == nil || len(r.Stdout) != 0 {
		t.Errorf("empty output: %+v, %v", r, err)
	}

	// A truncated log has no FINISHED marker.
	full := guestText("n3", "7.2", 0, []byte("hello"), nil, false)
	r, err = parseMarkers("n3", full[:strings.Index(full, "END stdout")-len("@@SRQVM n3 ")])
	if err != nil || r.Finished || r.HaveStdout {
		t.Errorf("truncated log: finished=%v stdout=%v err=%v", r.Finished, r.HaveStdout, err)
	}

	// A size mismatch is an error.
	bad := strings.Replace(full, "END stdout 5", "END stdout 6", 1)
	if _, err := parseMarkers("n3", bad); err == nil || !strings.Contains(err.Error(), "says 6") {
		t.Errorf("size mismatch: err = %v", err)
	}
}

func TestParseLdd(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibibverbs.so.1 => /lib/x86_64-linux-gnu/libibverbs.so.1 (0x00007f03)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f0)\n"
	libs, err := parseLdd(out)
	if err != nil || fmt.Sprint(libs) != "[/lib/x86_64-linux-gnu/libibverbs.so.1 /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2]" {
		t.Errorf("parseLdd = %v, %v", libs, err)
	}
	if libs, err := parseLdd("\tnot a dynamic executable\n"); err != nil || len(libs) != 0 {
		t.Errorf("static: %v %v", libs, err)
	}
	if _, err := parseLdd("\tlibfoo.so.1 => not found\n"); err == nil || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Errorf("missing library: err = %v", err)
	}
}

func TestParseDependsAndControl(t *testing.T) {
	rec := parseControl("Package: linux-image-7.2.13+deb14-amd64\nVersion: 7.2.13-1\nDepends: dracut | initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool, linux-base-7.2.13+deb14-amd64 (= 7.2.13-1), linux-binary-7.2.13+deb14-amd64 (= 7.2.13-1), linux-modules-7.2.13+deb14-amd64 (= 7.2.13-1)\nDescription: x\n more\n\nPackage: other\nVersion: 1\n")
	if rec["Version"] != "7.2.13-1" || rec["Package"] != "linux-image-7.2.13+deb14-amd64" {
		t.Fatalf("parseControl = %v", rec)
	}
	ds := parseDepends(rec["Depends"])
	if fmt.Sprint(ds) != "[{linux-base-7.2.13+deb14-amd64 7.2.13-1} {linux-binary-7.2.13+deb14-amd64 7.2.13-1} {linux-modules-7.2.13+deb14-amd64 7.2.13-1}]" {
		t.Errorf("parseDepends = %v", ds)
	}
}

func TestLocateKernelLayouts(t *testing.T) {
	for _, layout := range []struct{ img, mods string }{
		{"boot/vmlinuz-6.1.0-56-amd64", "lib/modules/6.1.0-56-amd64/kernel"},
		{"usr/lib/modules/7.2.13+deb14-amd64/vmlinuz", "usr/lib/modules/7.2.13+deb14-amd64/kernel"},
	} {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, layout.mods), 0o755)
		os.MkdirAll(filepath.Dir(filepath.Join(root, layout.img)), 0o755)
		os.WriteFile(filepath.Join(root, layout.img), []byte("x"), 0o644)
		pk := &PreparedKernel{}
		if err := locateKernel(root, pk); err != nil {
			t.Errorf("%s: %v", layout.img, err)
			continue
		}
		if pk.Image != filepath.Join(root, layout.img) || pk.ModulesDir != filepath.Dir(filepath.Join(root, layout.mods)) {
			t.Errorf("%s: got image %s modules %s", layout.img, pk.Image, pk.ModulesDir)
		}
	}
	if err := locateKernel(t.TempDir(), &PreparedKernel{}); err == nil || !strings.Contains(err.Error(), "found 0") {
		t.Errorf("empty tree: err = %v", err)
	}
}

// readCpio parses a newc archive into name -> (mode, data).
func readCpio(t *testing.T, r io.Reader) map[string]struct {
	mode uint32
	data string
} {
	t.Helper()
	all, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		mode uint32
		data string
	}{}
	off := 0
	field := func(i int) int {
		v, err := strconv.ParseUint(string(all[off+6+8*i:off+14+8*i]), 16, 32)
		if err != nil {
			t.Fatalf("bad header field at %d: %v", off, err)
		}
		return int(v)
	}
	for {
		if string(all[off:off+6]) != "070701" {
			t.Fatalf("bad magic at %d: %q", off, all[off:off+6])
		}
		mode, size, nameLen := field(1), field(6), field(11)
		name := string(all[off+110 : off+110+nameLen-1])
		off += 110 + nameLen
		off += pad4(off)
		data := string(all[off : off+size])
		off += size
		off += pad4(off)
		if name == "TRAILER!!!" {
			return out
		}
		out[name] = struct {
			mode uint32
			data string
		}{uint32(mode), data}
	}
}

func TestCpioTree(t *testing.T) {
	host := t.TempDir()
	// host layout: lib -> usr/lib, usr/lib/libx.so.1 -> libx.so.1.2.3
	os.MkdirAll(filepath.Join(host, "usr/lib"), 0o755)
	os.WriteFile(filepath.Join(host, "usr/lib/libx.so.1.2.3"), []byte("ELF..."), 0o644)
	os.Symlink("libx.so.1.2.3", filepath.Join(host, "usr/lib/libx.so.1"))
	os.Symlink("usr/lib", filepath.Join(host, "lib"))

	tr := newTree()
	if err := tr.addHostPath(filepath.Join(host, "lib/libx.so.1")); err != nil {
		t.Fatal(err)
	}
	if err := tr.addData("/init", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tr.addData("/init", []byte("other"), 0o755); err == nil {
		t.Errorf("adding /init twice with different contents did not fail")
	}
	var buf bytes.Buffer
	if err := tr.writeCpio(&buf); err != nil {
		t.Fatal(err)
	}
	files := readCpio(t, bytes.NewReader(buf.Bytes()))
	rel := strings.TrimPrefix(host, "/")
	checks := map[string]struct {
		mode uint32
		data string
	}{
		"init":                         {0o100755, "#!/bin/sh\n"},
		rel + "/lib":                   {0o120777, "usr/lib"},
		rel + "/usr/lib/libx.so.1":     {0o120777, "libx.so.1.2.3"},
		rel + "/usr/lib/libx.so.1.2.3": {0o100644, "ELF..."},
		rel + "/usr/lib":               {0o040755, ""},
	}
	for name, want := range checks {
		got, ok := files[name]
		if !ok || got != want {
			t.Errorf("archive member %s = %+v (present %v), want %+v", name, got, ok, want)
		}
	}
	// Every parent directory precedes its children.
	if cpio, err := exec.LookPath("cpio"); err == nil {
		cmd := exec.Command(cpio, "-it", "--quiet")
		cmd.Stdin = bytes.NewReader(buf.Bytes())
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "init") {
			t.Errorf("cpio -it rejects the archive: %v\n%s", err, out)
		}
	}
}

func TestMissingTools(t *testing.T) {
	_, err := findQEMU("/nonexistent/qemu-system-x86_64")
	var mt *MissingToolError
	if !errors.As(err, &mt) || !strings.Contains(err.Error(), "install the Debian package qemu-system-x86") {
		t.Errorf("findQEMU error = %v, want advice to install qemu-system-x86", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = findQEMU("")
	if !errors.As(err, &mt) || !strings.Contains(err.Error(), "qemu-system-x86_64") {
		t.Errorf("findQEMU with empty PATH = %v", err)
	}
	_, err = findBusybox("/nonexistent/busybox")
	if !errors.As(err, &mt) || !strings.Contains(err.Error(), "busybox-static") {
		t.Errorf("findBusybox error = %v, want advice to install busybox-static", err)
	}
	// A dynamically linked busybox is rejected too; the test binary
	// itself serves as a dynamically linked ELF when it is one.
	self, _ := os.Executable()
	if static, err := isStaticELF(self); err == nil && !static {
		if _, err := findBusybox(self); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("findBusybox(dynamic) = %v", err)
		}
	}
	// Run reports the missing QEMU before anything else.
	_, err = Run(context.Background(), Options{Kernel: SuiteKernel("bookworm"), Program: "/bin/true", QEMU: "/nonexistent/qemu"})
	if !errors.As(err, &mt) {
		t.Errorf("Run without QEMU = %v, want MissingToolError", err)
	}
}

func TestBadPathsAndSuites(t *testing.T) {
	ctx := context.Background()
	_, err := PrepareKernel(ctx, Options{Kernel: SuiteKernel("hamm")})
	var us *UnknownSuiteError
	if !errors.As(err, &us) || !strings.Contains(err.Error(), `"hamm"`) || !strings.Contains(err.Error(), "bookworm, sid, trixie") {
		t.Errorf("unknown suite error = %v", err)
	}
	_, err = PrepareKernel(ctx, Options{Kernel: CustomKernel("/nonexistent/bzImage", t.TempDir())})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/bzImage") || !strings.Contains(err.Error(), "expected a bzImage/vmlinuz file") {
		t.Errorf("missing image error = %v", err)
	}
	img := filepath.Join(t.TempDir(), "bzImage")
	os.WriteFile(img, []byte("x"), 0o644)
	_, err = PrepareKernel(ctx, Options{Kernel: CustomKernel(img, "/nonexistent/lib/modules/7.3")})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/lib/modules/7.3") || !strings.Contains(err.Error(), "lib/modules/RELEASE") {
		t.Errorf("missing modules dir error = %v", err)
	}
	pk, err := PrepareKernel(ctx, Options{Kernel: CustomKernel(img, t.TempDir())})
	if err != nil || pk.Image != img {
		t.Errorf("valid custom kernel: %+v, %v", pk, err)
	}
	_, err = PrepareKernel(ctx, Options{})
	if err == nil || !strings.Contains(err.Error(), "no kernel selected") {
		t.Errorf("empty kernel selection = %v", err)
	}
	if err := checkExecutable("/nonexistent/prog"); err == nil || !strings.Contains(err.Error(), "/nonexistent/prog") {
		t.Errorf("checkExecutable = %v", err)
	}
	if _, err := newDirModules(ctx, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.ko") {
		t.Errorf("empty modules dir = %v", err)
	}
}

func TestDownloadFailure(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("no apt-get")
	}
	if testing.Short() {
		t.Skip("apt-get retries take several seconds")
	}
	// Port 9 on localhost refuses connections: apt-get update fails fast.
	_, err := PrepareKernel(context.Background(), Options{
		Kernel:         SuiteKernel("sid"),
		CacheDir:       t.TempDir(),
		Mirror:         "http://127.0.0.1:9/debian",
		SecurityMirror: "http://127.0.0.1:9/debian-security",
	})
	if err == nil || !strings.Contains(err.Error(), "apt-get") || !strings.Contains(err.Error(), "expected a successful apt-get update") {
		t.Errorf("download failure error = %v", err)
	}
	t.Log(err)
}

func TestNoEndMarkerError(t *testing.T) {
	e := &NoEndMarkerError{Reason: "timed out after 1s and was killed", Command: "qemu-system-x86_64 -kernel k", Expected: "@@SRQVM n FINISHED", LastLines: "Kernel panic"}
	s := e.Error()
	for _, w := range []string{"qemu-system-x86_64 -kernel k", "timed out", "@@SRQVM n FINISHED", "Kernel panic"} {
		if !strings.Contains(s, w) {
			t.Errorf("NoEndMarkerError %q lacks %q", s, w)
		}
	}
}

func TestQemuArgs(t *testing.T) {
	a := strings.Join(qemuArgs("tcg", Options{}, &PreparedKernel{Image: "/k"}, "/i", "/r"), " ")
	for _, w := range []string{"-accel tcg", "-machine q35", "-cpu max", "-smp 2", "-m 1024", "-nographic", "-no-reboot", "-nic none", "-kernel /k", "-initrd /i", "-serial file:/r"} {
		if !strings.Contains(a, w) {
			t.Errorf("qemu args %q lack %q", a, w)
		}
	}
	// Boot messages are the progress stall detection watches for.
	if strings.Contains(a, "quiet") {
		t.Errorf("qemu args %q silence the kernel's boot messages", a)
	}
}

func TestPanickedBeforeInit(t *testing.T) {
	n := "abc"
	panicLog := "[    1.38] Oops: int3\n[    1.38] Kernel panic - not syncing: Fatal exception in interrupt\n"
	if !panickedBeforeInit(panicLog, n) {
		t.Errorf("a panic before /init was not recognised")
	}
	if panickedBeforeInit(panicLog+marker(n)+" BEGIN x\n", n) {
		t.Errorf("a panic after /init started was taken for a boot flake; it may be the program's doing")
	}
	if panickedBeforeInit("[ 1.0] booting\n", n) {
		t.Errorf("a log without a panic was taken for a panic")
	}
}
