package mqtt

import (
	"strings"
	"testing"
)

// Issue 41's run, 25,000 publishers and 25,000 subscribers in one process
// under an open-files limit of 20,000, is refused naming the limit, the
// `ulimit -n` that fits it and the 3 processes that would; one just inside
// the limit with k6's own reserve runs.
func TestConnectionsOverTheOpenFilesLimitAreRefusedBeforeAnyConnects(t *testing.T) {
	why := openFilesFit(50000, 50000, 20000)
	for _, want := range []string{"limit of 20000", "ulimit -n 50064", "3 k6 processes", "--instances 3"} {
		if !strings.Contains(why, want) {
			t.Errorf("%q lacks %q", why, want)
		}
	}
	if why := openFilesFit(20000-openFilesReserve, 50000, 20000); why != "" {
		t.Fatalf("a share that fits: %s", why)
	}
	// One of 3 instances holds a third of them: it fits.
	if why := openFilesFit(16667, 50000, 20000); why != "" {
		t.Fatalf("a third: %s", why)
	}
}
