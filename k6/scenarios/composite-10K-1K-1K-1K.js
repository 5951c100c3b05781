// mqttbs composite, basic set's size: 10,000 background connections (send
// nothing, hold keep-alive 300 and session), then the parts of the basic
// set: point-to-point 1K:1K at 1 msg/s each (p2p-1K-1K-1K-1K), fan-out 1
// publisher at 1 msg/s to 1,000 subscribers (fanout-1-1K-1-1K), fan-in 1,000
// publishers at 1 msg/s to 5 subscribers sharing one subscription
// (sharedsub-1K-5-1K-1K). The name: background-p2p-fanout subscribers-fanin
// publishers. MQTT 5, QoS 1, 16 B, 1,000 connections/s, 30 min.
import { composite } from '../lib/composite.js';

const s = composite('composite-10K-1K-1K-1K', {
  background: 10000, p2p: 1000, fanout: { publishers: 1, subscribers: 1000 }, fanin: { publishers: 1000, subscribers: 5 },
  connectRate: 1000,
});
export const { options, setup, handleSummary } = s;
export default s.run;
