package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// opts reads a JS options object, collecting every problem so the user sees
// all of them at once, each naming the option, before anything connects.
type opts struct {
	where string
	m     map[string]any
	used  map[string]bool
	errs  []string
}

func newOpts(where string, v any) *opts {
	o := &opts{where: where, used: map[string]bool{}}
	switch m := v.(type) {
	case nil:
		o.m = map[string]any{}
	case map[string]any:
		o.m = m
	default:
		o.m = map[string]any{}
		o.errs = append(o.errs, fmt.Sprintf("options must be an object, got %T", v))
	}
	return o
}

func (o *opts) fail(name, format string, a ...any) {
	o.errs = append(o.errs, fmt.Sprintf("option %q %s", name, fmt.Sprintf(format, a...)))
}

func (o *opts) get(name string) (any, bool) {
	o.used[name] = true
	v, ok := o.m[name]
	return v, ok && v != nil
}

func (o *opts) str(name, def string) string {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		o.fail(name, "must be a string, got %v", v)
		return def
	}
	return s
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

func (o *opts) num(name string, def, minV, maxV float64) float64 {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	f, isNum := toFloat(v)
	if !isNum || math.IsNaN(f) {
		o.fail(name, "must be a number, got %v", v)
		return def
	}
	if minV == 0 && maxV <= 2 && (f < minV || f > maxV) { // QoS-like small ranges read best whole
		o.fail(name, "must be between %v and %v, got %v", minV, maxV, v)
		return def
	}
	if f < minV {
		o.fail(name, "must be >= %v, got %v", minV, v)
		return def
	}
	if f > maxV {
		o.fail(name, "must be <= %v, got %v", maxV, v)
		return def
	}
	return f
}

func (o *opts) integer(name string, def, minV, maxV int) int {
	f := o.num(name, float64(def), float64(minV), float64(maxV))
	if f != math.Trunc(f) {
		o.fail(name, "must be a whole number, got %v", f)
	}
	return int(f)
}

func (o *opts) boolean(name string, def bool) bool {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		o.fail(name, "must be true or false, got %v", v)
		return def
	}
	return b
}

// duration accepts a k6-style string ("10s", "250ms") or milliseconds.
func (o *opts) duration(name string, def time.Duration) time.Duration {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	if s, isStr := v.(string); isStr {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d
		}
	} else if f, isNum := toFloat(v); isNum && f >= 0 {
		return time.Duration(f * float64(time.Millisecond))
	}
	o.fail(name, "must be a duration such as \"10s\" or a number of milliseconds, got %v", v)
	return def
}

func (o *opts) object(name string) map[string]any {
	v, ok := o.get(name)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		o.fail(name, "must be an object, got %v", v)
	}
	return m
}

func (o *opts) qos(name string, def byte) byte {
	return byte(o.integer(name, int(def), 0, 2))
}

// done reports unknown options (typos) and all collected errors.
func (o *opts) done() error {
	var unknown []string
	for k := range o.m {
		if !o.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		o.errs = append(o.errs, fmt.Sprintf("unknown option %q", k))
	}
	if len(o.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: invalid options: %s", o.where, strings.Join(o.errs, "; "))
}

// parseVersion accepts 3.1.1 / 4 and 5 / 5.0.
func parseVersion(v any) (byte, error) {
	s := strings.TrimSpace(fmt.Sprint(v))
	switch s {
	case "3.1.1", "4", "311":
		return v311, nil
	case "5", "5.0":
		return v5, nil
	}
	return 0, fmt.Errorf("unsupported MQTT version %v (use 3.1.1 or 5)", v)
}

// brokerAddr parses mqtt://, tcp://, mqtts://, ssl://, tls:// URLs (or host:port).
func brokerAddr(raw string) (addr string, secure bool, host string, err error) {
	if !strings.Contains(raw, "://") {
		raw = "mqtt://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, "", fmt.Errorf("malformed broker URL %q: %v", raw, err)
	}
	port := "1883"
	switch u.Scheme {
	case "mqtt", "tcp":
	case "mqtts", "ssl", "tls":
		secure, port = true, "8883"
	case "ws", "wss":
		return "", false, "", fmt.Errorf("broker URL %q: MQTT over WebSocket is not supported; use mqtt:// or mqtts://", raw)
	default:
		return "", false, "", fmt.Errorf("broker URL %q: unknown scheme %q (use mqtt://, tcp://, mqtts://, ssl:// or tls://)", raw, u.Scheme)
	}
	host = u.Hostname()
	if host == "" {
		return "", false, "", fmt.Errorf("malformed broker URL %q: no host", raw)
	}
	if p := u.Port(); p != "" {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return "", false, "", fmt.Errorf("malformed broker URL %q: bad port", raw)
		}
		port = p
	}
	if u.Path != "" && u.Path != "/" {
		return "", false, "", fmt.Errorf("malformed broker URL %q: unexpected path %q", raw, u.Path)
	}
	return net.JoinHostPort(host, port), secure, host, nil
}

// pemOrFile takes PEM text, or a path to a PEM file.
func pemOrFile(s string) ([]byte, error) {
	if strings.Contains(s, "-----BEGIN") {
		return []byte(s), nil
	}
	return os.ReadFile(s)
}

func tlsConfig(o *opts, host string) *tls.Config {
	t := o.object("tls")
	sub := newOpts("tls", t)
	cfg := &tls.Config{ServerName: sub.str("server_name", host), MinVersion: tls.VersionTLS12}
	cfg.InsecureSkipVerify = sub.boolean("insecure_skip_verify", false)
	if ca := sub.str("ca", ""); ca != "" {
		pem, err := pemOrFile(ca)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			sub.fail("ca", "must be PEM certificates or a readable PEM file")
		}
		cfg.RootCAs = pool
	}
	cert, key := sub.str("cert", ""), sub.str("key", "")
	if (cert == "") != (key == "") {
		sub.fail("cert", "and \"key\" must be given together")
	} else if cert != "" {
		c, errC := pemOrFile(cert)
		k, errK := pemOrFile(key)
		pair, err := tls.X509KeyPair(c, k)
		if errors.Join(errC, errK, err) != nil {
			sub.fail("cert", "and \"key\" must be a PEM certificate and key (or readable files): %v", errors.Join(errC, errK, err))
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if err := sub.done(); err != nil {
		o.errs = append(o.errs, err.Error())
	}
	return cfg
}

// readConnConfig reads the connection options every client kind shares.
func readConnConfig(o *opts) *connConfig {
	cfg := &connConfig{}
	addr, secure, host, err := brokerAddr(o.str("url", "mqtt://127.0.0.1:1883"))
	if err != nil {
		o.fail("url", "%v", err)
	}
	cfg.addr = addr
	if secure || o.m["tls"] != nil {
		cfg.tls = tlsConfig(o, host)
	}
	if v, ok := o.get("version"); ok {
		if cfg.version, err = parseVersion(v); err != nil {
			o.fail("version", "%v", err)
		}
	} else {
		cfg.version = v311
	}
	cfg.keepAlive = uint16(o.integer("keepalive", 60, 0, 65535))
	cfg.cleanStart = o.boolean("clean_session", true)
	cfg.sessionExpiry = uint32(o.integer("session_expiry", 0, 0, math.MaxUint32))
	if v, ok := o.get("username"); ok {
		cfg.username, cfg.hasUser = fmt.Sprint(v), true
	}
	if v, ok := o.get("password"); ok {
		cfg.password, cfg.hasPass = fmt.Sprint(v), true
	}
	if w := o.object("will"); w != nil {
		wo := newOpts("will", w)
		cfg.will = &willMessage{topic: wo.str("topic", ""), payload: []byte(wo.str("payload", "")),
			qos: wo.qos("qos", 0), retain: wo.boolean("retain", false)}
		if cfg.will.topic == "" {
			wo.fail("topic", "is required")
		}
		if err := wo.done(); err != nil {
			o.errs = append(o.errs, err.Error())
		}
	}
	cfg.connectTimeout = o.duration("connect_timeout", 10*time.Second)
	if cfg.connectTimeout == 0 {
		cfg.connectTimeout = 10 * time.Second
	}
	cfg.readBuffer = o.integer("read_buffer", 4096, 512, 16<<20)
	cfg.reconnect = o.boolean("reconnect", true)
	cfg.backoffMin = o.duration("reconnect_backoff_min", 100*time.Millisecond)
	cfg.backoffMax = o.duration("reconnect_backoff_max", 10*time.Second)
	if cfg.backoffMin <= 0 {
		cfg.backoffMin = 100 * time.Millisecond
	}
	if cfg.backoffMax < cfg.backoffMin {
		cfg.backoffMax = cfg.backoffMin
	}
	cfg.receiveMax = uint16(o.integer("receive_maximum", 0, 0, 65535))
	return cfg
}

// readTags reads extra metric tags; a per-client tag would explode series.
func readTags(o *opts) map[string]string {
	t := o.object("tags")
	out := map[string]string{}
	for k, v := range t {
		out[k] = fmt.Sprint(v)
	}
	return out
}
