package mqtt

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/promises"
)

// end disconnects; the 'end' event follows.
func (cl *Client) end() { go cl.shutdown(true) }

// endAsync disconnects and resolves once the connection is closed.
func (cl *Client) endAsync() *sobek.Promise {
	p, resolve, _ := promises.New(cl.vu)
	go func() {
		cl.shutdown(true)
		resolve(nil)
	}()
	return p
}

// shutdown closes the connection, emits 'end' (when asked) and lets the VU's
// event loop finish.
func (cl *Client) shutdown(emitEnd bool) {
	cl.mu.Lock()
	c := cl.c
	cl.c = nil
	cl.mu.Unlock()
	if c != nil {
		c.Close()
	}
	if emitEnd {
		cl.emit("end")
	}
	cl.closeQueue()
	if cl.ctx.Err() != nil {
		cl.m.Close()
	}
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
