//go:build unix

package connection

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

type tlsTestRecorder struct{}

func (tlsTestRecorder) Count(Event, int64)      {}
func (tlsTestRecorder) Time(Timing, int, int64) {}
func (tlsTestRecorder) Open(int64)              {}

// issue makes a key and a certificate for name, signed by ca (self-signed
// when ca is nil).
func issue(t *testing.T, name string, ca *tls.Certificate) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), DNSNames: []string{name},
		Subject:   pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	parent, parentKey := tmpl, any(key)
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	} else {
		parent, parentKey = ca.Leaf, ca.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// withoutAlerts is a broker's side that closes where it would send an
// alert, as NanoMQ's mbedTLS does (the client reads EOF).
type withoutAlerts struct{ net.Conn }

func (w withoutAlerts) Write(b []byte) (int, error) {
	if len(b) > 0 && b[0] == 21 { // a TLS alert record (plain text before the server's Finished)
		return len(b), nil
	}
	return w.Conn.Write(b)
}

// socketPair is a connected pair of Unix sockets: buffered both ways as
// TCP is (a net.Pipe would block the broker's alert behind the client's
// CONNECT), with no port.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		if conns[i], err = net.FileConn(f); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	return conns[0], conns[1]
}

// handshakeWith runs a connection's handshake against a broker with TLS
// config srv (nil: one that closes without a word) and returns its error.
func handshakeWith(t *testing.T, srv *tls.Config, dropAlerts bool, client *tls.Config) error {
	t.Helper()
	cfg := NewConfig()
	cfg.TLS, cfg.ConnectTimeout = client, 5*time.Second
	cfg.Dial = func(context.Context, string, string) (net.Conn, error) {
		c, b := socketPair(t)
		go func() {
			defer b.Close()
			if srv == nil {
				_, _ = b.Read(make([]byte, 512))
				return
			}
			var nc net.Conn = b
			if dropAlerts {
				nc = withoutAlerts{b}
			}
			s := tls.Server(nc, srv)
			if s.Handshake() == nil {
				_, _ = io.Copy(io.Discard, s) // TLS 1.3: the client's certificate is checked here
			}
		}()
		return c, nil
	}
	c := New(cfg, "tls-test", 0, nil, tlsTestRecorder{})
	nc, _, err := c.handshake(context.Background())
	if err == nil {
		_ = nc.Close()
	}
	return err
}

type tlsCase struct {
	ca, server, client, other tls.Certificate
	roots                     *x509.CertPool
}

func newTLSCase(t *testing.T) *tlsCase {
	ca, other := issue(t, "ca", nil), issue(t, "other ca", nil)
	c := &tlsCase{ca: ca, server: issue(t, "broker", &ca), client: issue(t, "client", &ca), roots: x509.NewCertPool()}
	c.other = issue(t, "client", &other)
	c.roots.AddCert(ca.Leaf)
	return c
}

// mutual is a broker's config that demands a client certificate its CA signed.
func (c *tlsCase) mutual(version uint16) *tls.Config {
	clients := x509.NewCertPool()
	clients.AddCert(c.ca.Leaf)
	return &tls.Config{Certificates: []tls.Certificate{c.server}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: clients, MinVersion: version, MaxVersion: version}
}

func (c *tlsCase) clientConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{ServerName: "broker", RootCAs: c.roots, Certificates: certs, MinVersion: tls.VersionTLS12}
}

func wantRefusal(t *testing.T, err error, fix ...string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), verdict.Refused) {
		t.Fatalf("want a refusal (%q), got %v", verdict.Refused, err)
	}
	for _, f := range fix {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("want %q in %v", f, err)
		}
	}
}

// Without a client certificate, a mutual-TLS broker's refusal names
// TLS_CERT and TLS_KEY whenever it comes: during a TLS 1.2 handshake as an
// alert (VerneMQ: handshake_failure) or a close (NanoMQ: EOF), after a
// TLS 1.3 one on the CONNECT (Mosquitto: certificate_required).
func TestAMutualTLSRefusalWithoutACertificateNamesTLSCertOnEveryVersion(t *testing.T) {
	c := newTLSCase(t)
	for _, tc := range []struct {
		name       string
		version    uint16
		dropAlerts bool
		alert      string
	}{
		{"TLS 1.2 alert", tls.VersionTLS12, false, "handshake failure"},
		{"TLS 1.2 close", tls.VersionTLS12, true, "EOF"},
		{"TLS 1.3 alert", tls.VersionTLS13, false, "certificate required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := handshakeWith(t, c.mutual(tc.version), tc.dropAlerts, c.clientConfig())
			wantRefusal(t, err, tc.alert, "asked for a client certificate", "TLS_CERT and TLS_KEY")
		})
	}
}

// A client certificate the broker's CA did not sign names the certificate
// to give and the CA it must come from: refused with an unknown-CA alert
// by a broker that does not name its CAs, withheld (Go sends none) and
// then refused from one that does (OpenSSL's -CAfile, Go's ClientCAs).
func TestAClientCertificateOfAnotherCANamesTLSCA(t *testing.T) {
	c := newTLSCase(t)
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		unnamed := c.mutual(v)
		unnamed.ClientCAs = nil // the system's roots: none signed it either
		err := handshakeWith(t, unnamed, false, c.clientConfig(c.other))
		wantRefusal(t, err, "unknown certificate authority", "TLS_CERT and TLS_KEY", "TLS_CA")
		err = handshakeWith(t, c.mutual(v), false, c.clientConfig(c.other))
		wantRefusal(t, err, "not signed by one it names", "TLS_CERT and TLS_KEY", "TLS_CA")
	}
}

// What is no refusal stays as it was: a broker that closes before it asked
// for anything (not TLS, or gone), and mutual TLS with the right certificate.
func TestNoRefusalWithoutOne(t *testing.T) {
	c := newTLSCase(t)
	err := handshakeWith(t, nil, false, c.clientConfig())
	if err == nil || strings.Contains(err.Error(), verdict.Refused) || strings.Contains(err.Error(), "TLS_CERT") {
		t.Fatalf("a close before any TLS: %v", err)
	}
	// The handshake passes; the CONNECT then meets a broker that answers nothing.
	err = handshakeWith(t, c.mutual(tls.VersionTLS12), false, c.clientConfig(c.client))
	if err == nil || strings.Contains(err.Error(), "TLS") || strings.Contains(err.Error(), verdict.Refused) {
		t.Fatalf("with a certificate: %v", err)
	}
}

// Any other alert is the broker's refusal too, without a fix to name: it
// was reached (here it takes no TLS 1.3, which the client asks for).
func TestAnyAlertIsARefusal(t *testing.T) {
	c := newTLSCase(t)
	client := c.clientConfig()
	client.MinVersion = tls.VersionTLS13
	err := handshakeWith(t, c.mutual(tls.VersionTLS12), false, client)
	wantRefusal(t, err, "protocol version not supported")
	if strings.Contains(err.Error(), "TLS_CERT") {
		t.Fatalf("names TLS_CERT: %v", err)
	}
}
