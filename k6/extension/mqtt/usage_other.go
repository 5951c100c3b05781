//go:build !unix

package mqtt

// processUsage: not measured here (no getrusage); reports say "not recorded".
func processUsage() map[string]any { return nil }
