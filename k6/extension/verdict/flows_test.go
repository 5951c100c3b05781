package verdict

import (
	"strings"
	"testing"
)

// A composite's parts are judged each on its own: the background on its
// connections, a traffic part on its clients, loss and own p99.
func TestFlowsJudgeEachPartOnItsOwn(t *testing.T) {
	doc := `{"parameters": {"qos": 1, "p99_ms": 100},
	 "flows": [{"name": "background", "publishers": 0, "subscribers": 10},
	           {"name": "p2p", "publishers": 2, "subscribers": 2, "fanout": 1},
	           {"name": "fanout", "publishers": 1, "subscribers": 3, "fanout": 3}],
	 "connect": {"sub_background": {"connected": 10}, "sub_p2p": {"connected": 2}, "pub_p2p": {"connected": 2},
	             "sub_fanout": {"connected": 3}, "pub_fanout": {"connected": 1}},
	 "delivery": {"background": {"clients": 10, "connected": 9, "disconnects": 1},
	              "p2p": {"sent": 10, "expected": 10, "unique": 10, "latency": {"count": 10, "p99": 2}},
	              "fanout": {"sent": 5, "expected": 15, "unique": 14, "lost": 1, "latency": {"count": 14, "p99": 250}}}}`
	v, err := Flows([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !v["p2p"].Passed || v["p2p"].Failures != nil {
		t.Errorf("p2p: %+v", v["p2p"])
	}
	bg := strings.Join(v["background"].Failures, "; ")
	if v["background"].Passed || bg != "9 of 10 open at the end; 1 dropped" {
		t.Errorf("background: %+v", v["background"])
	}
	fo := strings.Join(v["fanout"].Failures, "; ")
	if v["fanout"].Passed || fo != "1 lost at QoS 1; p99 250 ms over the 100 ms bound" {
		t.Errorf("fanout: %+v", v["fanout"])
	}
}

// A part whose clients did not all open fails, named by role.
func TestFlowsNameClientsNotOpened(t *testing.T) {
	doc := `{"parameters": {"qos": 0}, "flows": [{"name": "fanin", "publishers": 4, "subscribers": 2, "fanout": 1}],
	 "connect": {"sub_fanin": {"connected": 2}, "pub_fanin": {"connected": 3}},
	 "delivery": {"fanin": {"sent": 3, "expected": 3, "unique": 3, "latency": {"count": 3, "p99": 1}}}}`
	v, err := Flows([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if v["fanin"].Passed || strings.Join(v["fanin"].Failures, "; ") != "3 of 4 publishers opened" {
		t.Errorf("fanin: %+v", v["fanin"])
	}
}
