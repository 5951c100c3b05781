package mqtt

import (
	"errors"

	"github.com/grafana/sobek"
	"github.com/mstoykov/k6-taskqueue-lib/taskqueue"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/promises"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// connect(url?, options?): connects in the background; 'connect' or 'error' follows.
func (cl *Client) connect(url sobek.Value, options sobek.Value) {
	if err := cl.start(url, options, nil); err != nil {
		abortTest(cl.vu.Runtime(), err)
	}
}

// connectAsync(url?, options?): a promise of the connection.
func (cl *Client) connectAsync(url sobek.Value, options sobek.Value) *sobek.Promise {
	p, resolve, reject := promises.New(cl.vu)
	if err := cl.start(url, options, func(err error) {
		if err != nil {
			reject(err)
		} else {
			resolve(nil)
		}
	}); err != nil {
		reject(err)
	}
	return p
}

// reconnect drops the connection; the client connects again with backoff.
func (cl *Client) reconnect() {
	cl.mu.Lock()
	c := cl.c
	cl.mu.Unlock()
	if c == nil {
		common.Throw(cl.vu.Runtime(), errors.New("Client.reconnect: never connected"))
	}
	c.Drop()
}

func (cl *Client) start(url sobek.Value, options sobek.Value, done func(error)) error {
	over, _ := exportValue(options).(map[string]any)
	switch u := exportValue(url).(type) {
	case string:
		if over == nil {
			over = map[string]any{}
		}
		over["url"] = u
	case map[string]any:
		over = u
	}
	cfg, id, err := readClientOptions(cl.vu, cl.base, over)
	if err != nil {
		return err
	}
	cl.mu.Lock()
	if cl.c != nil {
		cl.mu.Unlock()
		return errors.New("Client.connect: already connected; call end() first")
	}
	if id == "" {
		id = "k6-client-" + randomID()
	}
	c := connection.New(cfg, id, 0, cl, cl.m)
	cl.c = c
	// The task queue keeps the VU's event loop alive until end().
	cl.tq = taskqueue.New(cl.vu.RegisterCallback)
	cl.mu.Unlock()
	go func() {
		err := c.Connect(cl.ctx)
		if err != nil {
			err = connection.Explain(cfg.Addr, err)
			cl.emitError("connect", err)
			cl.mu.Lock()
			cl.c = nil
			cl.mu.Unlock()
			if done == nil {
				cl.closeQueue()
			}
		}
		if done != nil {
			done(err)
			if err != nil {
				cl.closeQueue()
			}
		}
	}()
	return nil
}

func (cl *Client) closeQueue() {
	cl.mu.Lock()
	tq := cl.tq
	cl.tq = nil
	cl.mu.Unlock()
	if tq != nil {
		tq.Close()
	}
}
