package connection

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/gobwas/ws"
)

// MQTT over WebSocket (MQTT 5.0 §6, 3.1.1 §6): the client asks for the
// subprotocol "mqtt" and sends its packets in binary frames, where a frame
// may hold several packets or part of one. github.com/gobwas/ws does the
// upgrade and the framing: of the three maintained libraries the module
// proxy serves, it framed a flush of the publish path fastest and with no
// allocation (docs/benchmarks.md, WebSocket library).

// subprotocol is the WebSocket subprotocol MQTT registers (IANA).
const subprotocol = "mqtt"

// upgradeWS turns a dialled (and, for wss://, TLS) connection into one
// that carries MQTT in WebSocket frames.
func upgradeWS(ctx context.Context, nc net.Conn, cfg *Config) (net.Conn, error) {
	scheme := "ws"
	if cfg.TLS != nil {
		scheme = "wss"
	}
	u := &url.URL{Scheme: scheme, Host: cfg.WSHost, Path: cfg.WSPath}
	if deadline, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(deadline)
	}
	d := ws.Dialer{Protocols: []string{subprotocol}}
	br, hs, err := d.Upgrade(nc, u)
	if err != nil {
		return nil, fmt.Errorf("mqtt: WebSocket upgrade at %s: %w (is %s the broker's WebSocket path and port?)", u, err, cfg.WSPath)
	}
	if hs.Protocol != subprotocol {
		return nil, fmt.Errorf("mqtt: WebSocket upgrade at %s: the broker chose subprotocol %q, not %q", u, hs.Protocol, subprotocol)
	}
	w := &wsConn{Conn: nc, r: br}
	if w.r == nil {
		w.r = bufio.NewReaderSize(nc, 4096)
	}
	return w, nil
}

// wsConn is a net.Conn whose Write sends one masked binary frame and whose
// Read returns the payload of the broker's data frames, answering pings.
type wsConn struct {
	net.Conn
	r *bufio.Reader

	wmu   sync.Mutex
	frame []byte // header + masked payload, reused
	hdr   [ws.MaxHeaderSize]byte
	hbuf  appender

	left int64   // payload bytes of the current frame not yet read
	mask [4]byte // the current frame's mask (a server should send none)
	pos  int     // offset in the payload, for unmasking
	mskd bool
}

// appender is an io.Writer that appends to b: ws.WriteHeaderBuffer writes
// the header through it into the frame buffer, allocation-free.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// Write sends p as one binary frame: one syscall, as for TCP.
func (w *wsConn) Write(p []byte) (int, error) {
	if err := w.writeFrame(ws.OpBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *wsConn) writeFrame(op ws.OpCode, p []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	h := ws.Header{Fin: true, OpCode: op, Masked: true, Mask: ws.NewMask(), Length: int64(len(p))}
	w.hbuf.b = w.frame[:0]
	if err := ws.WriteHeaderBuffer(&w.hbuf, h, w.hdr[:]); err != nil {
		return err
	}
	n := len(w.hbuf.b)
	w.frame = append(w.hbuf.b, p...)
	ws.Cipher(w.frame[n:], h.Mask, 0) // the client masks every frame (RFC 6455 §5.3)
	_, err := w.Conn.Write(w.frame)
	if cap(w.frame) > 64<<10 { // do not keep a burst's buffer forever
		w.frame = nil
	}
	return err
}

// Read returns payload bytes of binary (and continuation) frames.
func (w *wsConn) Read(p []byte) (int, error) {
	for w.left == 0 {
		h, err := ws.ReadHeader(w.r)
		if err != nil {
			return 0, err
		}
		w.left, w.mask, w.mskd, w.pos = h.Length, h.Mask, h.Masked, 0
		switch h.OpCode {
		case ws.OpBinary, ws.OpContinuation:
		case ws.OpClose:
			_ = w.writeFrame(ws.OpClose, nil)
			return 0, io.EOF
		case ws.OpPing, ws.OpPong:
			body := make([]byte, h.Length) // at most 125 bytes (RFC 6455 §5.5)
			if _, err := io.ReadFull(w.r, body); err != nil {
				return 0, err
			}
			if w.mskd {
				ws.Cipher(body, w.mask, 0)
			}
			w.left = 0
			if h.OpCode == ws.OpPing {
				if err := w.writeFrame(ws.OpPong, body); err != nil {
					return 0, err
				}
			}
		default:
			return 0, errors.New("mqtt: the broker sent a WebSocket text frame: MQTT goes in binary frames (MQTT 5.0 §6.0)")
		}
	}
	if int64(len(p)) > w.left {
		p = p[:w.left]
	}
	n, err := w.r.Read(p)
	if w.mskd {
		ws.Cipher(p[:n], w.mask, w.pos)
	}
	w.pos += n
	w.left -= int64(n)
	return n, err
}

// Close sends a close frame when no write is under way (a write stalled on
// a broker that reads nothing is what a close may be ending), then closes.
func (w *wsConn) Close() error {
	if w.wmu.TryLock() {
		_ = w.Conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		w.wmu.Unlock()
		_ = w.writeFrame(ws.OpClose, ws.NewCloseFrameBody(ws.StatusNormalClosure, ""))
	}
	return w.Conn.Close()
}
