// mqttbs singlenode-p2p-1K-1K-1K-1K: 1,000 publishers to test/1..test/1000,
// 1,000 subscribers one topic each, 1 msg/s per publisher, QoS 1, 16 B,
// MQTT 3.1.1, keep-alive 300, clean session, 30 min.
import { p2p } from '../lib/workloads.js';

const s = p2p('p2p-1K-1K-1K-1K', { publishers: 1000, subscribers: 1000, rate: 1000 });
export const { options, setup, handleSummary } = s;
export default s.run;
