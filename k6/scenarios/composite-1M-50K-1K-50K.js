// mqttbs composite, enterprise set's size: 1,000,000 background connections,
// then the enterprise parts: point-to-point 50K:50K at 1 msg/s each
// (p2p-50K-50K-50K-50K), fan-out 5 publishers at 50 msg/s each to 1,000
// subscribers on all 5 topics, 250K msg/s out (fanout-5-1000-5-250K), fan-in
// 50,000 publishers at 1 msg/s to 500 subscribers sharing one subscription
// (sharedsub-50K-500-50K-50K). MQTT 5, QoS 1, 16 B, 5,000 connections/s,
// 30 min. About 1.15M connections: many k6 instances (docs/distributed.md).
import { composite } from '../lib/composite.js';

const s = composite('composite-1M-50K-1K-50K', {
  background: 1000000, p2p: 50000, fanout: { publishers: 5, subscribers: 1000, perPublisher: 50 },
  fanin: { publishers: 50000, subscribers: 500 }, connectRate: 5000,
});
export const { options, setup, handleSummary } = s;
export default s.run;
