// Package testbroker holds mochi-mqtt hooks that make a broker misbehave as
// some real brokers do, for tests only: the Go tests embed them, and
// cmd/testbroker serves them to the real k6 build in the Python tests.
package testbroker

import (
	"strings"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// LiteralShare is a broker without shared subscriptions that takes
// "$share/g/f" as an ordinary filter, as some 3.1.1 brokers do: the SUBACK
// grants it, and no message is ever published to a topic it matches.
type LiteralShare struct{ mochi.HookBase }

// ID names the hook.
func (h *LiteralShare) ID() string { return "literal-share" }

// Provides says which events the hook handles.
func (h *LiteralShare) Provides(b byte) bool { return b == mochi.OnSubscribe }

// OnSubscribe renames $share/ filters before mochi routes them.
func (h *LiteralShare) OnSubscribe(_ *mochi.Client, pk packets.Packet) packets.Packet {
	for i, f := range pk.Filters {
		// mochi routes any "$share/" filter as shared: renamed, the filter
		// keeps its shape and matches what a literal one would (nothing).
		if rest, ok := strings.CutPrefix(f.Filter, "$share/"); ok {
			pk.Filters[i].Filter = "$literal-share/" + rest
		}
	}
	return pk
}
