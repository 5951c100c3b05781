// Package xk6mqtt registers the k6/x/mqtt extension and its k6 x mqtt-merge
// subcommand.
package xk6mqtt

import (
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/subcommand"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/merge"
	"github.com/mqtt-bench/mqtt-bench/k6/extension/mqtt"
)

func init() {
	root := mqtt.New()
	modules.Register("k6/x/mqtt", root)
	modules.Register("k6/x/mqtt/internal", root.Internal())
	subcommand.RegisterExtension(merge.Name, merge.NewCommand)
}
