package mqtt

import (
	"context"
	"fmt"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/promises"
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
	_ = o.object("tags")
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
	if topic == "" || containsWildcard(topic) {
		o.fail("topic", "must be a topic name without wildcards, got %q", topic)
	}
	return p, o.done()
}

// publish(topic, payload, options?): sends in the background; errors go to 'error'.
func (cl *Client) publish(topic string, payload sobek.Value, options sobek.Value) {
	p, err := cl.readPublish(topic, payload, options)
	if err != nil {
		common.Throw(cl.vu.Runtime(), err)
	}
	go func() {
		if err := cl.doPublish(p); err != nil {
			cl.emitError("publish", err)
		}
	}()
}

// publishAsync(topic, payload, options?): resolves when written (QoS 0) or acknowledged.
func (cl *Client) publishAsync(topic string, payload sobek.Value, options sobek.Value) *sobek.Promise {
	pr, resolve, reject := promises.New(cl.vu)
	p, err := cl.readPublish(topic, payload, options)
	if err != nil {
		reject(err)
		return pr
	}
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
		cl.m.add(cPublishFailures, 1)
		return errNotConnected
	}
	prefix := publishPrefix(p.qos, p.retain, p.topic, c.cfg.version, len(p.payload))
	if p.qos == 0 {
		err := c.send(appendPublish(nil, prefix, 0, 0, c.cfg.version, p.payload))
		cl.countPublish(err, len(p.payload))
		return err
	}
	start := nowNano()
	ctx, cancel := context.WithTimeout(cl.ctx, c.cfg.connectTimeout)
	defer cancel()
	r, err := c.request(ctx, func(pid uint16) []byte {
		return appendPublish(nil, prefix, p.qos, pid, c.cfg.version, p.payload)
	})
	if err == nil && r.reason >= 0x80 {
		err = fmt.Errorf("mqtt: broker refused the publish to %q (reason 0x%02x)", p.topic, r.reason)
	}
	if err == nil {
		global.record(histPuback, 0, nowNano()-start)
	}
	cl.countPublish(err, len(p.payload))
	return err
}

func (cl *Client) countPublish(err error, n int) {
	if err != nil {
		cl.m.add(cPublishFailures, 1)
		return
	}
	cl.m.add(cPublishes, 1)
	cl.m.add(cBytesSent, int64(n))
}

func (cl *Client) conn() *conn {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.c
}
