package connection

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// Broker is a parsed broker URL.
type Broker struct {
	Addr   string // host:port to dial
	Host   string // for TLS server name verification
	Secure bool   // mqtts://, ssl://, tls:// or wss://
	// WSPath: the WebSocket path of ws:// and wss:// URLs (default /mqtt); "" otherwise.
	WSPath string
}

// ParseURL reads mqtt://, tcp://, mqtts://, ssl://, tls:// URLs (or a bare
// host:port). It is the one place broker URLs are validated: the scenarios'
// environment checks call it through the module's parseUrl.
func ParseURL(raw string) (Broker, error) {
	if !strings.Contains(raw, "://") {
		raw = "mqtt://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Broker{}, fmt.Errorf("malformed broker URL %q: %v", raw, err)
	}
	var b Broker
	port := "1883"
	switch u.Scheme {
	case "mqtt", "tcp":
	case "mqtts", "ssl", "tls":
		b.Secure, port = true, "8883"
	case "ws":
		b.WSPath, port = "/mqtt", "8083"
	case "wss":
		b.Secure, b.WSPath, port = true, "/mqtt", "8084"
	default:
		return Broker{}, fmt.Errorf("broker URL %q: unknown scheme %q (use mqtt://, tcp://, mqtts://, ssl://, tls://, ws:// or wss://)", raw, u.Scheme)
	}
	if u.User != nil {
		return Broker{}, fmt.Errorf("broker URL %q: credentials do not belong in the URL (they would show in logs and results); use the username and password options", raw)
	}
	b.Host = u.Hostname()
	if b.Host == "" {
		return Broker{}, fmt.Errorf("malformed broker URL %q: no host", raw)
	}
	if p := u.Port(); p != "" {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return Broker{}, fmt.Errorf("malformed broker URL %q: bad port", raw)
		}
		port = p
	}
	switch {
	case b.WSPath != "" && u.Path != "":
		b.WSPath = u.EscapedPath() // the broker's WebSocket path, e.g. /mqtt
	case b.WSPath == "" && u.Path != "" && u.Path != "/":
		return Broker{}, fmt.Errorf("malformed broker URL %q: a path belongs to ws:// and wss:// URLs only", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Broker{}, fmt.Errorf("malformed broker URL %q: unexpected query or fragment", raw)
	}
	b.Addr = net.JoinHostPort(b.Host, port)
	return b, nil
}

// Explain adds the fix to the connection errors people meet first.
func Explain(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w (nothing listens on %s: start the broker, or set the url option / MQTT_URL)", err, addr)
	case errors.Is(err, syscall.EMFILE):
		// Worded with verdict.OpenFiles: the diagnosis then names the
		// generator, not the broker, for the connections that failed so.
		soft, _, _ := OpenFilesLimit()
		return fmt.Errorf("%w (%s of %d is reached: raise `ulimit -n`, or split the load over several k6 processes)",
			err, verdict.OpenFiles, soft)
	case errors.As(err, new(x509.UnknownAuthorityError)):
		return fmt.Errorf("%w (the broker's certificate is not signed by the CA given: set the tls.ca option, TLS_CA in the scenarios, to the CA that signed it)", err)
	case errors.As(err, new(x509.HostnameError)):
		return fmt.Errorf("%w (set tls.server_name, TLS_SERVER_NAME in the scenarios, to a name the broker's certificate holds)", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (no answer from %s within connect_timeout)", err, addr)
	}
	return err
}
