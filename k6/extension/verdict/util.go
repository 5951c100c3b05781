package verdict

import (
	"fmt"
	"sort"
	"strings"
)

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func join(xs []string, sep string) string { return strings.Join(xs, sep) }

// num formats a figure as the texts show it (n/a when absent).
func num(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fmt.Sprintf("%g", *x)
}

func pct(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100**x)
}
