// Composite, laptop-sized: 1,000 background connections (send nothing,
// hold keep-alive and session), then point-to-point 100:100 at 1 msg/s
// each, fan-out 1 publisher to 100 subscribers at 1 msg/s, fan-in 100
// publishers at 1 msg/s to 5 subscribers sharing $share/composite/fanin/#.
// MQTT 5, QoS 1, 16 B, 1 min; each part judged on its own (flow_verdicts).
import { composite } from '../lib/composite.js';

const s = composite('composite', {
  background: 1000, p2p: 100, fanout: { publishers: 1, subscribers: 100 }, fanin: { publishers: 100, subscribers: 5 },
  duration: '1m', connectRate: 500,
});
export const { options, setup, handleSummary } = s;
export default s.run;
