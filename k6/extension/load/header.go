package load

import "encoding/binary"

// Every benchmark payload starts with a 16-byte header, so the mqttbs
// 16-byte payload carries it whole:
//
//	bytes  0..2   publisher id        (24 bits, unique in the test)
//	bytes  3..6   sequence number     (32 bits, per publisher, from 0)
//	bytes  7..12  actual send time    (low 48 bits of Unix ns: wraps every 78 h)
//	bytes 13..15  send lag            (µs from intended to actual send, 24 bits, saturating)
//
// The intended send time is actual - lag. Both times are wall-clock Unix
// nanoseconds, so publisher and subscriber may be different processes on
// clock-synchronised hosts.
const (
	// HeaderSize is the benchmark header's size: the least payload_size.
	HeaderSize = 16
	// MaxPublisher bounds publisher ids (24 bits), so id_base + count.
	MaxPublisher = 1<<24 - 1
	maxLagMicros = 1<<24 - 1
	mask48       = 1<<48 - 1
)

func putHeader(b []byte, pub uint32, seq uint32, sentNs, intendedNs int64) {
	lag := (sentNs - intendedNs) / 1000
	if lag < 0 {
		lag = 0
	} else if lag > maxLagMicros {
		lag = maxLagMicros
	}
	b[0], b[1], b[2] = byte(pub>>16), byte(pub>>8), byte(pub)
	binary.BigEndian.PutUint32(b[3:7], seq)
	s := uint64(sentNs) & mask48
	b[7], b[8], b[9], b[10], b[11], b[12] = byte(s>>40), byte(s>>32), byte(s>>24), byte(s>>16), byte(s>>8), byte(s)
	b[13], b[14], b[15] = byte(lag>>16), byte(lag>>8), byte(lag)
}

type header struct {
	pub        uint32
	seq        uint32
	sentNs     int64
	intendedNs int64
}

// readHeader decodes the header; now (Unix ns at receipt) restores the high
// bits of the 48-bit send time.
func readHeader(b []byte, now int64) (header, bool) {
	if len(b) < HeaderSize {
		return header{}, false
	}
	var h header
	h.pub = uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	h.seq = binary.BigEndian.Uint32(b[3:7])
	s := uint64(b[7])<<40 | uint64(b[8])<<32 | uint64(b[9])<<24 | uint64(b[10])<<16 | uint64(b[11])<<8 | uint64(b[12])
	// The send time is the latest time <= now whose low 48 bits are s.
	age := (uint64(now) - s) & mask48
	h.sentNs = now - int64(age)
	lag := int64(b[13])<<16 | int64(b[14])<<8 | int64(b[15])
	h.intendedNs = h.sentNs - lag*1000
	return h, true
}
