package mqtt

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/grafana/sobek"
	"github.com/mstoykov/k6-taskqueue-lib/taskqueue"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
)

// Client is the low-level, event-driven client, close to grafana/xk6-mqtt's
// MQTT.js-like API so scripts move between the two:
//
//	const client = new Client({ client_id: 'probe' })
//	client.on('connect', () => client.subscribe('greeting'))
//	client.on('message', (topic, payload) => { ...; client.end() })
//	client.connect('mqtt://127.0.0.1:1883')
type Client struct {
	vu       modules.VU
	obj      *sobek.Object
	base     map[string]any // constructor options, merged under connect options
	m        *meter
	mu       sync.Mutex
	c        *conn
	tq       *taskqueue.TaskQueue
	handlers map[string][]sobek.Callable
	ctx      context.Context
	cancel   context.CancelFunc
}

var clientEvents = map[string]bool{"connect": true, "message": true, "error": true, "end": true, "reconnect": true, "close": true}

func (mi *ModuleInstance) newClient(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	state := mi.vu.State()
	if state == nil {
		common.Throw(rt, errors.New("Client must be created inside a VU function (default or setup), not in the init context"))
	}
	base, _ := exportArg(call.Arguments, 0).(map[string]any)
	if base == nil && exportArg(call.Arguments, 0) != nil {
		common.Throw(rt, errors.New("Client: options must be an object"))
	}
	// Validate now, so mistakes surface before any connect.
	if _, _, err := readClientOptions(mi.vu, base, nil); err != nil {
		common.Throw(rt, err)
	}
	cl := &Client{vu: mi.vu, base: base, handlers: map[string][]sobek.Callable{}}
	tm := state.Tags.GetCurrentValues()
	cl.m = &meter{role: "client", base: tm.Tags, tags: tm.Tags.With("role", "client"), meta: tm.Metadata,
		ctx: mi.vu.Context(), samples: state.Samples}
	cl.ctx, cl.cancel = context.WithCancel(mi.vu.Context())
	global.register(cl.m)
	go func() { <-cl.ctx.Done(); cl.shutdown(false) }()

	o := rt.NewObject()
	cl.obj = o
	set := func(name string, fn any) {
		if err := o.Set(name, fn); err != nil {
			common.Throw(rt, err)
		}
	}
	set("connect", cl.connect)
	set("connectAsync", cl.connectAsync)
	set("reconnect", cl.reconnect)
	set("subscribe", cl.subscribe)
	set("subscribeAsync", cl.subscribeAsync)
	set("unsubscribe", cl.unsubscribe)
	set("unsubscribeAsync", cl.unsubscribeAsync)
	set("publish", cl.publish)
	set("publishAsync", cl.publishAsync)
	set("end", cl.end)
	set("endAsync", cl.endAsync)
	set("on", cl.on)
	if err := o.DefineAccessorProperty("connected", rt.ToValue(func() bool {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		return cl.c != nil && cl.c.up.Load()
	}), nil, sobek.FLAG_FALSE, sobek.FLAG_TRUE); err != nil {
		common.Throw(rt, err)
	}
	return o
}

// readClientOptions merges constructor and connect options (connect wins).
func readClientOptions(vu modules.VU, base, over map[string]any) (*connConfig, string, error) {
	merged := map[string]any{}
	for k, v := range base {
		merged[k] = v
	}
	for k, v := range over {
		merged[k] = v
	}
	o := newOpts("Client", merged)
	id := o.str("client_id", o.str("clientId", ""))
	_ = o.object("tags") // accepted for API compatibility; tags come from the test
	_ = o.get
	o.used["servers"] = true
	cfg := readConnConfig(o)
	if s := vu.State(); s != nil {
		cfg.dial = s.Dialer.DialContext
	}
	return cfg, id, o.done()
}

// emit runs the listeners of an event on the VU's event loop.
func (cl *Client) emit(event string, args ...func(rt *sobek.Runtime) sobek.Value) {
	cl.mu.Lock()
	tq := cl.tq
	cl.mu.Unlock()
	if tq == nil {
		return
	}
	tq.Queue(func() error {
		rt := cl.vu.Runtime()
		vals := make([]sobek.Value, len(args))
		for i, a := range args {
			vals[i] = a(rt)
		}
		cl.mu.Lock()
		hs := append([]sobek.Callable(nil), cl.handlers[event]...)
		cl.mu.Unlock()
		for _, h := range hs {
			if _, err := h(sobek.Undefined(), vals...); err != nil {
				return err
			}
		}
		return nil
	})
}

func (cl *Client) emitError(method string, err error) {
	cl.m.add(cErrors, 1)
	cl.emit("error", func(rt *sobek.Runtime) sobek.Value {
		o := rt.NewObject()
		_ = o.Set("name", "MQTTError")
		_ = o.Set("message", err.Error())
		_ = o.Set("method", method)
		return o
	})
}

// on registers a listener: connect, message, error, end, reconnect, close.
func (cl *Client) on(event string, listener sobek.Value) {
	rt := cl.vu.Runtime()
	fn, ok := sobek.AssertFunction(listener)
	if !ok {
		common.Throw(rt, fmt.Errorf("Client.on(%q): the listener must be a function", event))
	}
	if !clientEvents[event] {
		common.Throw(rt, fmt.Errorf("Client.on: unknown event %q (known: connect, message, error, end, reconnect, close)", event))
	}
	cl.mu.Lock()
	cl.handlers[event] = append(cl.handlers[event], fn)
	cl.mu.Unlock()
}

// Connection events.
func (cl *Client) onPublish(_ *conn, p *publishPacket) {
	cl.m.add(cReceives, 1)
	cl.m.add(cBytesReceived, int64(len(p.payload)))
	topic := string(p.topic)
	payload := append([]byte(nil), p.payload...)
	cl.emit("message",
		func(rt *sobek.Runtime) sobek.Value { return rt.ToValue(topic) },
		func(rt *sobek.Runtime) sobek.Value { return rt.ToValue(rt.NewArrayBuffer(payload)) })
}

func (cl *Client) onAck(*conn, byte, uint16, byte) {}

func (cl *Client) onConnect(_ *conn, reconnect bool) {
	if reconnect {
		cl.emit("reconnect")
	}
	cl.emit("connect")
}

func (cl *Client) onConnectionLost(_ *conn, err error) {
	cl.emitError("connection", err)
	cl.emit("close")
}
