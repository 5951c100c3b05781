// Command k6 is k6 with the k6/x/mqtt extension: the program xk6 would
// generate (xk6 itself cannot be fetched here).
package main

import (
	k6cmd "go.k6.io/k6/cmd"

	_ "github.com/mqtt-bench/mqtt-bench/k6/extension"
)

func main() {
	k6cmd.Execute()
}
