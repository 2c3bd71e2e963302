//go:build linux && cgo && rdma

package cgo

import (
	"fmt"
	"unsafe"
)

// errnoName spells the errno values verbs return.
func errnoName(e int) string {
	names := map[int]string{0: "0", 1: "EPERM", 2: "ENOENT", 5: "EIO", 11: "EAGAIN", 12: "ENOMEM", 13: "EACCES",
		14: "EFAULT", 16: "EBUSY", 19: "ENODEV", 22: "EINVAL", 38: "ENOSYS", 95: "EOPNOTSUPP", 110: "ETIMEDOUT"}
	if e < 0 {
		if n, ok := names[-e]; ok {
			return fmt.Sprintf("%d (-%s)", e, n)
		}
	}
	if n, ok := names[e]; ok && e != 0 {
		return fmt.Sprintf("%d (%s)", e, n)
	}
	return fmt.Sprint(e)
}

// verbErr describes a verb that returned r instead of 0.
func verbErr(call string, r int) error {
	return fmt.Errorf("cgo: %s returned %s, want 0", call, errnoName(r))
}

// nullErr describes a verb that returned NULL with errno err.
func nullErr(call string, err error) error {
	return fmt.Errorf("cgo: %s returned NULL (errno %v), want an object", call, err)
}

// cmem is C memory from malloc or posix_memalign.
func cmalloc(n uintptr) unsafe.Pointer {
	p := _C_malloc(_C_size_t(n))
	if p == nil {
		panic(fmt.Sprintf("cgo: malloc(%d) returned NULL", n))
	}
	_C_memset(p, 0, _C_size_t(n))
	return p
}

func cmemalign(n uintptr) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := _C_posix_memalign(&p, 4096, _C_size_t(n)); r != 0 {
		return nil, fmt.Errorf("cgo: posix_memalign(4096, %d) returned %d, want 0", n, int(r))
	}
	_C_memset(p, 0, _C_size_t(n))
	return p, nil
}

func cfree(p unsafe.Pointer) {
	if p != nil {
		_C_free(p)
	}
}

// cbytes views n bytes of C memory at p+off.
func cbytes(p unsafe.Pointer, off, n uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(p, off)), n)
}
