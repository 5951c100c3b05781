package mqtt

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// versionProbeTimeout bounds the whole probe: a broker that tells no
// version costs the run this much at most, before its load.
const versionProbeTimeout = 3 * time.Second

// brokerVersion asks the running broker its version where its
// brokers/<name>/broker.toml says it tells it (version_topic: a retained
// message on a $SYS topic), as a client of its own, with the username the
// broker's ACL wants (version_username: EMQX answers `dashboard` from any
// address, an anonymous client only from 127.0.0.1). One plain MQTT 3.1.1
// connection before the load; a TLS or WebSocket URL is not asked (its
// broker's plain listener may not be the load's host). It returns
// {version, source}: source the topic that answered (and the username); or
// {error} saying why there is none.
func brokerVersion(rawURL string, topics []string, username string) map[string]any {
	v, source, err := probeVersion(rawURL, topics, username)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"version": v, "source": source}
}

func probeVersion(rawURL string, topics []string, username string) (string, string, error) {
	b, err := connection.ParseURL(rawURL)
	if err != nil {
		return "", "", err
	}
	if b.Secure || b.WSPath != "" {
		return "", "", fmt.Errorf("%s is not a plain MQTT URL: the version is asked over mqtt:// only", rawURL)
	}
	if len(topics) == 0 {
		return "", "", errors.New("no version topic (brokers/<name>/broker.toml version_topic)")
	}
	deadline := time.Now().Add(versionProbeTimeout)
	conn, err := net.DialTimeout("tcp", b.Addr, versionProbeTimeout)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(deadline)
	connect := &codec.Connect{
		Version: codec.V311, ClientID: "mqtt-bench-version-" + randomID(), KeepAlive: 10, CleanStart: true,
		Username: username, HasUser: username != "",
	}
	subs := make([]codec.Subscription, len(topics))
	for i, t := range topics {
		subs[i] = codec.Subscription{Filter: t}
	}
	out := codec.AppendConnect(nil, connect)
	out = codec.AppendSubscribe(out, codec.V311, 1, subs)
	if _, err := conn.Write(out); err != nil {
		return "", "", err
	}
	defer func() { _, _ = conn.Write(codec.AppendDisconnect(nil, 0)) }()
	return readVersion(conn, username)
}

// readVersion reads the CONNACK, the SUBACK and the first retained PUBLISH
// of the version topics.
func readVersion(conn net.Conn, username string) (string, string, error) {
	var buf []byte
	chunk := make([]byte, 4096)
	as := ""
	if username != "" {
		as = fmt.Sprintf(" (as %q)", username)
	}
	for {
		p, size, err := codec.Decode(codec.V311, buf)
		if err != nil {
			return "", "", err
		}
		if size == 0 {
			n, err := conn.Read(chunk)
			if err != nil {
				return "", "", fmt.Errorf("the broker told no version on its version topic%s within %v: %w",
					as, versionProbeTimeout, err)
			}
			buf = append(buf, chunk[:n]...)
			continue
		}
		buf = buf[size:]
		switch p := p.(type) {
		case *codec.Connack:
			if p.Code != 0 {
				return "", "", fmt.Errorf("CONNACK refused%s: %w", as, p.Err())
			}
		case *codec.Suback:
			refused := 0
			for _, c := range p.Codes {
				if c >= 0x80 {
					refused++
				}
			}
			if refused == len(p.Codes) {
				return "", "", fmt.Errorf("SUBACK 0x80 on the version topic%s: the broker's ACL refuses it", as)
			}
		case *codec.Publish:
			return strings.TrimSpace(string(p.Payload)), string(p.Topic) + as, nil
		}
	}
}
