package load

import "testing"

// The benchmark header carries publisher, sequence, send time and send lag
// in 16 bytes; the lag saturates instead of wrapping.
func TestHeaderCarriesIdSequenceAndTimes(t *testing.T) {
	b := make([]byte, HeaderSize)
	sent := int64(1_790_000_000_123_456_789)
	intended := sent - 2_500_000 // 2.5 ms late
	putHeader(b, 0xABCDEF, 42, sent, intended)
	h, ok := readHeader(b, sent+1_000_000)
	if !ok || h.pub != 0xABCDEF || h.seq != 42 || h.sentNs != sent || h.intendedNs != intended {
		t.Fatalf("got %+v", h)
	}
	// The lag saturates instead of wrapping.
	putHeader(b, 1, 1, sent, sent-int64(60e9))
	h, _ = readHeader(b, sent)
	if sent-h.intendedNs != maxLagMicros*1000 {
		t.Fatalf("lag not saturated: %d", sent-h.intendedNs)
	}
}
