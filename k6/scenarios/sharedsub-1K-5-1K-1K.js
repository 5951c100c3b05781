// mqttbs singlenode-sharedsub-1K-5-1K-1K: 1,000 publishers to test/1..1000 at
// 1 msg/s, 5 subscribers sharing $share/benchmark/test/#, MQTT 5, QoS 1, 16 B.
import { sharedsub } from '../lib/workloads.js';

const s = sharedsub('sharedsub-1K-5-1K-1K', { publishers: 1000, subscribers: 5, rate: 1000 });
export const { options, setup, handleSummary } = s;
export default s.run;
