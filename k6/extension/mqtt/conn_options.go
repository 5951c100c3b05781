package mqtt

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// readConnConfig reads the connection options every client kind shares.
func readConnConfig(o *opts) *connection.Config {
	cfg := connection.NewConfig()
	b, err := connection.ParseURL(o.str("url", "mqtt://127.0.0.1:1883"))
	if err != nil {
		o.fail("url", "%v", err)
	}
	cfg.Addr = b.Addr
	cfg.WSPath, cfg.WSHost = b.WSPath, b.Addr
	if b.Secure || o.m["tls"] != nil {
		cfg.TLS = tlsConfig(o, b.Host)
	}
	if v, ok := o.get("version"); ok {
		if cfg.Version, err = parseVersion(v); err != nil {
			o.fail("version", "%v", err)
		}
	}
	cfg.KeepAlive = uint16(o.integer("keepalive", int(cfg.KeepAlive), 0, 65535))
	cfg.CleanStart = o.boolean("clean_session", true)
	cfg.SessionExpiry = uint32(o.integer("session_expiry", 0, 0, math.MaxUint32))
	if v, ok := o.get("username"); ok {
		cfg.Username, cfg.HasUser = fmt.Sprint(v), true
	}
	if v, ok := o.get("password"); ok {
		cfg.Password, cfg.HasPass = fmt.Sprint(v), true
	}
	if cfg.HasPass && !cfg.HasUser && cfg.Version == codec.V311 {
		o.fail("password", "needs a username in MQTT 3.1.1 (MQTT-3.1.2-22): set username too, or use version 5")
	}
	if w := o.object("will"); w != nil {
		cfg.Will = readWill(o, w)
	}
	if d := o.duration("connect_timeout", cfg.ConnectTimeout); d > 0 {
		cfg.ConnectTimeout = d
	}
	cfg.ReadBuffer = o.integer("read_buffer", cfg.ReadBuffer, 512, 16<<20)
	cfg.Reconnect = o.boolean("reconnect", true)
	if d := o.duration("reconnect_backoff_min", cfg.BackoffMin); d > 0 {
		cfg.BackoffMin = d
	}
	cfg.BackoffMax = max(o.duration("reconnect_backoff_max", cfg.BackoffMax), cfg.BackoffMin)
	cfg.ReceiveMax = uint16(o.integer("receive_maximum", 0, 0, 65535))
	if v := o.str("local_address", ""); v != "" {
		if cfg.LocalAddrs, err = connection.ParseLocalAddresses(v); err != nil {
			o.fail("local_address", "%v", err)
		}
	}
	return cfg
}

func readWill(o *opts, w map[string]any) *codec.Will {
	wo := newOpts("will", w)
	will := &codec.Will{Topic: wo.str("topic", ""), Payload: []byte(wo.str("payload", "")),
		QoS: wo.qos("qos", 0), Retain: wo.boolean("retain", false)}
	if will.Topic == "" {
		wo.fail("topic", "is required")
	}
	if err := wo.done(); err != nil {
		o.errs = append(o.errs, err.Error())
	}
	return will
}

// parseVersion accepts 3.1.1 / 4 and 5 / 5.0.
func parseVersion(v any) (byte, error) {
	switch strings.TrimSpace(fmt.Sprint(v)) {
	case "3.1.1", "4", "311":
		return codec.V311, nil
	case "5", "5.0":
		return codec.V5, nil
	}
	return 0, fmt.Errorf("unsupported MQTT version %v (use 3.1.1 or 5)", v)
}

// pemOrFile takes PEM text, or a path to a PEM file.
func pemOrFile(s string) ([]byte, error) {
	if strings.Contains(s, "-----BEGIN") {
		return []byte(s), nil
	}
	return os.ReadFile(s)
}

func tlsConfig(o *opts, host string) *tls.Config {
	sub := newOpts("tls", o.object("tls"))
	cfg := &tls.Config{ServerName: sub.str("server_name", host), MinVersion: tls.VersionTLS12}
	cfg.InsecureSkipVerify = sub.boolean("insecure_skip_verify", false)
	if ca := sub.str("ca", ""); ca != "" {
		pool, err := readCAPool(ca)
		if err != nil {
			sub.fail("ca", "must be PEM certificates or a readable PEM file: %v", err)
		}
		cfg.RootCAs = pool
	}
	cert, key := sub.str("cert", ""), sub.str("key", "")
	if (cert == "") != (key == "") {
		sub.fail("cert", "and \"key\" must be given together")
	} else if cert != "" {
		pair, err := readKeyPair(cert, key)
		if err != nil {
			sub.fail("cert", "and \"key\" must be a PEM certificate and key (or readable files): %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if err := sub.done(); err != nil {
		o.errs = append(o.errs, err.Error())
	}
	return cfg
}

var errNoPEMCert = errors.New("holds no PEM certificate")

// readCAPool reads CA certificates (PEM text or a PEM file) into a pool:
// the tls option and the scenarios' TLS_CA check read them alike.
func readCAPool(s string) (*x509.CertPool, error) {
	pem, err := pemOrFile(s)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errNoPEMCert
	}
	return pool, nil
}

// errNotKeyPair wraps what tls.X509KeyPair found wrong: the files were read.
type errNotKeyPair struct{ error }

// readKeyPair reads a client certificate and its key (PEM text or files).
func readKeyPair(cert, key string) (tls.Certificate, error) {
	c, errC := pemOrFile(cert)
	k, errK := pemOrFile(key)
	if err := errors.Join(errC, errK); err != nil {
		return tls.Certificate{}, err
	}
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		return pair, errNotKeyPair{err}
	}
	return pair, nil
}

// readTags reads extra metric tags for a group's or client's metrics.
// They are k6 tags on every sample: keep them low-cardinality (a test
// phase, a broker name), never per-client values.
func readTags(o *opts) map[string]string {
	out := map[string]string{}
	for k, v := range o.object("tags") {
		switch v.(type) {
		case string, int64, float64, bool:
			out[k] = fmt.Sprint(v)
		default:
			o.fail("tags", "values must be strings, numbers or booleans; %q is %T", k, v)
		}
	}
	return out
}

// checkTLSFiles validates the scenarios' TLS_CA, TLS_CERT and TLS_KEY (file
// paths; "" = not given) as the tls option would read them: {} or
// {ca|cert|key: what is wrong}.
func checkTLSFiles(ca, cert, key string) map[string]any {
	out := map[string]any{}
	if ca != "" {
		if _, err := readCAPool(ca); err != nil {
			out["ca"] = err.Error()
		}
	}
	if (cert == "") != (key == "") {
		out["cert"] = "needs TLS_KEY with it (and TLS_KEY needs TLS_CERT)"
	} else if cert != "" {
		var bad errNotKeyPair
		if _, err := readKeyPair(cert, key); errors.As(err, &bad) {
			out["cert"] = "and TLS_KEY are not a PEM certificate and its key: " + bad.Error()
		} else if err != nil {
			out["cert"] = err.Error()
		}
	}
	return out
}

// fileExists tells whether path is a readable regular file: the scenarios'
// TLS defaults are the stack's generated files where it made them.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
