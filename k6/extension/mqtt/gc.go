package mqtt

import (
	"os"
	"runtime/debug"
)

// generatorGCPercent is the Go GC target this extension sets for the k6
// process when the user has not set GOGC.
//
// Why: a generator's live heap is mostly HDR histograms (fixed size, no
// pointers). Go's default GOGC=100 lets garbage grow to the size of the live
// heap before collecting, so the process's RSS keeps rising for the first
// minute of a run and settles that much higher than it needs to. At 25 it
// settles within seconds, a few MB lower; a collection of this heap costs
// about a millisecond. GOGC in the environment always wins.
const generatorGCPercent = 25

func setGCTarget() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(generatorGCPercent)
	}
}
