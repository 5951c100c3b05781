package connection

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// handshake dials, runs TLS when configured, and exchanges CONNECT and
// CONNACK within the connect timeout.
func (c *Conn) handshake(ctx context.Context) (net.Conn, *bufio.Reader, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	nc, err := c.cfg.Dial(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, nil, fmt.Errorf("mqtt: dial %s: %w", c.cfg.Addr, err)
	}
	var req certRequest // what the broker asked of the client's certificate
	if c.cfg.TLS != nil {
		start := time.Now()
		tc := tls.Client(nc, clientTLS(c.cfg.TLS, &req))
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, nil, fmt.Errorf("mqtt: TLS handshake with %s: %w", c.cfg.Addr, refusedTLS(err, req))
		}
		c.rec.Time(TLSHandshakeTime, c.idx, time.Since(start).Nanoseconds())
		st := tc.ConnectionState()
		c.tlsParams.Store(uint32(st.Version)<<16 | uint32(st.CipherSuite))
		nc = tc
	}
	if c.cfg.WSPath != "" {
		wc, err := upgradeWS(ctx, nc, c.cfg)
		if err != nil {
			_ = nc.Close()
			return nil, nil, err
		}
		nc = wc
	}
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	sent := time.Now()
	ack, br, err := c.exchange(nc)
	if err != nil {
		_ = nc.Close()
		refused := err
		if c.cfg.TLS != nil {
			// TLS 1.3 ends the client's handshake before the broker checks
			// its certificate: a refusal comes on the CONNECT.
			refused = refusedTLS(err, req)
		}
		if refused == err && errors.Is(err, io.EOF) {
			refused = fmt.Errorf("mqtt: broker %s closed the connection during CONNECT (wrong protocol version or refused client?)", c.cfg.Addr)
		}
		return nil, nil, refused
	}
	_ = nc.SetDeadline(time.Time{})
	c.rec.Time(ConnackTime, c.idx, time.Since(sent).Nanoseconds())
	rm := uint32(ack.ReceiveMax)
	if rm == 0 {
		rm = 65535
	}
	c.recvMax.Store(rm)
	c.sharedSubs.Store(int32(ack.SharedSubs))
	if !c.forceClean.Load() {
		c.sessionPresent.Store(ack.SessionPresent)
		c.sessionStarted.Store(true)
	}
	ka := uint32(c.cfg.KeepAlive)
	if ack.KeepAlive >= 0 {
		ka = uint32(ack.KeepAlive)
	}
	c.keepAlive.Store(ka)
	if ack.AssignedID != "" {
		c.mu.Lock()
		c.id = ack.AssignedID
		c.mu.Unlock()
	}
	return nc, br, nil
}

// TLSParams names the TLS version and cipher suite of the connection's
// last handshake ("TLS 1.3", "TLS_AES_128_GCM_SHA256"); ok is false
// before a TLS handshake, or on a plain connection.
func (c *Conn) TLSParams() (version, cipher string, ok bool) {
	p := c.tlsParams.Load()
	if p == 0 {
		return "", "", false
	}
	return tls.VersionName(uint16(p >> 16)), tls.CipherSuiteName(uint16(p)), true
}

// exchange sends CONNECT and reads the CONNACK.
func (c *Conn) exchange(nc net.Conn) (codec.Connack, *bufio.Reader, error) {
	cfg := c.cfg
	p := codec.Connect{
		Version: cfg.Version, ClientID: c.ID(), KeepAlive: cfg.KeepAlive, CleanStart: c.cleanStart(),
		Username: cfg.Username, Password: cfg.Password, HasUser: cfg.HasUser, HasPass: cfg.HasPass,
		SessionExpiry: cfg.SessionExpiry, ReceiveMax: cfg.ReceiveMax, Will: cfg.Will,
	}
	if c.forceClean.Load() { // endSession: a session that ends with the connection
		p.CleanStart, p.SessionExpiry, p.Will = true, 0, nil
	}
	if _, err := nc.Write(codec.AppendConnect(nil, &p)); err != nil {
		// A broker that closed may have said why first (TLS 1.3: the alert
		// refusing the client's certificate): its alert is the error.
		if cfg.TLS != nil {
			if _, rerr := nc.Read(make([]byte, 1)); rerr != nil {
				if _, isAlert := remoteAlert(rerr); isAlert {
					err = rerr
				}
			}
		}
		return codec.Connack{}, nil, fmt.Errorf("mqtt: send CONNECT: %w", err)
	}
	br := bufio.NewReaderSize(nc, cfg.ReadBuffer)
	first, body, n, err := readPacket(br, nil)
	if err != nil {
		return codec.Connack{}, nil, err
	}
	if first>>4 != codec.CONNACK {
		return codec.Connack{}, nil, fmt.Errorf("mqtt: expected CONNACK, got packet type %d", first>>4)
	}
	ack, err := codec.DecodeConnack(cfg.Version, body)
	_, _ = br.Discard(n)
	if err == nil {
		err = ack.Err()
	}
	if err != nil && cfg.Version == codec.V5 && (ack.Code == 0x01 || ack.Code == 0x84) {
		// The shared-subscription scenarios ask for MQTT 5 by default: say
		// that this, not the client, is what the broker refused.
		err = fmt.Errorf("%w: the broker does not accept MQTT 5, which this connection asked for (version 5); "+
			"use a broker with MQTT 5, or MQTT 3.1.1 (version option, or MQTT_VERSION=3.1.1 in the scenarios) where the workload allows it", err)
	}
	return ack, br, err
}

// readPacket reads one packet. Its body aliases the reader's buffer when it
// fits (no copy); the caller discards n bytes after using it.
func readPacket(br *bufio.Reader, scratch *[]byte) (first byte, body []byte, n int, err error) {
	first, err = br.ReadByte()
	if err != nil {
		return 0, nil, 0, err
	}
	var lenBytes [4]byte
	rem := 0
	for i := 0; ; i++ {
		if i == 4 {
			return 0, nil, 0, codec.ErrVarint
		}
		if lenBytes[i], err = br.ReadByte(); err != nil {
			return 0, nil, 0, err
		}
		if lenBytes[i]&0x80 == 0 {
			rem, _, err = codec.ReadVarint(lenBytes[:i+1])
			break
		}
	}
	if err != nil {
		return 0, nil, 0, err
	}
	if rem <= br.Size() {
		body, err = br.Peek(rem)
		return first, body, rem, err
	}
	var buf []byte
	if scratch != nil {
		if cap(*scratch) < rem {
			*scratch = make([]byte, rem)
		}
		buf = (*scratch)[:rem]
	} else {
		buf = make([]byte, rem)
	}
	_, err = io.ReadFull(br, buf)
	return first, buf, 0, err
}
