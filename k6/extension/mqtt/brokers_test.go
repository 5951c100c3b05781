package mqtt

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startMochi runs an embedded mochi-mqtt broker on loopback.
func startMochi(t testing.TB, cfg listeners.Config) (string, *mochi.Server) {
	return startMochiWith(t, cfg, nil)
}

// startMochiWith runs mochi-mqtt with changed capabilities and extra hooks:
// a broker that behaves otherwise than Mosquitto, on purpose.
func startMochiWith(t testing.TB, cfg listeners.Config, caps func(*mochi.Capabilities), hooks ...mochi.Hook) (string, *mochi.Server) {
	opts := &mochi.Options{InlineClient: false, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Capabilities: mochi.NewDefaultServerCapabilities()}
	if caps != nil {
		caps(opts.Capabilities)
	}
	srv := mochi.New(opts)
	for _, h := range append([]mochi.Hook{new(auth.AllowHook), &oneSessionAtATime{srv: srv}}, hooks...) {
		if err := srv.AddHook(h, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Address = freePort(t)
	if cfg.ID == "" {
		cfg.ID = "t"
	}
	if err := srv.AddListener(listeners.NewTCP(cfg)); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	t.Cleanup(func() { _ = srv.Close() })
	waitPort(t, cfg.Address)
	return cfg.Address, srv
}

// oneSessionAtATime closes a race of mochi v2.7.9 (server.go attachClient)
// that real brokers do not have: a connection ending a session that expires
// (Clean Session, or no session expiry) checks whether it was taken over,
// and only then deletes its client id from the server's clients. A new
// connection of that id arriving in between (a group's persistent connect
// right after it discarded an earlier session: connection.endSession)
// registers first and is deleted: nothing is routed to it any more, and a
// test loses its messages. A CONNECT here waits until the ending session of
// its client id is gone, as Mosquitto (one event loop) and EMQX (a lock per
// client id) order them.
type oneSessionAtATime struct {
	mochi.HookBase
	srv *mochi.Server
}

func (h *oneSessionAtATime) ID() string { return "one-session-at-a-time" }

func (h *oneSessionAtATime) Provides(b byte) bool { return b == mochi.OnConnect }

func (h *oneSessionAtATime) OnConnect(cl *mochi.Client, _ packets.Packet) error {
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		old, ok := h.srv.Clients.Get(cl.ID)
		if !ok || old.IsTakenOver() || !expires(old) {
			return nil
		}
	}
	return nil // a live session with Clean Start: taken over as mochi does
}

// expires is mochi's own test (attachClient), on the fields its CONNECT
// set (the rest of Properties changes as the connection ends).
func expires(cl *mochi.Client) bool {
	v := cl.Properties.ProtocolVersion
	return (v == 5 && cl.Properties.Props.SessionExpiryInterval == 0) || (v < 5 && cl.Properties.Clean)
}

// startMosquitto runs a real Mosquitto on loopback. Without the binary the
// test is skipped, unless MQTTBENCH_REQUIRE_BROKERS=1 (CI) makes it fail.
func startMosquitto(t testing.TB) string {
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		if os.Getenv("MQTTBENCH_REQUIRE_BROKERS") == "1" {
			t.Fatal("mosquitto is not installed (scripts/setup.sh debian installs it)")
		}
		t.Skip("mosquitto is not installed")
	}
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	body := fmt.Sprintf("listener %s 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 1000\nmax_queued_messages 100000\nset_tcp_nodelay true\nlog_dest stderr\nlog_type error\n", port)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitPort(t, addr)
	return addr
}

func waitPort(t testing.TB, addr string) {
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}
