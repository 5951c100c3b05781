package load

// What the broker granted a subscriber group, and the refusals that follow:
// a run must measure what it names (shared subscriptions, the QoS asked).

import (
	"fmt"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/connection"
)

// Refusal is the first refusal Connect met (nil: none).
func (g *SubscriberGroup) Refusal() error {
	if e := g.refusal.Load(); e != nil {
		return *e
	}
	return nil
}

func (g *SubscriberGroup) refuse(err error) error {
	g.refusal.CompareAndSwap(nil, &err)
	return err
}

// checkShared refuses a shared subscription the broker announced it does not
// offer: it would accept the connection and deliver nothing (or everything
// to every member).
func (g *SubscriberGroup) checkShared(c *connection.Conn, subs []codec.Subscription) error {
	if len(g.shared) == 0 || c.SharedSubscriptions() != 0 {
		return nil
	}
	return g.refuse(fmt.Errorf("the broker does not offer shared subscriptions (its CONNACK says Shared Subscription Available = 0, MQTT 5 §3.2.2.3.13), and this group subscribes to %q", subs[0].Filter))
}

// checkGranted compares the SUBACK's granted QoS with what was asked.
func (g *SubscriberGroup) checkGranted(subs []codec.Subscription, codes []byte) error {
	for i, code := range codes {
		asked := subs[min(i, len(subs)-1)]
		for {
			low := g.granted.Load()
			if int32(code) >= low || g.granted.CompareAndSwap(low, int32(code)) {
				break
			}
		}
		if code < asked.QoS && !g.accept {
			return g.refuse(fmt.Errorf("the broker granted QoS %d for %q where QoS %d was asked (SUBACK): the run would measure another QoS than it names; to measure at the granted level, set accept_downgrade (ACCEPT_QOS_DOWNGRADE=true in the scenarios), which the result records", code, asked.Filter, asked.QoS))
		}
	}
	return nil
}

// grantedQoS is the lowest QoS the broker granted, or -1 before any SUBACK.
func (g *SubscriberGroup) grantedQoS() int {
	if q := g.granted.Load(); q < 3 {
		return int(q)
	}
	return -1
}

// OnConnect checks, after a reconnect, what the broker granted the restored
// subscriptions: a downgrade then cannot stop a run under way, so it is
// counted as an error and logged, and granted_qos shows it.
func (g *SubscriberGroup) OnConnect(c *connection.Conn, reconnect bool) {
	if !reconnect {
		return
	}
	subs, codes := c.Subscriptions()
	if err := g.checkGranted(subs, codes); err != nil {
		g.m.Add(Errors, 1)
		g.logger.Warnf("SubscriberGroup: after a reconnect, %v", err)
	}
}
