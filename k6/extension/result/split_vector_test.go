package result

import (
	"encoding/json"
	"os"
	"testing"
)

// The shared vector testdata/split_streams.json holds the same messages
// accounted by one process and by two instances (written by the load
// package's own accounting, which keeps it current): merging the
// instances' per-stream counts gives what the one process counted, lost
// and unique for every flow, duplicates and out-of-order where each stream
// was received whole in one instance.
func TestMergedStreamsEqualOneProcessAccounting(t *testing.T) {
	b, err := os.ReadFile("testdata/split_streams.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Fanout map[string]int64            `json:"fanout"`
		Single map[string]map[string]int64 `json:"single"`
		Parts  []map[string]FlowStreams    `json:"parts"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	got := Account(v.Fanout, nil, v.Parts...)
	for flow, want := range v.Single {
		d := got[flow]
		if d.Lost != want["lost"] || d.Unique != want["unique"] || int64(d.Streams) != want["streams"] {
			t.Errorf("%s: merged lost %d unique %d streams %d; one process: lost %d unique %d streams %d",
				flow, d.Lost, d.Unique, d.Streams, want["lost"], want["unique"], want["streams"])
		}
		if flow == "p2p" && (d.Duplicates != want["duplicates"] || d.OutOfOrder != want["out_of_order"]) {
			t.Errorf("%s: merged duplicates %d out of order %d; one process: %d and %d",
				flow, d.Duplicates, d.OutOfOrder, want["duplicates"], want["out_of_order"])
		}
		if want["lost"] == 0 {
			t.Errorf("%s: the vector loses nothing, so it cannot tell a merge that drops loss", flow)
		}
	}
}
