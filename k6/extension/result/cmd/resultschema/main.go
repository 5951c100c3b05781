// Command resultschema prints the result file's JSON Schema, generated from
// k6/extension/result.Result (mqttbench/generated/result_schema.py writes and checks it).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

func main() {
	b, err := json.MarshalIndent(result.Schema(), "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "resultschema:", err)
		os.Exit(1)
	}
	fmt.Println(string(b))
}
