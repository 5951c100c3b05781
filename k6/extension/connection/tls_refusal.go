package connection

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"syscall"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/verdict"
)

// The TLS alerts (RFC 8446 section 6) a broker refuses a client's
// certificate with.
const (
	alertHandshakeFailure    = 40 // TLS 1.2 without the certificate asked for (OpenSSL, Erlang: VerneMQ)
	alertBadCertificate      = 42
	alertUnknownCA           = 48
	alertCertificateRequired = 116 // TLS 1.3 without the certificate asked for
)

const certFix = "give tls.cert and tls.key, TLS_CERT and TLS_KEY in the scenarios"

// certRequest is what a handshake's CertificateRequest told.
type certRequest struct {
	gave  bool // a client certificate was given
	asked bool // the broker asked for one
	// withheld: none of the certificates given is signed by a CA the broker
	// named (OpenSSL names those of its CA file), so none was sent.
	withheld bool
}

// clientTLS is the TLS config of one handshake: a copy that notes in req
// what the broker asked for. That a TLS 1.2 broker which closes without a
// word (NanoMQ's mbedTLS) wanted a certificate, or one from another CA, is
// told by nothing else.
func clientTLS(cfg *tls.Config, req *certRequest) *tls.Config {
	req.gave = len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil
	if cfg.GetClientCertificate != nil {
		return cfg
	}
	certs := cfg.Certificates
	cfg = cfg.Clone()
	cfg.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		req.asked = true
		for i := range certs { // crypto/tls's own choice without the callback
			if cri.SupportsCertificate(&certs[i]) == nil {
				return &certs[i], nil
			}
		}
		req.withheld = len(certs) > 0
		return new(tls.Certificate), nil
	}
	return cfg
}

// remoteAlert is the alert the broker sent, if err is one: crypto/tls
// reports it as a net.OpError "remote error" around its unexported alert
// type, a uint8.
func remoteAlert(err error) (uint8, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return 0, false
	}
	if v := reflect.ValueOf(op.Err); v.Kind() == reflect.Uint8 {
		return uint8(v.Uint()), true
	}
	return 0, false
}

// refusedTLS words err as the broker's refusal when it is one (an alert,
// or a close right after it asked for a certificate), with the fix when it
// refused the client's certificate; else it returns err as is. That comes
// during a TLS 1.2 handshake, after a TLS 1.3 one (the broker checks the
// certificate once the client's side finished, so on the CONNECT). The
// refusal says verdict.Refused: a run none of whose connections opened is
// then diagnosed broker_refused, as a CONNACK refusal is, not
// broker_unreachable.
func refusedTLS(err error, req certRequest) error {
	alert, isAlert := remoteAlert(err)
	closed := errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	// How brokers refuse a certificate they wanted and did not get.
	unmet := isAlert && alert == alertCertificateRequired ||
		req.asked && (closed || isAlert && (alert == alertHandshakeFailure || alert == alertBadCertificate))
	otherCA := "give one signed by a CA it trusts (the stack's CA signs the broker's certificate, TLS_CA, and " +
		"the client's): tls.cert and tls.key, TLS_CERT and TLS_KEY in the scenarios"
	switch {
	case isAlert && alert == alertUnknownCA:
		return fmt.Errorf("%w (%s: it does not trust the CA that signed the client certificate: %s)", err, verdict.Refused, otherCA)
	case unmet && req.withheld:
		return fmt.Errorf("%w (%s: it asked for a client certificate signed by a CA it names, and the one given "+
			"is not signed by one it names, so none was sent: %s)", err, verdict.Refused, otherCA)
	case unmet && !req.gave:
		return fmt.Errorf("%w (%s: it asked for a client certificate (mutual TLS) and none was given: %s)",
			err, verdict.Refused, certFix)
	case req.gave && isAlert && (alert == alertBadCertificate || alert == alertCertificateRequired):
		return fmt.Errorf("%w (%s: it did not accept the client certificate given, tls.cert or TLS_CERT)", err, verdict.Refused)
	case isAlert: // any other: the broker was reached and said no (a TLS version or cipher it does not take)
		return fmt.Errorf("%w (%s)", err, verdict.Refused)
	}
	return err
}
