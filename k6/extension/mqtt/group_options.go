package mqtt

import (
	"math"
	"time"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/codec"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/load"
)

// Limits of the options: the scenarios read them through the module's
// `limits` export, so a value they accept is one the groups accept.
const (
	// maxRate (msg/s of one group's phase): far beyond what one generator
	// process sends (a few hundred thousand), low enough that the pacing
	// arithmetic stays exact; more load means more processes.
	maxRate = 1e7
	// maxPayload leaves room in the largest MQTT packet (268,435,455 bytes
	// of remaining length) for the topic and the packet's own fields.
	maxPayload = codec.MaxRemainingLength - 1024
)

// limits is what the module exports as `limits`.
func limits() map[string]any {
	return map[string]any{"rate": maxRate, "payload": maxPayload, "payload_min": load.HeaderSize, "keepalive": 65535}
}

// defaultPollInterval: 100 µs keeps the timing error of a message that shares
// a read small against loopback latencies, and still lets one wake-up serve
// many sockets (see k6/extension/README.md for the figures).
const defaultPollInterval = 100 * time.Microsecond

// pollIntervalOption is poll_interval: how often a group's poller looks
// while traffic lasts (0: a reader goroutine per connection).
func pollIntervalOption(o *opts) time.Duration {
	d := o.duration("poll_interval", defaultPollInterval)
	if d > 10*time.Millisecond {
		o.fail("poll_interval", "must be at most 10ms (it bounds how far a message can be timed late), got %v", d)
	}
	return d
}

// readGroupConfig reads the options every group has.
func readGroupConfig(o *opts) load.GroupConfig {
	g := load.GroupConfig{Conn: readConnConfig(o)}
	g.Count = o.integer("count", 1, 1, load.MaxPublisher)
	g.IDBase = o.integer("id_base", 0, 0, load.MaxPublisher)
	if g.IDBase+g.Count > load.MaxPublisher {
		o.fail("id_base", "+ count must stay below %d", load.MaxPublisher)
	}
	var err error
	if g.ClientID, err = load.ParseTemplate(o.str("client_id", "k6-{role}-{i}")); err != nil {
		o.fail("client_id", "%v", err)
	}
	g.ConnectRate = o.num("connect_rate", 0, 0, 1e7)
	g.Concurrency = o.integer("connect_concurrency", 128, 1, 100000)
	g.Tags = readTags(o)
	g.Flow = o.str("flow", "")
	o.refuse("servers", "a group connects to one broker: give it one url (one group per broker)")
	return g
}

// publisherOptions is a PublisherGroup's configuration and its phase defaults.
type publisherOptions struct {
	cfg           load.PublisherConfig
	rate          float64       // default total msg/s
	ratePerClient float64       // default msg/s per client (used when rate is 0)
	batch         time.Duration // default batch_interval of publish()
	maxLag        time.Duration // default max_lag of publish()
}

func readPublisherOptions(arg any) (publisherOptions, error) {
	o := newOpts("PublisherGroup", arg)
	var p publisherOptions
	c := &p.cfg
	c.QoS = o.qos("qos", 0)
	c.Retain = o.boolean("retain", false)
	c.PayloadSize = o.integer("payload_size", load.HeaderSize, load.HeaderSize, maxPayload)
	p.rate = o.num("rate", 0, 0, maxRate)
	p.ratePerClient = o.num("rate_per_client", 0, 0, maxRate)
	c.MaxInflight = o.integer("max_inflight", 1024, 1, 65535)
	p.batch = o.duration("batch_interval", time.Millisecond)
	p.maxLag = maxLagOption(o, load.DefaultMaxLag)
	c.PollInterval = pollIntervalOption(o)
	topic := o.str("topic", "")
	if topic == "" {
		o.fail("topic", "is required (a template such as \"test/{i}\")")
	}
	var err error
	if c.Topic, err = load.ParseTemplate(topic); err != nil {
		o.fail("topic", "%v", err)
	}
	c.GroupConfig = readGroupConfig(o)
	if c.Payload = payloadTemplateOption(o); c.Payload != nil {
		if o.m["payload_size"] != nil {
			o.fail("payload_size", "is the template's steady size with payload_template: give one of them")
		}
		c.PayloadSize = c.Payload.Size(c.ClientID.MaxLen())
		if c.PayloadSize > maxPayload {
			o.fail("payload_template", "renders %d bytes, above the limit of %d", c.PayloadSize, maxPayload)
		}
	}
	return p, o.done()
}

// payloadTemplateOption reads payload_template (nil when not given).
func payloadTemplateOption(o *opts) *load.PayloadTemplate {
	s := o.str("payload_template", "")
	if s == "" {
		return nil
	}
	t, err := load.ParsePayloadTemplate(s)
	if err != nil {
		o.fail("payload_template", "%v", err)
	}
	return t
}

// readPhase reads publish()'s options over the group's defaults.
func (p *publisherOptions) readPhase(arg any, clients int) (load.Phase, error) {
	o := newOpts("PublisherGroup.publish", arg)
	var ph load.Phase
	ph.Rate = o.num("rate", p.rate, 0, maxRate)
	perClient := o.num("rate_per_client", p.ratePerClient, 0, maxRate)
	if ph.Rate == 0 {
		ph.Rate = perClient * float64(clients)
	}
	if ph.Rate > maxRate {
		o.fail("rate_per_client", "× %d clients is %g msg/s, above the limit of %g per group", clients, ph.Rate, float64(maxRate))
	}
	ph.Duration = o.duration("duration", 0)
	ph.Count = int64(o.integer("count", 0, 0, math.MaxInt32))
	ph.Drain = o.duration("drain", 5*time.Second)
	ph.Batch = o.duration("batch_interval", p.batch)
	ph.MaxLag = maxLagOption(o, p.maxLag)
	if ph.Rate <= 0 {
		o.fail("rate", "or \"rate_per_client\" must be > 0 (messages per second)")
	}
	if ph.Duration == 0 && ph.Count == 0 {
		o.fail("duration", "or \"count\" is required")
	}
	return ph, o.done()
}

// maxLagOption is max_lag: how late a message may still be sent before it
// is missed. Zero would miss every message a wake-up finds already due.
func maxLagOption(o *opts, def time.Duration) time.Duration {
	d := o.duration("max_lag", def)
	if d < time.Millisecond {
		o.fail("max_lag", "must be at least 1ms, got %v", d)
	}
	return d
}

func readSubscriberConfig(arg any) (load.SubscriberConfig, error) {
	o := newOpts("SubscriberGroup", arg)
	var c load.SubscriberConfig
	c.QoS = o.qos("qos", 0)
	var topics []string
	switch t := o.any("topic").(type) {
	case nil:
	case string:
		topics = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				o.fail("topic", "must be a topic filter or a list of them, got %v", x)
				continue
			}
			topics = append(topics, s)
		}
	default:
		o.fail("topic", "must be a topic filter or a list of them, got %v", t)
	}
	for _, t := range topics {
		tpl, err := load.ParseTemplate(t)
		if err != nil {
			o.fail("topic", "%v", err)
		}
		c.Topics = append(c.Topics, tpl)
	}
	c.PollInterval = pollIntervalOption(o)
	c.AcceptDowngrade = o.boolean("accept_downgrade", false)
	c.Payload = payloadTemplateOption(o)
	c.GroupConfig = readGroupConfig(o)
	return c, o.done()
}
