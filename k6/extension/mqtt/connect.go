package mqtt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// connectResult is what a group's connect() resolves with.
type connectResult struct {
	Connected int     `json:"connected"`
	Failed    int     `json:"failed"`
	Seconds   float64 `json:"seconds"`
	FirstErr  string  `json:"first_error,omitempty"`
}

// openAll runs open(i) for i in [0,n) at most `rate` starts per second (0 =
// unpaced) with at most `concurrency` in flight: the connection ramp.
func openAll(ctx context.Context, n int, rate float64, concurrency int, open func(i int) error) connectResult {
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
	r := connectResult{Connected: int(ok.Load()), Failed: int(failed.Load()), Seconds: time.Since(start).Seconds()}
	if e, has := firstErr.Load().(string); has {
		r.FirstErr = e
	}
	return r
}

// explainDial adds the fix to the errors people meet first.
func explainDial(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w (nothing listens on %s: start the broker, or set the url option / MQTT_URL)", err, addr)
	case errors.Is(err, syscall.EMFILE):
		return fmt.Errorf("%w (too many open files: raise `ulimit -n`, or split the load over several k6 processes)", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (no answer from %s within connect_timeout)", err, addr)
	}
	return err
}
