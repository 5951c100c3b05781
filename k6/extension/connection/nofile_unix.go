//go:build unix

package connection

import "syscall"

// OpenFilesLimit is this process's RLIMIT_NOFILE: soft (what applies now)
// and hard (what it may raise the soft one to; Go raises it so at start).
func OpenFilesLimit() (soft, hard uint64, ok bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, false
	}
	// Converted: the fields are int64 on some BSDs.
	return uint64(l.Cur), uint64(l.Max), true
}
