package verdict_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// Issue 41's run: 25,000 subscribers and 25,000 publishers in one k6
// process whose open-files limit was 20,000. 19,989 connections opened, the
// rest failed with EMFILE as connection.Explain words it, and the publisher
// group's connect() rejected: the generator's limit, not a broker refusal.
func TestTheGeneratorsOpenFilesLimitIsNeverTheBrokersRefusal(t *testing.T) {
	emfile := connection.Explain("127.0.0.1:1883", fmt.Errorf("dial tcp 127.0.0.1:1883: socket: %w", syscall.EMFILE)).Error()
	raw, err := json.Marshal(map[string]any{
		"parameters": map[string]any{"qos": 1},
		"flows":      []any{map[string]any{"publishers": 25000, "subscribers": 25000, "fanout": 1, "subTopics": "test/{i}"}},
		"counts":     map[string]any{"mqtt_connects": 19989, "mqtt_connect_failures": 30011},
		"connect": map[string]any{
			"sub_p2p": map[string]any{"connected": 19989, "failed": 5011, "first_error": emfile},
			"pub_p2p": map[string]any{"error": "PublisherGroup.connect: none of 25000 connections to 127.0.0.1:1883 " +
				"succeeded: " + emfile},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var d verdict.Doc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	g := verdict.Diagnose(&d)
	if g.Cause != "generator_open_files" {
		t.Fatalf("got %s: %s", g.Cause, g.Text)
	}
	for _, want := range []string{"19989 connections opened", "30011 failed", "ulimit -n", "--instances"} {
		if !strings.Contains(g.Text, want) {
			t.Errorf("%q lacks %q", g.Text, want)
		}
	}
}
