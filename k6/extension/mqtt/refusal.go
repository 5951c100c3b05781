package mqtt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// RefusalSchema names a refusal file: what a run refused before any
// connection, as a value its caller reads (scripts/compare.sh's column),
// never as text out of k6's log.
const RefusalSchema = "mqtt-bench/refusal/1"

// refuse records a scenario's refusal of its input as dir/<runID>.refused.json
// ({schema, run_id, cause, message, and what the scenario adds: what the
// broker lacks, where its broker.toml says so}), and returns the message for
// the scenario to throw. A run without RUN_ID or RESULTS_DIR writes none: no
// caller could find it. The file is written again by each VU's init, the same.
func refuse(dir, runID string, refusal map[string]any) string {
	msg, _ := refusal["message"].(string)
	// A RUN_ID with a path separator is refused by the scenario itself (its
	// message says so): no file lands outside dir.
	if dir == "" || runID == "" || strings.ContainsAny(runID, `/\`) {
		return msg
	}
	doc := map[string]any{"schema": RefusalSchema, "run_id": runID}
	for k, v := range refusal {
		doc[k] = v
	}
	if b, err := json.MarshalIndent(doc, "", " "); err == nil && os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(dir, runID+".refused.json"), append(b, '\n'), 0o644)
	}
	return msg
}
