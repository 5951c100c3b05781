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

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
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
	m        *load.Meter
	mu       sync.Mutex
	c        *connection.Conn
	tq       *taskqueue.TaskQueue
	handlers map[string][]sobek.Callable
	ctx      context.Context
	cancel   context.CancelFunc
}

// clientEvent tells the events a listener can be registered for.
func clientEvent(name string) bool {
	switch name {
	case "connect", "message", "error", "end", "reconnect", "close":
		return true
	}
	return false
}

func (mi *ModuleInstance) newClient(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	env, err := mi.loadEnv("Client", nil)
	if err != nil {
		common.Throw(rt, err)
	}
	arg := exportArg(call.Arguments, 0)
	base, _ := arg.(map[string]any)
	if base == nil && arg != nil {
		abortTest(rt, errors.New("Client: options must be an object"))
		return rt.NewObject()
	}
	// Validate now, so mistakes surface before any connect.
	if _, _, err := readClientOptions(mi.vu, base, nil); err != nil {
		abortTest(rt, err)
		return rt.NewObject()
	}
	tags := readTags(newOpts("Client", base))
	cl := &Client{vu: mi.vu, base: base, handlers: map[string][]sobek.Callable{}}
	cl.m = mi.root.run.NewMeter(env, "client", -1, tags)
	cl.ctx, cl.cancel = context.WithCancel(mi.vu.Context())
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
		return cl.c != nil && cl.c.Up()
	}), nil, sobek.FLAG_FALSE, sobek.FLAG_TRUE); err != nil {
		common.Throw(rt, err)
	}
	return o
}

// readClientOptions merges constructor and connect options (connect wins).
func readClientOptions(vu modules.VU, base, over map[string]any) (*connection.Config, string, error) {
	merged := map[string]any{}
	for k, v := range base {
		merged[k] = v
	}
	for k, v := range over {
		merged[k] = v
	}
	o := newOpts("Client", merged)
	id := o.str("client_id", o.str("clientId", ""))
	readTags(o)
	if _, retagged := over["tags"]; retagged {
		o.fail("tags", "go in the Client constructor: its metrics keep one set of tags for its whole life")
	}
	o.refuse("servers", "a client connects to one broker: give it one url")
	cfg := readConnConfig(o)
	if s := vu.State(); s != nil {
		cfg.Dial = s.Dialer.DialContext
	}
	if len(cfg.LocalAddrs) > 0 {
		cfg.Dial = connection.LocalDialer(cfg.LocalAddrs)
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
	cl.m.Add(load.Errors, 1)
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
		abortTest(rt, fmt.Errorf("Client.on(%q): the listener must be a function", event))
		return
	}
	if !clientEvent(event) {
		abortTest(rt, fmt.Errorf("Client.on: unknown event %q (known: connect, message, error, end, reconnect, close)", event))
		return
	}
	cl.mu.Lock()
	cl.handlers[event] = append(cl.handlers[event], fn)
	cl.mu.Unlock()
}

// OnPublish emits 'message' (connection.Handler).
func (cl *Client) OnPublish(_ *connection.Conn, p *codec.Publish, _ int64) {
	cl.m.Add(load.Receives, 1)
	cl.m.Add(load.BytesReceived, int64(len(p.Payload)))
	topic := string(p.Topic)
	payload := append([]byte(nil), p.Payload...)
	cl.emit("message",
		func(rt *sobek.Runtime) sobek.Value { return rt.ToValue(topic) },
		func(rt *sobek.Runtime) sobek.Value { return rt.ToValue(rt.NewArrayBuffer(payload)) })
}

// OnAck implements connection.Handler: the client's publishes wait for their own acks.
func (cl *Client) OnAck(*connection.Conn, codec.Ack, int64) {}

// OnConnect emits 'reconnect' (after a drop) and 'connect'.
func (cl *Client) OnConnect(_ *connection.Conn, reconnect bool) {
	if reconnect {
		cl.emit("reconnect")
	}
	cl.emit("connect")
}

// OnConnectionLost emits 'error' and 'close'.
func (cl *Client) OnConnectionLost(_ *connection.Conn, err error) {
	cl.emitError("connection", err)
	cl.emit("close")
}
