// Package qemuvm boots Debian kernels with the soft-RoCE driver rdma_rxe
// under QEMU and runs a host program inside the guest against a real
// rxe device, returning the program's output to the host.
//
// The guest is a generated initramfs: a static busybox, the program and
// the shared libraries ldd lists for it, the rxe provider of
// libibverbs, iproute2's rdma tool and the kernel modules rxe needs.
// Its /init creates a dummy eth0 (10.0.2.15/24), adds rxe0 on it, runs
// the program and sends its stdout, stderr and exit code back
// base64-encoded between per-run markers on a second serial port.
//
// With Options.Provider "siw" the guest gets soft-iWARP instead: a
// siw.ko built for the kernel (SiwModule), the rdma_cm modules, the siw
// provider, librdmacm and libgcc_s, and siw0 on eth0.
//
// QEMU runs under KVM when a probe shows KVM can run guest code, else
// under TCG (Options.Accel). A boot whose serial console stays silent
// for Options.StallTimeout before the program starts is killed rather
// than left to Options.Timeout; a KVM boot is then repeated under TCG.
//
// Kernels come from Debian ("bookworm", "trixie", "sid"), resolved at
// run time through a private apt state and cached by exact package
// version, or from a user-supplied image and modules directory.
//
// The unit tests need no QEMU. The integration tests boot real kernels
// (network access to the Debian mirror on the first run, then cached):
//
//	SRQCONFORM_VM_TEST=1 go test -v -run Integration ./qemuvm
//
// SRQCONFORM_VM_SUITES=sid,trixie narrows the suites,
// SRQCONFORM_VM_ACCEL=tcg (or kvm, auto) sets Options.Accel and
// SRQCONFORM_VM_CACHE moves the cache.
//
// Where to read: vm.go (Options, Result and Run), kernel.go (Debian
// suites and the kernel packages), modules.go (the modules rxe or siw
// needs, in load order), initramfs.go and cpio.go (the guest image),
// guest.go (its /init and the serial protocol), qemu.go and stall.go
// (running QEMU, KVM or TCG, and killing a stalled boot), siw.go
// (building siw.ko), gotest.go (a test binary as the guest program),
// errors.go (the errors a caller can tell apart).
package qemuvm
