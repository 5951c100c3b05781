package connection

import (
	"context"
	"fmt"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
)

// Subscribe sends one SUBSCRIBE, waits for the SUBACK and remembers the
// filters for reconnects. It returns the SUBACK's codes; a refused filter
// (code >= 0x80) is an error naming it.
func (c *Conn) Subscribe(ctx context.Context, subs []codec.Subscription) ([]byte, error) {
	start := time.Now()
	version := c.cfg.Version
	r, err := c.Request(ctx, func(pid uint16) []byte { return codec.AppendSubscribe(nil, version, pid, subs) })
	if err != nil {
		c.rec.Count(SubscribeFailed, 1)
		return nil, err
	}
	c.rec.Time(SubackTime, c.idx, time.Since(start).Nanoseconds())
	for i, code := range r.Codes {
		if code >= 0x80 {
			c.rec.Count(SubscribeFailed, 1)
			return r.Codes, fmt.Errorf("mqtt: broker refused subscription %q (SUBACK code 0x%02x)", subs[min(i, len(subs)-1)].Filter, code)
		}
	}
	c.mu.Lock()
	c.subs = append(c.subs, subs...)
	c.granted = append(c.granted, r.Codes...)
	c.mu.Unlock()
	return r.Codes, nil
}

// Subscriptions are the connection's filters and the codes the broker
// granted them, in order: after a reconnect, those of the restored ones.
func (c *Conn) Subscriptions() ([]codec.Subscription, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]codec.Subscription(nil), c.subs...), append([]byte(nil), c.granted...)
}

// Unsubscribe sends one UNSUBSCRIBE and waits for the UNSUBACK.
func (c *Conn) Unsubscribe(ctx context.Context, filters []string) error {
	version := c.cfg.Version
	if _, err := c.Request(ctx, func(pid uint16) []byte { return codec.AppendUnsubscribe(nil, version, pid, filters) }); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var kept []codec.Subscription
	var granted []byte
	for i, s := range c.subs {
		drop := false
		for _, f := range filters {
			drop = drop || s.Filter == f
		}
		if !drop {
			kept = append(kept, s)
			granted = append(granted, c.granted[i])
		}
	}
	c.subs, c.granted = kept, granted
	return nil
}
