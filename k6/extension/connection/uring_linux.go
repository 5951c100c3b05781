package connection

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A ring is an io_uring submission and completion queue pair: one
// io_uring_enter hands the kernel a batch of reads (one per ready socket)
// or of sends (one per connection), and returns with all of them done,
// where recvmsg and write cost a system call per socket. Why: in fan-out
// each subscriber socket has one message per look, and in fan-in each
// publisher one per tick, so per-socket calls cost one per message.
//
// Every read and send is flagged MSG_DONTWAIT: where the socket has nothing
// to read or no room, the kernel completes it with EAGAIN (or a short send)
// instead of waiting in the background, so all of a batch's buffers are
// free again when io_uring_enter returns.
type ring struct {
	fd              int
	sqHead, sqTail  *uint32
	sqMask          uint32
	sqArray         []uint32
	sqes            []uringSQE
	cqHead, cqTail  *uint32
	cqMask          uint32
	cqes            []uringCQE
	ringMem, sqeMem []byte
	entries         uint32
}

// The kernel's structures (include/uapi/linux/io_uring.h).
type uringSQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	MsgFlags    uint32
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	SpliceFdIn  int32
	Addr3       uint64
	_           uint64
}

type uringCQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

type uringParams struct {
	SqEntries, CqEntries, Flags, SqThreadCPU, SqThreadIdle, Features, WqFd uint32
	_                                                                      [3]uint32
	SqOff                                                                  struct {
		Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, _ uint32
		UserAddr                                                    uint64
	}
	CqOff struct {
		Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, _ uint32
		UserAddr                                                    uint64
	}
}

const (
	uringOpRecvmsg      = 10
	uringOpSend         = 26
	uringEnterGetEvents = 1
	uringFeatSingleMmap = 1
	uringOffSQRing      = 0
	uringOffSQEs        = 0x10000000
)

// newRing sets up a ring of `entries` slots, or fails where io_uring is not
// offered (an old kernel, kernel.io_uring_disabled, a container's seccomp
// profile): the caller then reads socket by socket.
func newRing(entries uint32) (*ring, error) {
	var p uringParams
	fd, _, errno := syscall.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("mqtt: io_uring_setup: %w", errno)
	}
	r := &ring{fd: int(fd), entries: p.SqEntries}
	if p.Features&uringFeatSingleMmap == 0 {
		_ = syscall.Close(r.fd)
		return nil, fmt.Errorf("mqtt: io_uring without IORING_FEAT_SINGLE_MMAP")
	}
	size := max(p.SqOff.Array+p.SqEntries*4, p.CqOff.Cqes+p.CqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	mem, err := unix.Mmap(r.fd, uringOffSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		_ = syscall.Close(r.fd)
		return nil, fmt.Errorf("mqtt: io_uring mmap: %w", err)
	}
	sqeMem, err := unix.Mmap(r.fd, uringOffSQEs, int(p.SqEntries)*int(unsafe.Sizeof(uringSQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		_ = unix.Munmap(mem)
		_ = syscall.Close(r.fd)
		return nil, fmt.Errorf("mqtt: io_uring mmap: %w", err)
	}
	r.ringMem, r.sqeMem = mem, sqeMem
	at := func(off uint32) unsafe.Pointer { return unsafe.Pointer(&mem[off]) }
	r.sqHead, r.sqTail = (*uint32)(at(p.SqOff.Head)), (*uint32)(at(p.SqOff.Tail))
	r.sqMask = *(*uint32)(at(p.SqOff.RingMask))
	r.sqArray = unsafe.Slice((*uint32)(at(p.SqOff.Array)), p.SqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&sqeMem[0])), p.SqEntries)
	r.cqHead, r.cqTail = (*uint32)(at(p.CqOff.Head)), (*uint32)(at(p.CqOff.Tail))
	r.cqMask = *(*uint32)(at(p.CqOff.RingMask))
	r.cqes = unsafe.Slice((*uringCQE)(at(p.CqOff.Cqes)), p.CqEntries)
	return r, nil
}

func (r *ring) close() {
	_ = unix.Munmap(r.sqeMem)
	_ = unix.Munmap(r.ringMem)
	_ = syscall.Close(r.fd)
}

// recvmsg queues a read of fd into msg, a unix.Msghdr whose buffers stay
// the caller's until the batch is reaped; tag comes back with its result.
func (r *ring) recvmsg(fd int, msg unsafe.Pointer, tag uint64) {
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & r.sqMask
	r.sqes[i] = uringSQE{Opcode: uringOpRecvmsg, Fd: int32(fd), Addr: uint64(uintptr(msg)), Len: 1, //nolint:gosec // a descriptor
		MsgFlags: syscall.MSG_DONTWAIT, UserData: tag}
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1)
}

// send queues a write of b on fd; tag comes back with its result.
func (r *ring) send(fd int, b []byte, tag uint64) {
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & r.sqMask
	r.sqes[i] = uringSQE{Opcode: uringOpSend, Fd: int32(fd), Addr: uint64(uintptr(unsafe.Pointer(&b[0]))), //nolint:gosec // a descriptor
		Len: uint32(len(b)), MsgFlags: syscall.MSG_DONTWAIT | syscall.MSG_NOSIGNAL, UserData: tag} //nolint:gosec // a write buffer
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1)
}

// submit hands the kernel the n queued reads or writes and waits until all are done
// (each is, on its return: MSG_DONTWAIT). A retry after EINTR submits
// nothing more and waits again.
func (r *ring) submit(n int) error {
	for {
		_, _, errno := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(n), uringEnterGetEvents, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return fmt.Errorf("mqtt: io_uring_enter: %w", errno)
		}
		break
	}
	if left := atomic.LoadUint32(r.sqTail) - atomic.LoadUint32(r.sqHead); left != 0 {
		return fmt.Errorf("mqtt: io_uring_enter left %d of %d reads unsubmitted", left, n)
	}
	return nil
}

// reap calls f with each finished read's tag and result (bytes, or -errno).
func (r *ring) reap(f func(tag uint64, res int32)) {
	head := atomic.LoadUint32(r.cqHead)
	for tail := atomic.LoadUint32(r.cqTail); head != tail; head++ {
		c := r.cqes[head&r.cqMask]
		f(c.UserData, c.Res)
	}
	atomic.StoreUint32(r.cqHead, head)
}
