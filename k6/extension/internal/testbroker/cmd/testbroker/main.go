// Command testbroker is an MQTT broker (mochi-mqtt) that misbehaves on
// purpose, for the Python tests that run the real k6 build against it. It
// listens on loopback only.
//
//	testbroker -port 11891 -literal-share
//	testbroker -port 11891 -reorder-every 50
//	testbroker -port 11891 -emqx-sys-acl 5.8.6
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/internal/testbroker"
)

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (required)")
	literalShare := flag.Bool("literal-share", false, "take $share/... filters literally: no shared subscriptions")
	reorder := flag.Int("reorder-every", 0, "deliver one of every N messages of a topic after the next one")
	sysACL := flag.String("emqx-sys-acl", "", "EMQX's default $SYS ACL (username dashboard only), telling this version")
	flag.Parse()
	if *port <= 0 || *port > 65535 {
		fmt.Fprintln(os.Stderr, "testbroker: -port is required (1..65535)")
		os.Exit(2)
	}
	srv := mochi.New(&mochi.Options{InlineClient: *reorder > 1 || *sysACL != "", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Capabilities: mochi.NewDefaultServerCapabilities()})
	hooks := []mochi.Hook{new(auth.AllowHook)}
	if *sysACL != "" {
		hooks = []mochi.Hook{&testbroker.SysACL{Server: srv, Version: *sysACL}}
	}
	if *literalShare {
		hooks = append(hooks, new(testbroker.LiteralShare))
	}
	if *reorder > 1 {
		hooks = append(hooks, &testbroker.Reorder{Server: srv, Every: *reorder, Hold: 50 * time.Millisecond})
	}
	for _, h := range hooks {
		if err := srv.AddHook(h, nil); err != nil {
			fmt.Fprintln(os.Stderr, "testbroker:", err)
			os.Exit(1)
		}
	}
	l := listeners.NewTCP(listeners.Config{ID: "t", Address: fmt.Sprintf("127.0.0.1:%d", *port)})
	if err := srv.AddListener(l); err != nil {
		fmt.Fprintln(os.Stderr, "testbroker:", err)
		os.Exit(1)
	}
	go func() {
		if err := srv.Serve(); err != nil {
			fmt.Fprintln(os.Stderr, "testbroker:", err)
			os.Exit(1)
		}
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	_ = srv.Close()
}
