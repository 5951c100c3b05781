package mqtt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestARefusalIsAFileItsCallerReads(t *testing.T) {
	dir := t.TempDir()
	msg := refuse(dir, "r1", map[string]any{"cause": "broker_lacks", "lacks": "QoS 2", "message": "x lacks QoS 2"})
	if msg != "x lacks QoS 2" {
		t.Fatalf("message %q", msg)
	}
	var doc map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "r1.refused.json"))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("%v %s", err, b)
	}
	if doc["schema"] != RefusalSchema || doc["run_id"] != "r1" || doc["lacks"] != "QoS 2" || doc["cause"] != "broker_lacks" {
		t.Fatalf("%v", doc)
	}
	// No run id: nobody could find it, none is written; nor outside dir.
	refuse(dir, "", map[string]any{"message": "m"})
	refuse(dir, "../r2", map[string]any{"message": "m"})
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%v", entries)
	}
}
