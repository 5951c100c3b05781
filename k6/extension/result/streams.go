package result

import (
	"encoding/json"
	"fmt"
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

// JSONSchema is the row's array form.
func (PublisherRow) JSONSchema() map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 3, "maxItems": 3}
}

// JSONSchema is the row's array form: the receiver, then four counts.
func (ReceiverRow) JSONSchema() map[string]any {
	return map[string]any{"type": "array", "minItems": 5, "maxItems": 5,
		"prefixItems": []any{map[string]any{"type": []string{"string", "integer"}}}, "items": map[string]any{"type": "integer"}}
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
