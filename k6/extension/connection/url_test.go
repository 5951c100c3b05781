package connection

import (
	"strings"
	"testing"
)

// Broker URLs: every scheme the docs name, the default ports, and a clear
// refusal for what cannot work (credentials, paths outside WebSocket).
func TestParseURLAcceptsBrokerURLsAndNamesWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		raw, addr string
		secure    bool
		err       string
	}{
		{"mqtt://127.0.0.1:1883", "127.0.0.1:1883", false, ""},
		{"tcp://broker", "broker:1883", false, ""},
		{"mqtts://broker", "broker:8883", true, ""},
		{"ssl://broker:9883", "broker:9883", true, ""},
		{"tls://[::1]:8883/", "[::1]:8883", true, ""},
		{"127.0.0.1:1884", "127.0.0.1:1884", false, ""},
		{"ws://broker:8083", "broker:8083", false, ""},
		{"wss://broker", "broker:8084", true, ""},
		{"http://broker", "", false, `unknown scheme "http"`},
		{"mqtt://user:secret@broker", "", false, "credentials do not belong in the URL"},
		{"mqtt://broker:99999", "", false, "bad port"},
		{"mqtt://broker/topic", "", false, "a path belongs to ws:// and wss:// URLs only"},
		{"ws://broker?x=1", "", false, "unexpected query"},
		{"mqtt://", "", false, "no host"},
	} {
		b, err := ParseURL(c.raw)
		switch {
		case c.err == "" && (err != nil || b.Addr != c.addr || b.Secure != c.secure):
			t.Errorf("%s: got %+v, %v; want %s secure=%v", c.raw, b, err, c.addr, c.secure)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.raw, err, c.err)
		}
	}
}

// A WebSocket URL keeps its path (the broker's, e.g. /mqtt), /mqtt when none.
func TestParseURLKeepsTheWebSocketPath(t *testing.T) {
	for raw, path := range map[string]string{"ws://b:8083": "/mqtt", "ws://b:8083/": "/", "wss://b/ws/mqtt": "/ws/mqtt", "mqtt://b": ""} {
		if b, err := ParseURL(raw); err != nil || b.WSPath != path {
			t.Errorf("%s: path %q, %v; want %q", raw, b.WSPath, err, path)
		}
	}
}

func TestALocalAddressNotOfThisHostIsRefused(t *testing.T) {
	if _, err := ParseLocalAddresses("127.0.0.2-127.0.0.3"); err != nil {
		t.Fatal(err)
	}
	_, err := ParseLocalAddresses("127.0.0.2,198.51.100.7")
	if err == nil || !strings.Contains(err.Error(), "198.51.100.7 is not an address of this host") {
		t.Fatalf("got %v", err)
	}
}
