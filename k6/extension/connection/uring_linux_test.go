package connection

import (
	"testing"
	"unsafe"
)

// The ring's structures are the kernel's (include/uapi/linux/io_uring.h):
// a size off by a field would hand it garbage.
func TestURingStructsHaveTheKernelsSizes(t *testing.T) {
	for name, got := range map[string]uintptr{
		"io_uring_sqe":    unsafe.Sizeof(uringSQE{}),
		"io_uring_cqe":    unsafe.Sizeof(uringCQE{}),
		"io_uring_params": unsafe.Sizeof(uringParams{}),
	} {
		want := map[string]uintptr{"io_uring_sqe": 64, "io_uring_cqe": 16, "io_uring_params": 120}[name]
		if got != want {
			t.Errorf("%s: %d bytes, the kernel's is %d", name, got, want)
		}
	}
}
