package mqtt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.k6.io/k6/js/common"

	"github.com/mqtt-bench/mqtt-bench/k6/extension/result"
)

// ClaimSchema marks a result file that is reserved but not written yet: the
// run is going on, or it died before its summary (reports skip it).
const ClaimSchema = result.ClaimSchema

// claimResult is `claimResult(dir, runID)`: it reserves this instance's
// result file (claimFile) and returns its path.
func (mi *ModuleInstance) claimResult(dir, runID string) string {
	path, err := claimFile(dir, runID, instanceSuffix(mi.segment()))
	if err != nil {
		common.Throw(mi.vu.Runtime(), err)
	}
	return path
}

// claimFile reserves dir/<runID><suffix>.json before any load, by
// creating it exclusively (suffix: "" for a test in one instance, else the
// instance's, such as ".seg-2-of-4"). k6's handleSummary truncates whatever
// is at the path it is given, so this is what keeps two generators from
// sharing a result file and a finished run's file from being overwritten.
// Until the summary replaces it, the file says whose it is.
func claimFile(dir, runID, suffix string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("RESULTS_DIR=%s cannot be created: %w", dir, err)
	}
	path := filepath.Join(dir, runID+suffix+".json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("RUN_ID=%s: %s exists already, and a run's result is never overwritten: "+
			"choose another RUN_ID, or leave it unset for a unique one", runID, path)
	}
	if err != nil {
		return "", fmt.Errorf("RESULTS_DIR=%s: the result file cannot be created: %w", dir, err)
	}
	host, _ := os.Hostname()
	claim, _ := json.Marshal(map[string]any{"schema": ClaimSchema, "run_id": runID, "pid": os.Getpid(),
		"host": host, "claimed_at": time.Now().UTC().Format(time.RFC3339)})
	_, err = f.Write(claim)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}
