package mqtt

import (
	"fmt"
	"testing"
)

// A phase may start as soon as the last one's promise resolved (step load:
// `await pubs.publish(...)` after `await pubs.publish(...)`). The group
// cleared its running mark only after it had handed over the outcome, so
// the next phase could be refused as "already running" (seen once in nine
// runs of 30 back-to-back phases on a busy host).
func TestAPhaseStartsAsSoonAsTheLastResolved(t *testing.T) {
	r := newTestVU(t).run(t, fmt.Sprintf(`
const pubs = new PublisherGroup({ url: 'mqtt://%s', count: 1, topic: 'phases/{i}', payload_size: 16 });
await pubs.connect();
let sent = 0;
for (let i = 0; i < 2000; i++) {
  sent += (await pubs.publish({ count: 1, rate: 100 })).sent;
}
pubs.close();
result = { sent };`, startMosquitto(t)))
	if r["sent"].(float64) != 2000 {
		t.Fatalf("sent %v of 2000", r["sent"])
	}
}
