package merge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// FlowStreams is one flow's delivery accounting in an instance file (what
// load.Run.Streams gives the script):
//
//	{"publishers": [[id, sent, rejected], ...],
//	 "receivers":  [[receiver, publisher, unique, duplicates, out_of_order], ...]}
//
// A publisher runs in one instance; a receiver (a subscriber's index, or a
// shared subscription's filter) may have rows in several, when the members
// of one shared subscription sit in different instances.
type FlowStreams struct {
	Publishers []PublisherRow `json:"publishers"`
	Receivers  []ReceiverRow  `json:"receivers"`
}

// PublisherRow is [id, sent, rejected]: sent counts every message the
// publisher numbered, rejected those the broker refused (never delivered).
type PublisherRow struct {
	ID, Sent, Rejected int64
}

// ReceiverRow is [receiver, publisher, unique, duplicates, out_of_order].
type ReceiverRow struct {
	Receiver                                  string
	Publisher, Unique, Duplicates, OutOfOrder int64
}

// UnmarshalJSON reads the row's array form.
func (p *PublisherRow) UnmarshalJSON(b []byte) error {
	var a []int64
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 3 {
		return fmt.Errorf("a publisher row is [id, sent, rejected], not %s", b)
	}
	p.ID, p.Sent, p.Rejected = a[0], a[1], a[2]
	return nil
}

// MarshalJSON writes the row's array form.
func (p PublisherRow) MarshalJSON() ([]byte, error) {
	return json.Marshal([3]int64{p.ID, p.Sent, p.Rejected})
}

// UnmarshalJSON reads the row's array form; the receiver may be a number
// (a subscriber's index) or a string.
func (r *ReceiverRow) UnmarshalJSON(b []byte) error {
	var a []json.RawMessage
	bad := fmt.Errorf("a receiver row is [receiver, publisher, unique, duplicates, out_of_order], not %s", b)
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 5 {
		return bad
	}
	if err := json.Unmarshal(a[0], &r.Receiver); err != nil {
		var n json.Number
		if json.Unmarshal(a[0], &n) != nil {
			return bad
		}
		r.Receiver = n.String()
	}
	for i, dst := range []*int64{&r.Publisher, &r.Unique, &r.Duplicates, &r.OutOfOrder} {
		if err := json.Unmarshal(a[i+1], dst); err != nil {
			return bad
		}
	}
	return nil
}

// MarshalJSON writes the row's array form.
func (r ReceiverRow) MarshalJSON() ([]byte, error) {
	return json.Marshal([5]any{r.Receiver, r.Publisher, r.Unique, r.Duplicates, r.OutOfOrder})
}

// FlowDelivery is one flow's merged delivery accounting.
type FlowDelivery struct {
	Fanout     int64 `json:"fanout"`
	Publishers int   `json:"publishers"`
	Sent       int64 `json:"sent"`
	Rejected   int64 `json:"rejected"`
	// Expected is fanout × (sent − rejected): what the subscribers should
	// have received in all; nil when the flow's fanout is not checked.
	Expected *int64 `json:"expected"`
	Unique   int64  `json:"unique"`
	// Lost is the larger of StreamLost and Expected − unique (of known
	// publishers): a stream that received nothing has no row to lose on.
	Lost       int64 `json:"lost"`
	StreamLost int64 `json:"stream_lost"`
	Duplicates int64 `json:"duplicates"`
	OutOfOrder int64 `json:"out_of_order"`
	Streams    int   `json:"streams"`
	// UnknownPublishers are publishers that receivers heard from but that
	// no instance file ran: their instance is missing, so their loss is
	// unknown (UnknownUnique is what arrived from them, not in Lost).
	UnknownPublishers []int64 `json:"unknown_publishers,omitempty"`
	UnknownUnique     int64   `json:"unknown_unique,omitempty"`
	// DuplicatePublishers ran in more than one instance file (their sent
	// and rejected are added up): instances of one run never share ids.
	DuplicatePublishers []int64 `json:"duplicate_publishers,omitempty"`
}

type streamKey struct {
	receiver  string
	publisher int64
}

// Delivery merges the instances' stream accounting by flow, exactly as one
// process seeing every stream would count it: a stream's loss is
// max(0, sent − rejected − Σ unique), sent and rejected from the instance
// that ran the publisher, unique summed over the instances that received on
// the stream. fanout gives each flow's expected receptions per message
// (0 or absent: not checked).
func Delivery(fanout map[string]int64, parts ...map[string]FlowStreams) map[string]FlowDelivery {
	flows := map[string]bool{}
	for _, p := range parts {
		for name := range p {
			flows[name] = true
		}
	}
	out := map[string]FlowDelivery{}
	for name := range flows {
		out[name] = flowDelivery(name, fanout[name], parts)
	}
	return out
}

func flowDelivery(name string, fanout int64, parts []map[string]FlowStreams) FlowDelivery {
	type pub struct{ sent, rejected, files int64 }
	pubs := map[int64]*pub{}
	streams := map[streamKey]*ReceiverRow{}
	for _, p := range parts {
		fs, ok := p[name]
		if !ok {
			continue
		}
		for _, r := range fs.Publishers {
			x := pubs[r.ID]
			if x == nil {
				x = &pub{}
				pubs[r.ID] = x
			}
			x.sent += r.Sent
			x.rejected += r.Rejected
			x.files++
		}
		for _, r := range fs.Receivers {
			k := streamKey{r.Receiver, r.Publisher}
			s := streams[k]
			if s == nil {
				s = &ReceiverRow{Receiver: r.Receiver, Publisher: r.Publisher}
				streams[k] = s
			}
			s.Unique += r.Unique
			s.Duplicates += r.Duplicates
			s.OutOfOrder += r.OutOfOrder
		}
	}
	d := FlowDelivery{Fanout: fanout, Publishers: len(pubs), Streams: len(streams)}
	for id, p := range pubs {
		d.Sent += p.sent
		d.Rejected += p.rejected
		if p.files > 1 {
			d.DuplicatePublishers = append(d.DuplicatePublishers, id)
		}
	}
	unknown := map[int64]bool{}
	knownUnique := int64(0)
	for _, s := range streams {
		d.Unique += s.Unique
		d.Duplicates += s.Duplicates
		d.OutOfOrder += s.OutOfOrder
		p := pubs[s.Publisher]
		if p == nil {
			unknown[s.Publisher] = true
			d.UnknownUnique += s.Unique
			continue
		}
		knownUnique += s.Unique
		d.StreamLost += max(0, p.sent-p.rejected-s.Unique)
	}
	for id := range unknown {
		d.UnknownPublishers = append(d.UnknownPublishers, id)
	}
	sortIDs(d.UnknownPublishers)
	sortIDs(d.DuplicatePublishers)
	d.Lost = d.StreamLost
	if fanout > 0 {
		exp := fanout * (d.Sent - d.Rejected)
		d.Expected = &exp
		d.Lost = max(d.StreamLost, exp-knownUnique)
	}
	return d
}

func sortIDs(ids []int64) { sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] }) }

// deliveryNotes say what the accounting could not settle.
func deliveryNotes(d map[string]FlowDelivery) []string {
	var notes []string
	for _, name := range sortedKeys(d) {
		f := d[name]
		if len(f.UnknownPublishers) > 0 {
			notes = append(notes, fmt.Sprintf("flow %s: %d messages arrived from publishers %s that no instance file ran "+
				"(an instance is missing): their loss is unknown and not counted", flowLabel(name), f.UnknownUnique, idList(f.UnknownPublishers)))
		}
		if len(f.DuplicatePublishers) > 0 {
			notes = append(notes, fmt.Sprintf("flow %s: publishers %s appear in more than one instance file: their sent "+
				"counts were added up; instances of one run should never share publisher ids", flowLabel(name), idList(f.DuplicatePublishers)))
		}
	}
	return notes
}

func flowLabel(name string) string {
	if name == "" {
		return `""`
	}
	return name
}

func idList(ids []int64) string {
	const most = 10
	s := ""
	for i, id := range ids {
		if i == most {
			return s + fmt.Sprintf(" and %d more", len(ids)-most)
		}
		if i > 0 {
			s += ","
		}
		s += strconv.FormatInt(id, 10)
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
