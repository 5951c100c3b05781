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
	c.mu.Unlock()
	return r.Codes, nil
}

// Unsubscribe sends one UNSUBSCRIBE and waits for the UNSUBACK.
func (c *Conn) Unsubscribe(ctx context.Context, filters []string) error {
	version := c.cfg.Version
	if _, err := c.Request(ctx, func(pid uint16) []byte { return codec.AppendUnsubscribe(nil, version, pid, filters) }); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.subs[:0]
	for _, s := range c.subs {
		drop := false
		for _, f := range filters {
			drop = drop || s.Filter == f
		}
		if !drop {
			kept = append(kept, s)
		}
	}
	c.subs = kept
	return nil
}
