package load

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand"
	"os"
	"testing"
)

var updateVectors = flag.Bool("update", false, "rewrite the shared test vectors in ../result/testdata")

// splitVector is the shared test vector ../result/testdata/split_streams.json:
// the same messages accounted by one process (Single) and by two instances
// (Parts, their Streams() as result files carry them). result's tests check
// that merging Parts gives Single.
const splitVector = "../result/testdata/split_streams.json"

type vector struct {
	Note   string                    `json:"note"`
	Fanout map[string]int64          `json:"fanout"`
	Single map[string]streamTotals   `json:"single"`
	Parts  []map[string]*FlowStreams `json:"parts"`
}

// The vector is made from a seeded run of messages: publishers 1-8 send
// 300 messages each; on flow p2p, subscriber i receives publisher i's,
// with some lost (in the middle and at the tail), duplicated, reordered or
// refused by the broker; on flow shared, one shared subscription receives
// every publisher's, each message at one of its members. Instance A runs
// publishers 1-4 and subscribers 5-8, instance B the others, so every p2p
// stream crosses instances; the shared subscription has members in both.
func TestSplitStreamsVectorIsCurrent(t *testing.T) {
	got := makeSplitVector()
	b, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if *updateVectors {
		if err := os.WriteFile(splitVector, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(splitVector)
	if err != nil {
		t.Fatalf("%v (go test ./load -run SplitStreamsVector -update writes it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(b)) {
		t.Fatalf("%s is not what this accounting gives: rerun with -update and review the change", splitVector)
	}
}

func makeSplitVector() vector {
	rng := rand.New(rand.NewSource(13))
	single, a, b := NewRun(), NewRun(), NewRun()
	const pubs, msgs = 8, 300
	flowPub := func(flow string) *PublisherGroup {
		return &PublisherGroup{group: &group{cfg: GroupConfig{Flow: flow}}}
	}
	inA := func(id int) bool { return id <= pubs/2 }
	// Publishers (flow p2p sends ids 1-8, flow shared ids 101-108).
	sent := map[uint32]*[2]*pubClient{}
	for _, flow := range []string{"p2p", "shared"} {
		for i := 1; i <= pubs; i++ {
			id := uint32(i)
			if flow == "shared" {
				id += 100
			}
			whole := &pubClient{id: id, g: flowPub(flow)}
			part := &pubClient{id: id, g: flowPub(flow)}
			_ = single.publishers.add(id, whole)
			if inA(i) {
				_ = a.publishers.add(id, part)
			} else {
				_ = b.publishers.add(id, part)
			}
			sent[id] = &[2]*pubClient{whole, part}
		}
	}
	// Receivers: p2p subscriber i in the instance its publisher is not in.
	subs := func(r *Run, from, to int) []*streamSet {
		sets := make([]*streamSet, to-from+1)
		for i := range sets {
			sets[i] = newStreamSet()
		}
		r.addReceivers("p2p", from, sets, "")
		return sets
	}
	singleSubs := subs(single, 1, pubs)
	subsA, subsB := subs(a, pubs/2+1, pubs), subs(b, 1, pubs/2)
	partSub := func(i int) *streamSet {
		if i > pubs/2 {
			return subsA[i-pubs/2-1]
		}
		return subsB[i-1]
	}
	const filter = "$share/g/shared/#"
	singleShared, sharedA, sharedB := newStreamSet(), newStreamSet(), newStreamSet()
	single.addReceivers("shared", 0, []*streamSet{singleShared}, filter)
	a.addReceivers("shared", 0, []*streamSet{sharedA}, filter)
	b.addReceivers("shared", 0, []*streamSet{sharedB}, filter)

	for i := 1; i <= pubs; i++ {
		for _, flow := range []string{"p2p", "shared"} {
			id := uint32(i)
			if flow == "shared" {
				id += 100
			}
			var order []uint32
			for q := uint32(0); q < msgs; q++ {
				switch x := rng.Intn(100); {
				case x < 3: // lost in the middle
				case q >= msgs-3 && i%3 == 0: // lost at the tail
				case x < 5: // refused by the broker: sent, never delivered
					sent[id][0].rejected.Add(1)
					sent[id][1].rejected.Add(1)
				case x < 8 && flow == "p2p": // delivered twice
					order = append(order, q, q)
				default:
					order = append(order, q)
				}
			}
			// Some neighbours swap: late arrivals.
			for k := 1; k < len(order); k++ {
				if rng.Intn(100) < 4 {
					order[k-1], order[k] = order[k], order[k-1]
				}
			}
			sent[id][0].seq.Store(msgs)
			sent[id][1].seq.Store(msgs)
			for _, q := range order {
				if flow == "p2p" {
					singleSubs[i-1].observe(id, q)
					partSub(i).observe(id, q)
					continue
				}
				singleShared.observe(id, q)
				if rng.Intn(2) == 0 {
					sharedA.observe(id, q)
				} else {
					sharedB.observe(id, q)
				}
			}
		}
	}
	v := vector{
		Note: "written by k6/extension/load's TestSplitStreamsVectorIsCurrent (-update); read by result's tests (Account). " +
			"Out-of-order and duplicates of a shared subscription whose members sit in different instances " +
			"cannot be judged across them: only p2p's are compared.",
		Fanout: map[string]int64{"p2p": 1, "shared": 1},
		Single: map[string]streamTotals{},
		Parts:  []map[string]*FlowStreams{a.Streams(), b.Streams()},
	}
	for flow, sets := range map[string][]*streamSet{"p2p": singleSubs, "shared": {singleShared}} {
		var t streamTotals
		for _, s := range sets {
			s.totals(&t, &single.publishers, false)
		}
		v.Single[flow] = t
	}
	return v
}
