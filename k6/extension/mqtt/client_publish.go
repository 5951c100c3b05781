package mqtt

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/promises"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

type clientPublish struct {
	topic   string
	payload []byte
	qos     byte
	retain  bool
}

func (cl *Client) readPublish(topic string, payload sobek.Value, options sobek.Value) (clientPublish, error) {
	o := newOpts("Client.publish", exportValue(options))
	p := clientPublish{topic: topic, qos: o.qos("qos", 0), retain: o.boolean("retain", false)}
	o.refuse("tags", "tags go in the Client constructor (counts are per client, not per message)")
	switch v := exportValue(payload).(type) {
	case nil:
	case string:
		p.payload = []byte(v)
	case sobek.ArrayBuffer:
		p.payload = append([]byte(nil), v.Bytes()...)
	case []byte:
		p.payload = append([]byte(nil), v...)
	default:
		o.fail("payload", "must be a string or an ArrayBuffer, got %T", v)
	}
	if topic == "" || strings.ContainsAny(topic, "+#") {
		o.fail("topic", "must be a topic name without wildcards, got %q", topic)
	}
	return p, o.done()
}

// publish(topic, payload, options?): sends in the background; errors go to 'error'.
func (cl *Client) publish(topic string, payload sobek.Value, options sobek.Value) {
	p, err := cl.readPublish(topic, payload, options)
	if err != nil {
		abortTest(cl.vu.Runtime(), err)
		return
	}
	go func() {
		if err := cl.doPublish(p); err != nil {
			cl.emitError("publish", err)
		}
	}()
}

// publishAsync(topic, payload, options?): resolves when written (QoS 0) or acknowledged.
func (cl *Client) publishAsync(topic string, payload sobek.Value, options sobek.Value) *sobek.Promise {
	// Options first: a promise registered with the event loop and never
	// settled would keep the aborted VU waiting.
	p, err := cl.readPublish(topic, payload, options)
	if err != nil {
		return abortWithPromise(cl.vu.Runtime(), err)
	}
	pr, resolve, reject := promises.New(cl.vu)
	go func() {
		if err := cl.doPublish(p); err != nil {
			reject(err)
			return
		}
		resolve(nil)
	}()
	return pr
}

func (cl *Client) doPublish(p clientPublish) error {
	c := cl.conn()
	if c == nil {
		cl.m.Add(load.PublishFailures, 1)
		return connection.ErrNotConnected
	}
	version := c.Config().Version
	msg := &codec.Publish{Topic: []byte(p.topic), Payload: p.payload, QoS: p.qos, Retain: p.retain}
	if p.qos == 0 {
		err := c.Send(codec.AppendPublishPacket(nil, version, msg))
		cl.countPublish(err, len(p.payload))
		return err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(cl.ctx, c.Config().ConnectTimeout)
	defer cancel()
	r, err := c.Request(ctx, func(pid uint16) []byte {
		msg.PacketID = pid
		return codec.AppendPublishPacket(nil, version, msg)
	})
	if fits, _ := codec.AckFits(p.qos, codec.Ack{Type: r.Type, Reason: r.Reason}); err == nil && !fits && r.Reason < 0x80 {
		cl.m.Add(load.ProtocolErrors, 1)
		err = fmt.Errorf("mqtt: protocol error: the broker answered a QoS %d publish to %q with %s, not the QoS %d flow", p.qos, p.topic, codec.TypeName(r.Type), p.qos)
	}
	if err == nil && r.Reason >= 0x80 {
		err = fmt.Errorf("mqtt: broker refused the publish to %q (reason 0x%02x)", p.topic, r.Reason)
	}
	if err == nil {
		cl.m.Record(load.PubackDuration, 0, time.Since(start).Nanoseconds())
	}
	cl.countPublish(err, len(p.payload))
	return err
}

func (cl *Client) countPublish(err error, n int) {
	if err != nil {
		cl.m.Add(load.PublishFailures, 1)
		return
	}
	cl.m.Add(load.Publishes, 1)
	cl.m.Add(load.BytesSent, int64(n))
}

func (cl *Client) conn() *connection.Conn {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.c
}
