package testbroker

import (
	"strings"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// SysACL is EMQX 5's default ACL (etc/acl.conf) for a client that is not on
// the broker's own host: `$SYS/#` is readable only by the username
// `dashboard` (EMQX answers an anonymous client from 127.0.0.1 too, which a
// client through a published port or another container is not); anything
// else is allowed. With Version set, the broker tells it retained on
// EMQX's topic, `$SYS/brokers/<node>/version`. It authenticates every
// client: use it instead of auth.AllowHook, whose ACL allows all.
type SysACL struct {
	mochi.HookBase
	Server  *mochi.Server
	Version string
}

// ID names the hook.
func (h *SysACL) ID() string { return "sys-acl" }

// Provides says which events the hook handles.
func (h *SysACL) Provides(b byte) bool {
	return b == mochi.OnConnectAuthenticate || b == mochi.OnACLCheck || b == mochi.OnStarted
}

// OnConnectAuthenticate lets every client in, as EMQX does without an authenticator.
func (h *SysACL) OnConnectAuthenticate(*mochi.Client, packets.Packet) bool { return true }

// OnACLCheck refuses $SYS topics to all but the username `dashboard`.
func (h *SysACL) OnACLCheck(cl *mochi.Client, topic string, _ bool) bool {
	return !strings.HasPrefix(topic, "$SYS/") || string(cl.Properties.Username) == "dashboard"
}

// OnStarted publishes the version, retained (mochi's inline client).
func (h *SysACL) OnStarted() {
	if h.Version != "" && h.Server != nil {
		_ = h.Server.Publish("$SYS/brokers/emqx@172.18.0.2/version", []byte(h.Version), true, 0)
	}
}
