package merge

import "testing"

// Publishers in one instance, their subscribers in the other: the merged
// delivery holds the subscribers' group as it was (granted QoS 1, at least
// 99 per client), not folded with the publishing instance, which had none.
func TestMergedDeliveryKeepsTheGroupsOfTheInstancesThatHadThem(t *testing.T) {
	dir := t.TempDir()
	one := instanceDoc("r", 1, 2)
	one["streams"] = obj{"p2p": obj{"publishers": []any{[]any{0, 100, 0}, []any{1, 100, 0}}, "receivers": []any{}}}
	writeInstance(t, dir, one)
	two := instanceDoc("r", 2, 2)
	two["streams"] = obj{"p2p": obj{"publishers": []any{},
		"receivers": []any{[]any{"0", 0, 100, 0, 0}, []any{"1", 1, 99, 0, 0}}}}
	two["delivery"] = obj{"p2p": obj{"clients": 2, "connected": 2, "received": 199, "min_per_client": 99,
		"max_per_client": 100, "polled_sockets": 2, "granted_qos": 1, "probes_received": 0,
		"unique": 199, "lost": 0, "duplicates": 0, "out_of_order": 0, "streams": 2, "expected": 0}}
	writeInstance(t, dir, two)

	d := mustMerge(t, dir, "r").Delivery["p2p"]
	if d.GrantedQoS != 1 || d.MinPerClient != 99 || d.Clients != 2 || d.Received != 199 {
		t.Errorf("group %+v, want the subscribing instance's", d.Group)
	}
	if d.Sent != 200 || d.Unique != 199 || d.Lost != 1 || d.Expected == nil || *d.Expected != 200 {
		t.Errorf("accounting %+v: 200 sent, 199 arrived", d)
	}
}
