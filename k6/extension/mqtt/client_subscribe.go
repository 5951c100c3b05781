package mqtt

import (
	"context"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/promises"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

func topicsArg(v sobek.Value) []string {
	switch t := exportValue(v).(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func (cl *Client) readSubscribe(topics sobek.Value, options sobek.Value) ([]codec.Subscription, error) {
	o := newOpts("Client.subscribe", exportValue(options))
	qos := o.qos("qos", 0)
	noLocal := o.boolean("no_local", false)
	o.refuse("tags", "tags go in the Client constructor (counts are per client, not per subscription)")
	ts := topicsArg(topics)
	if len(ts) == 0 {
		o.fail("topic", "must be a topic filter or a list of them")
	}
	subs := make([]codec.Subscription, len(ts))
	for i, t := range ts {
		subs[i] = codec.Subscription{Filter: t, QoS: qos, NoLocal: noLocal}
	}
	return subs, o.done()
}

// subscribe(topic|topics, options?): errors go to 'error'.
func (cl *Client) subscribe(topics sobek.Value, options sobek.Value) {
	subs, err := cl.readSubscribe(topics, options)
	if err != nil {
		abortTest(cl.vu.Runtime(), err)
		return
	}
	go func() {
		if _, err := cl.doSubscribe(subs); err != nil {
			cl.emitError("subscribe", err)
		}
	}()
}

// subscribeAsync(topic|topics, options?): resolves with the granted QoS list.
func (cl *Client) subscribeAsync(topics sobek.Value, options sobek.Value) *sobek.Promise {
	// Options first: a promise registered with the event loop and never
	// settled would keep the aborted VU waiting.
	subs, err := cl.readSubscribe(topics, options)
	if err != nil {
		return abortWithPromise(cl.vu.Runtime(), err)
	}
	p, resolve, reject := promises.New(cl.vu)
	go func() {
		codes, err := cl.doSubscribe(subs)
		if err != nil {
			reject(err)
			return
		}
		granted := make([]int, len(codes))
		for i, c := range codes {
			granted[i] = int(c)
		}
		resolve(granted)
	}()
	return p
}

func (cl *Client) doSubscribe(subs []codec.Subscription) ([]byte, error) {
	c := cl.conn()
	if c == nil {
		return nil, connection.ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(cl.ctx, c.Config().ConnectTimeout)
	defer cancel()
	return c.Subscribe(ctx, subs)
}

// unsubscribe(topic|topics): errors go to 'error'.
func (cl *Client) unsubscribe(topics sobek.Value) {
	go func() {
		if err := cl.doUnsubscribe(topicsArg(topics)); err != nil {
			cl.emitError("unsubscribe", err)
		}
	}()
}

// unsubscribeAsync(topic|topics): resolves once the broker acknowledged.
func (cl *Client) unsubscribeAsync(topics sobek.Value) *sobek.Promise {
	p, resolve, reject := promises.New(cl.vu)
	ts := topicsArg(topics)
	go func() {
		if err := cl.doUnsubscribe(ts); err != nil {
			reject(err)
			return
		}
		resolve(nil)
	}()
	return p
}

func (cl *Client) doUnsubscribe(ts []string) error {
	c := cl.conn()
	if c == nil {
		return connection.ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(cl.ctx, c.Config().ConnectTimeout)
	defer cancel()
	return c.Unsubscribe(ctx, ts)
}
