package mqtt

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/internal/testbroker"
)

// startEMQXLike is a broker with EMQX's default $SYS ACL, telling version
// on EMQX's topic to the username `dashboard` only.
func startEMQXLike(t *testing.T, version string) string {
	t.Helper()
	srv := mochi.New(&mochi.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Capabilities: mochi.NewDefaultServerCapabilities()})
	if err := srv.AddHook(&testbroker.SysACL{Server: srv, Version: version}, nil); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	if err := srv.AddListener(listeners.NewTCP(listeners.Config{ID: "t", Address: addr})); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	t.Cleanup(func() { _ = srv.Close() })
	waitPort(t, addr)
	return addr
}

// The EMQX topic of brokers/emqx/broker.toml.
var emqxTopics = []string{"$SYS/brokers/+/version"}

func TestBrokerVersionAsksWithTheUsernameTheBrokersACLWants(t *testing.T) {
	addr := startEMQXLike(t, "5.8.6")
	got := brokerVersion("mqtt://"+addr, emqxTopics, "dashboard")
	if got["version"] != "5.8.6" || got["source"] != `$SYS/brokers/emqx@172.18.0.2/version (as "dashboard")` {
		t.Fatalf("as dashboard: %v", got)
	}
	// Anonymous, as a client from another host is: refused, and said so.
	got = brokerVersion("mqtt://"+addr, emqxTopics, "")
	if e, _ := got["error"].(string); !strings.Contains(e, "SUBACK 0x80") || got["version"] != nil {
		t.Fatalf("anonymous: %v", got)
	}
}

func TestBrokerVersionReadsMosquittosTopicAnonymously(t *testing.T) {
	// mochi tells its own version on Mosquitto's topic, retained, as Mosquitto does.
	addr, _ := startMochi(t, listeners.Config{})
	got := brokerVersion("mqtt://"+addr, []string{"$SYS/broker/version", "$SYS/brokers/+/version"}, "")
	if v, _ := got["version"].(string); v == "" || got["source"] != "$SYS/broker/version" {
		t.Fatalf("%v", got)
	}
}

func TestBrokerVersionIsNotAskedOverTLSOrWithoutATopic(t *testing.T) {
	for url, topics := range map[string][]string{"mqtts://127.0.0.1:8883": emqxTopics, "mqtt://127.0.0.1:1": nil} {
		if e, _ := brokerVersion(url, topics, "")["error"].(string); e == "" {
			t.Fatalf("%s %v: no error", url, topics)
		}
	}
}
