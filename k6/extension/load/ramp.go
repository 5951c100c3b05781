package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// ConnectResult is what opening a group's connections achieved.
type ConnectResult struct {
	Connected int     `json:"connected"`
	Failed    int     `json:"failed"`
	Seconds   float64 `json:"seconds"`
	FirstErr  string  `json:"first_error,omitempty"`
	// SharedCheck: how a subscriber group's shared subscriptions were found
	// to work ("announced" in CONNACK, probe "received"); "" without any.
	SharedCheck string `json:"shared_check,omitempty"`
	// Probes: the probe messages that check published (QoS 1), so that a
	// broker's own counters can be reconciled with the load's.
	Probes int `json:"probes,omitempty"`
	// Transport: tcp or tls (with its version and cipher suite, from the
	// first connection that completed a handshake).
	Transport   string `json:"transport,omitempty"`
	TLSVersion  string `json:"tls_version,omitempty"`
	CipherSuite string `json:"cipher_suite,omitempty"`
}

// openAll runs open(i) for i in [0,n) at most `rate` starts per second (0 =
// unpaced) with at most `concurrency` in flight: the connection ramp.
func openAll(ctx context.Context, n int, rate float64, concurrency int, open func(i int) error) ConnectResult {
	start := time.Now()
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	for i := 0; i < n; i++ {
		if rate > 0 {
			due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
			}
		}
		if ctx.Err() != nil {
			failed.Add(int64(n - i))
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := open(i); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			ok.Add(1)
		}(i)
	}
	wg.Wait()
	r := ConnectResult{Connected: int(ok.Load()), Failed: int(failed.Load()), Seconds: time.Since(start).Seconds()}
	if e, has := firstErr.Load().(string); has {
		r.FirstErr = e
	}
	return r
}
