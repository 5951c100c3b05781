//go:build !linux

package mqtt

// hostClock: the clock's error is read from the kernel on Linux only.
func hostClock() map[string]any { return nil }
