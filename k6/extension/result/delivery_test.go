package result

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

func pubs(rows ...PublisherRow) []PublisherRow { return rows }
func recv(rows ...ReceiverRow) []ReceiverRow   { return rows }

func checkFlow(t *testing.T, got FlowDelivery, expected *int64, unique, lost int64) {
	t.Helper()
	if (expected == nil) != (got.Expected == nil) || (expected != nil && *expected != *got.Expected) {
		t.Errorf("expected = %v, want %v", fmtPtr(got.Expected), fmtPtr(expected))
	}
	if got.Unique != unique || got.Lost != lost {
		t.Errorf("unique %d lost %d, want unique %d lost %d (%+v)", got.Unique, got.Lost, unique, lost, got)
	}
}

func ptr(n int64) *int64 { return &n }

// p2p: the publishers run in one instance, their subscribers in another,
// which alone sees no loss at the tail of a stream.
func TestDeliveryCountsLossOfStreamsSplitAcrossInstances(t *testing.T) {
	a := map[string]FlowStreams{"p2p": {Publishers: pubs(
		PublisherRow{ID: 0, Sent: 100}, // one lost in the middle
		PublisherRow{ID: 1, Sent: 100}, // the last two never arrived
		PublisherRow{ID: 2, Sent: 100, Rejected: 10},
	)}}
	b := map[string]FlowStreams{"p2p": {Receivers: recv(
		ReceiverRow{Receiver: "0", Publisher: 0, Unique: 99, OutOfOrder: 3},
		ReceiverRow{Receiver: "1", Publisher: 1, Unique: 98, Duplicates: 2},
		ReceiverRow{Receiver: "2", Publisher: 2, Unique: 90}, // the broker refused 10: not lost
	)}}
	d := Account(map[string]int64{"p2p": 1}, nil, a, b)["p2p"]
	checkFlow(t, d, ptr(290), 287, 3)
	if d.StreamLost != 3 || d.Duplicates != 2 || d.OutOfOrder != 3 || d.Streams != 3 || d.Sent != 300 || d.Rejected != 10 {
		t.Errorf("%+v", d)
	}
	// Order of the parts does not matter.
	if d2 := Account(map[string]int64{"p2p": 1}, nil, b, a)["p2p"]; d2.Lost != d.Lost || d2.Unique != d.Unique {
		t.Errorf("merging b, a gives %+v, a, b %+v", d2, d)
	}
}

// A shared subscription's members in two instances: each received part of
// every stream, and only their sum says what was lost.
func TestDeliveryAddsUpSharedSubscriptionMembersAcrossInstances(t *testing.T) {
	const g = "$share/g/bench/#"
	a := map[string]FlowStreams{"shared": {Publishers: pubs(PublisherRow{ID: 10, Sent: 50}, PublisherRow{ID: 11, Sent: 50})}}
	b := map[string]FlowStreams{"shared": {Receivers: recv(
		ReceiverRow{Receiver: g, Publisher: 10, Unique: 30}, ReceiverRow{Receiver: g, Publisher: 11, Unique: 25})}}
	c := map[string]FlowStreams{"shared": {Receivers: recv(
		ReceiverRow{Receiver: g, Publisher: 10, Unique: 20}, ReceiverRow{Receiver: g, Publisher: 11, Unique: 24, Duplicates: 1})}}
	d := Account(map[string]int64{"shared": 1}, nil, a, b, c)["shared"]
	checkFlow(t, d, ptr(100), 99, 1)
	if d.Streams != 2 || d.Duplicates != 1 {
		t.Errorf("streams %d duplicates %d, want 2 and 1", d.Streams, d.Duplicates)
	}
	// One member's instance alone would count what the other received as lost.
	if alone := Account(map[string]int64{"shared": 1}, nil, a, b)["shared"]; alone.Lost != 45 {
		t.Errorf("with one member: lost %d, want 45", alone.Lost)
	}
}

// A subscriber that received nothing from a publisher has no row: only
// the fanout check sees that stream's loss.
func TestDeliveryFanoutCatchesAStreamThatReceivedNothing(t *testing.T) {
	a := map[string]FlowStreams{"fanout": {
		Publishers: pubs(PublisherRow{ID: 0, Sent: 10}),
		Receivers:  recv(ReceiverRow{Receiver: "0", Publisher: 0, Unique: 10}),
	}}
	d := Account(map[string]int64{"fanout": 2}, nil, a)["fanout"]
	checkFlow(t, d, ptr(20), 10, 10)
	if d.StreamLost != 0 {
		t.Errorf("stream_lost = %d, want 0 (no stream lost anything it had)", d.StreamLost)
	}
	// Without a fanout the flow is not checked: only stream losses count.
	if d := Account(nil, nil, a)["fanout"]; d.Expected != nil || d.Lost != 0 {
		t.Errorf("unchecked flow: %+v", d)
	}
}

func TestDeliveryLeavesLossOfUnknownPublishersUncounted(t *testing.T) {
	a := map[string]FlowStreams{"p2p": {
		Publishers: pubs(PublisherRow{ID: 0, Sent: 10}),
		Receivers: recv(ReceiverRow{Receiver: "0", Publisher: 0, Unique: 10},
			ReceiverRow{Receiver: "1", Publisher: 1, Unique: 7}), // publisher 1's instance is missing
	}}
	d := Account(map[string]int64{"p2p": 1}, nil, a)["p2p"]
	checkFlow(t, d, ptr(10), 17, 0)
	if !slices.Equal(d.UnknownPublishers, []int64{1}) || d.UnknownUnique != 7 {
		t.Errorf("unknown publishers %v (%d received), want [1] (7)", d.UnknownPublishers, d.UnknownUnique)
	}
	if notes := DeliveryNotes(map[string]FlowDelivery{"p2p": d}); len(notes) != 1 {
		t.Errorf("notes = %q, want one naming publisher 1", notes)
	}
}

func TestFlowStreamsReadsTheResultFileShape(t *testing.T) {
	var fs map[string]FlowStreams
	src := `{"p2p": {"publishers": [[3, 100, 2]], "receivers": [["3", 3, 97, 1, 0], [4, 3, 1, 0, 0]]}}`
	if err := json.Unmarshal([]byte(src), &fs); err != nil {
		t.Fatal(err)
	}
	want := FlowStreams{Publishers: pubs(PublisherRow{3, 100, 2}),
		Receivers: recv(ReceiverRow{"3", 3, 97, 1, 0}, ReceiverRow{"4", 3, 1, 0, 0})}
	if !slices.Equal(fs["p2p"].Publishers, want.Publishers) || !slices.Equal(fs["p2p"].Receivers, want.Receivers) {
		t.Fatalf("read %+v, want %+v", fs["p2p"], want)
	}
	for _, bad := range []string{`{"p2p": {"publishers": [[3, 100]]}}`, `{"p2p": {"receivers": [["3", 3, 97]]}}`} {
		if err := json.Unmarshal([]byte(bad), &fs); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
