package mqtt

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// opts reads a JS options object, collecting every problem so the user sees
// all of them at once, each naming the option, before anything connects.
type opts struct {
	where string
	m     map[string]any
	used  map[string]bool
	errs  []string
}

func newOpts(where string, v any) *opts {
	o := &opts{where: where, used: map[string]bool{}}
	switch m := v.(type) {
	case nil:
		o.m = map[string]any{}
	case map[string]any:
		o.m = m
	default:
		o.m = map[string]any{}
		o.errs = append(o.errs, fmt.Sprintf("options must be an object, got %T", v))
	}
	return o
}

func (o *opts) fail(name, format string, a ...any) {
	o.errs = append(o.errs, fmt.Sprintf("option %q %s", name, fmt.Sprintf(format, a...)))
}

func (o *opts) get(name string) (any, bool) {
	o.used[name] = true
	v, ok := o.m[name]
	return v, ok && v != nil
}

// any is the option's value, nil when absent.
func (o *opts) any(name string) any {
	v, _ := o.get(name)
	return v
}

func (o *opts) str(name, def string) string {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		o.fail(name, "must be a string, got %v", v)
		return def
	}
	return s
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

func (o *opts) num(name string, def, minV, maxV float64) float64 {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	f, isNum := toFloat(v)
	if !isNum || math.IsNaN(f) {
		o.fail(name, "must be a number, got %v", v)
		return def
	}
	if minV == 0 && maxV <= 2 && (f < minV || f > maxV) { // QoS-like small ranges read best whole
		o.fail(name, "must be between %v and %v, got %v", minV, maxV, v)
		return def
	}
	if f < minV {
		o.fail(name, "must be >= %v, got %v", minV, v)
		return def
	}
	if f > maxV {
		o.fail(name, "must be <= %v, got %v", maxV, v)
		return def
	}
	return f
}

func (o *opts) integer(name string, def, minV, maxV int) int {
	f := o.num(name, float64(def), float64(minV), float64(maxV))
	if f != math.Trunc(f) {
		o.fail(name, "must be a whole number, got %v", f)
	}
	return int(f)
}

func (o *opts) boolean(name string, def bool) bool {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		o.fail(name, "must be true or false, got %v", v)
		return def
	}
	return b
}

// duration accepts a k6-style string ("10s", "250ms") or milliseconds.
func (o *opts) duration(name string, def time.Duration) time.Duration {
	v, ok := o.get(name)
	if !ok {
		return def
	}
	if s, isStr := v.(string); isStr {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d
		}
	} else if f, isNum := toFloat(v); isNum && f >= 0 {
		return time.Duration(f * float64(time.Millisecond))
	}
	o.fail(name, "must be a duration such as \"10s\" or a number of milliseconds, got %v", v)
	return def
}

func (o *opts) object(name string) map[string]any {
	v, ok := o.get(name)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		o.fail(name, "must be an object, got %v", v)
	}
	return m
}

func (o *opts) qos(name string, def byte) byte {
	return byte(o.integer(name, int(def), 0, 2))
}

// refuse reports an option this API does not take, with what to do instead.
func (o *opts) refuse(name, why string) {
	if _, given := o.get(name); given {
		o.fail(name, "is not supported: %s", why)
	}
}

// done reports unknown options (typos) and all collected errors.
func (o *opts) done() error {
	var unknown []string
	for k := range o.m {
		if !o.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		o.errs = append(o.errs, fmt.Sprintf("unknown option %q", k))
	}
	if len(o.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: invalid options: %s", o.where, strings.Join(o.errs, "; "))
}
