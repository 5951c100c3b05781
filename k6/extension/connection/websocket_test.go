package connection

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
)

// A broker's side of a WebSocket connection (gobwas's server helpers) over
// an in-memory pipe: what the client sends and how it reads the broker's frames.
func wsPair(t *testing.T, protocol string) (client net.Conn, broker net.Conn) {
	t.Helper()
	c, b := net.Pipe()
	done := make(chan error, 1)
	go func() {
		u := ws.Upgrader{Protocol: func(p []byte) bool { return string(p) == protocol }}
		_, err := u.Upgrade(b)
		done <- err
	}()
	cfg := &Config{WSPath: "/mqtt", WSHost: "broker:8083"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc, err := upgradeWS(ctx, c, cfg)
	if uerr := <-done; uerr != nil && err == nil {
		t.Fatalf("server upgrade: %v", uerr)
	}
	if err != nil {
		return nil, nil
	}
	_ = c.SetDeadline(time.Time{})
	t.Cleanup(func() { _ = c.Close(); _ = b.Close() })
	return wc, b
}

// Each write is one masked binary frame; the broker's binary frames, even
// split over a continuation, read as one byte stream; a ping is answered.
func TestWebSocketCarriesMQTTInBinaryFramesAndAnswersPings(t *testing.T) {
	client, broker := wsPair(t, subprotocol)
	go func() { _, _ = client.Write([]byte{0x10, 0x02, 0xAA, 0xBB}) }()
	h, err := ws.ReadHeader(broker)
	if err != nil || h.OpCode != ws.OpBinary || !h.Masked || !h.Fin || h.Length != 4 {
		t.Fatalf("header %+v, %v", h, err)
	}
	body := make([]byte, 4)
	_, _ = io.ReadFull(broker, body)
	ws.Cipher(body, h.Mask, 0)
	if string(body) != "\x10\x02\xAA\xBB" {
		t.Fatalf("payload %x", body)
	}

	go func() {
		_ = ws.WriteFrame(broker, ws.NewPingFrame([]byte("hi")))
		_ = ws.WriteFrame(broker, ws.Frame{Header: ws.Header{OpCode: ws.OpBinary, Length: 2}, Payload: []byte{0x20, 0x02}})
		_ = ws.WriteFrame(broker, ws.Frame{Header: ws.Header{Fin: true, OpCode: ws.OpContinuation, Length: 2}, Payload: []byte{0x00, 0x00}})
	}()
	got := make([]byte, 4)
	type frame struct {
		h    ws.Header
		body []byte
	}
	pong := make(chan frame, 1)
	go func() {
		h, _ := ws.ReadHeader(broker)
		body := make([]byte, h.Length)
		_, _ = io.ReadFull(broker, body)
		ws.Cipher(body, h.Mask, 0)
		pong <- frame{h, body}
	}()
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "\x20\x02\x00\x00" {
		t.Fatalf("read %x, %v", got, err)
	}
	f := <-pong
	if f.h.OpCode != ws.OpPong || !f.h.Masked || string(f.body) != "hi" {
		t.Fatalf("pong %+v %q", f.h, f.body)
	}
}

// A text frame is not MQTT: the read fails saying so.
func TestWebSocketRefusesTextFrames(t *testing.T) {
	client, broker := wsPair(t, subprotocol)
	go func() { _ = wsutil.WriteServerText(broker, []byte("hello")) }()
	_, err := client.Read(make([]byte, 8))
	if err == nil || !strings.Contains(err.Error(), "binary frames") {
		t.Fatalf("got %v", err)
	}
}

// A server that does not speak the mqtt subprotocol is refused at the upgrade.
func TestWebSocketUpgradeNeedsTheMQTTSubprotocol(t *testing.T) {
	if client, _ := wsPair(t, "other"); client != nil {
		t.Fatal("upgrade succeeded without the mqtt subprotocol")
	}
}

// wss://: the upgrade and the frames go over TLS (the TLS handshake first,
// as handshake() runs it), and the request names the wss URL's host.
func TestWebSocketOverTLS(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(cert)

	c, b := net.Pipe()
	defer c.Close()
	defer b.Close()
	host := make(chan string, 1)
	go func() {
		srv := tls.Server(b, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
		u := ws.Upgrader{
			Protocol: func(p []byte) bool { return string(p) == subprotocol },
			OnHost:   func(h []byte) error { host <- string(h); return nil },
		}
		if _, err := u.Upgrade(srv); err != nil {
			return
		}
		_ = wsutil.WriteServerBinary(srv, []byte{0x20, 0x02, 0x00, 0x00})
	}()
	cfg := &Config{TLS: &tls.Config{ServerName: "broker", RootCAs: roots}, WSPath: "/mqtt", WSHost: "broker:8084"}
	tc := tls.Client(c, cfg.TLS)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		t.Fatal(err)
	}
	wc, err := upgradeWS(ctx, tc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = tc.SetDeadline(time.Time{})
	got := make([]byte, 4)
	if _, err := io.ReadFull(wc, got); err != nil || string(got) != "\x20\x02\x00\x00" {
		t.Fatalf("read %x, %v", got, err)
	}
	if h := <-host; h != "broker:8084" {
		t.Fatalf("Host %q", h)
	}
}
