package result

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// FlowDelivery is one flow's delivery, in a single run's result and a
// merged one alike. The accounting fields come from the streams (Account);
// the group fields are what the flow's subscriber groups saw (a merge:
// over all instances). An instance file of a segmented run, which sees
// only part of the streams, keeps its groups' own view (their loss as far
// as they can judge it; no fanout, sent or publishers): the merge accounts
// the run.
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
	// Latency is the flow's own pub-to-sub latency (FlowLatencies), absent
	// where it received nothing timed.
	Latency *load.Stats `json:"latency,omitempty"`

	Group
}

// Group is what a flow's subscriber groups saw: their clients, every
// message received (duplicates too), and the shared-subscription probes
// their connect() took before the load (not load: broker counters less
// them are the load's).
type Group struct {
	Clients        int64 `json:"clients"`
	Connected      int64 `json:"connected"`
	Received       int64 `json:"received"`
	MinPerClient   int64 `json:"min_per_client"`
	MaxPerClient   int64 `json:"max_per_client"`
	PolledSockets  int64 `json:"polled_sockets"`
	GrantedQoS     int   `json:"granted_qos"` // the lowest granted, -1 before any SUBACK (or no group)
	ProbesReceived int64 `json:"probes_received"`
	// Disconnects: drops of the groups' connections (a composite's
	// background must keep every one open).
	Disconnects int64 `json:"disconnects"`
}

// add folds another part's group into g (g: the parts so far, or zero).
func (g *Group) add(o Group, first bool) {
	if first {
		*g = o
		return
	}
	g.Clients += o.Clients
	g.Connected += o.Connected
	g.Received += o.Received
	g.PolledSockets += o.PolledSockets
	g.ProbesReceived += o.ProbesReceived
	g.Disconnects += o.Disconnects
	g.MinPerClient = min(g.MinPerClient, o.MinPerClient)
	g.MaxPerClient = max(g.MaxPerClient, o.MaxPerClient)
	if g.GrantedQoS < 0 || (o.GrantedQoS >= 0 && o.GrantedQoS < g.GrantedQoS) {
		g.GrantedQoS = o.GrantedQoS
	}
}

type streamKey struct {
	receiver  string
	publisher int64
}

// Account is the delivery of a run by flow, from its parts (one process's
// result, or every instance's of a segmented run): the streams accounted
// exactly as one process seeing every stream would count them (a stream's
// loss is max(0, sent − rejected − Σ unique), sent and rejected from the
// part that ran the publisher, unique summed over the parts that received
// on the stream), and the parts' subscriber groups added up. fanout gives
// each flow's expected receptions per message (0 or absent: not checked);
// groups hold only the parts' flows that had a subscriber group (a part
// with publishers only has none), and may be nil.
func Account(fanout map[string]int64, groups []map[string]FlowDelivery, parts ...map[string]FlowStreams) map[string]FlowDelivery {
	flows := map[string]bool{}
	for _, p := range parts {
		for name := range p {
			flows[name] = true
		}
	}
	for _, g := range groups {
		for name := range g {
			flows[name] = true
		}
	}
	out := map[string]FlowDelivery{}
	for name := range flows {
		d := flowDelivery(name, fanout[name], parts)
		d.GrantedQoS = -1 // until a group of the flow says otherwise
		n := 0
		for _, g := range groups {
			if x, ok := g[name]; ok {
				d.Group.add(x.Group, n == 0)
				n++
			}
		}
		out[name] = d
	}
	return out
}

// FanoutsOf is each flow's fanout, as the result's flows give it.
func FanoutsOf(flows []map[string]any) map[string]int64 {
	out := map[string]int64{}
	for _, f := range flows {
		name, _ := f["name"].(string)
		n, _ := f["fanout"].(float64)
		out[name] = int64(n)
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

// DeliveryNotes say what the accounting could not settle.
func DeliveryNotes(d map[string]FlowDelivery) []string {
	var notes []string
	for _, name := range SortedKeys(d) {
		f := d[name]
		if len(f.UnknownPublishers) > 0 {
			notes = append(notes, fmt.Sprintf("flow %s: %d messages arrived from publishers %s that no instance file ran "+
				"(an instance is missing): their loss is unknown and not counted", FlowLabel(name), f.UnknownUnique, idList(f.UnknownPublishers)))
		}
		if len(f.DuplicatePublishers) > 0 {
			notes = append(notes, fmt.Sprintf("flow %s: publishers %s appear in more than one instance file: their sent "+
				"counts were added up; instances of one run should never share publisher ids", FlowLabel(name), idList(f.DuplicatePublishers)))
		}
	}
	return notes
}

// FlowLabel shows a flow name, quoting the empty one.
func FlowLabel(name string) string {
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

// SortedKeys are m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
