package mqtt

import "syscall"

// staUnsync is the kernel's STA_UNSYNC status bit: no time service (NTP,
// chrony, PTP) has told it that its clock is synchronised.
const staUnsync = 0x0040

// hostClock is what the kernel knows of this host's clock error. Latency
// between instances on different hosts is measured on their wall clocks,
// so a merge of their results states how far each may be off.
func hostClock() map[string]any {
	var tx syscall.Timex
	state, err := syscall.Adjtimex(&tx)
	if err != nil {
		return nil
	}
	return map[string]any{
		"synchronized": tx.Status&staUnsync == 0 && state != 5, // 5: TIME_ERROR
		"max_error_us": tx.Maxerror, "est_error_us": tx.Esterror,
	}
}
