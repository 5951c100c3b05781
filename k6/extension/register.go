// Package xk6mqtt registers the k6/x/mqtt extension.
package xk6mqtt

import (
	"go.k6.io/k6/js/modules"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/mqtt"
)

func init() {
	modules.Register("k6/x/mqtt", mqtt.New())
}
