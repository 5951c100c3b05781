package mqtt

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"
)

// selfSigned makes a CA-less self-signed certificate for 127.0.0.1.
func selfSigned(t *testing.T) (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair, string(certPEM)
}

// TLS works with a CA given as PEM or as a file, or with verification
// skipped; without the CA the handshake is refused with a clear error.
func TestTLSDeliversWithATrustedCAAndRefusesWithout(t *testing.T) {
	pair, caPEM := selfSigned(t)
	addr, _ := startMochi(t, listeners.Config{TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	vu := newTestVU(t)
	for name, tlsOpt := range map[string]string{
		"ca as PEM":            fmt.Sprintf("{ ca: %q }", caPEM),
		"ca as file":           fmt.Sprintf("{ ca: %q }", caFile),
		"insecure_skip_verify": "{ insecure_skip_verify: true }",
	} {
		r := vu.run(t, fmt.Sprintf(`
const o = { url: 'mqtts://%s', count: 2, topic: 'tls/{i}', qos: 1, tls: %s };
const subs = new SubscriberGroup(o);
await subs.connect();
const pubs = new PublisherGroup(o);
await pubs.connect();
const p = await pubs.publish({ count: 100, rate: 1000 });
result = await subs.drain({ expected: p.sent });
pubs.close(); subs.close();`, addr, tlsOpt))
		if r["unique"].(float64) != 100 {
			t.Fatalf("%s: %v", name, r)
		}
	}
	// Without the CA, verification fails with a clear error.
	msg := vu.runExpectingFailure(t, fmt.Sprintf(`const g = new PublisherGroup({ url: 'mqtts://%s', topic: 't' }); await g.connect();`, addr))
	if !strings.Contains(msg, "TLS handshake") {
		t.Fatalf("unverified certificate: %q", msg)
	}
}
