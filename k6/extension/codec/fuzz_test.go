package codec

import "testing"

// FuzzDecode: no input makes the decoder panic, read past its input, or
// claim a size it does not have. The committed corpus (testdata/fuzz) holds
// every packet type; the spec cases are seeded too.
func FuzzDecode(f *testing.F) {
	for _, c := range wireCases {
		f.Add(c.version, c.wire)
	}
	f.Fuzz(func(t *testing.T, version byte, b []byte) {
		p, size, err := Decode(version, b)
		if size < 0 || size > len(b) {
			t.Fatalf("size %d of %d bytes", size, len(b))
		}
		if err == nil && size > 0 && p == nil {
			t.Fatal("a whole packet decoded to nothing")
		}
	})
}
