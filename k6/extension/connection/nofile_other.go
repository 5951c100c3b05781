//go:build !unix

package connection

// OpenFilesLimit: no RLIMIT_NOFILE here, so nothing to check against.
func OpenFilesLimit() (soft, hard uint64, ok bool) { return 0, 0, false }
