// mqttbs singlenode-sharedsub-50K-500-50K-50K: 50,000 publishers at 1 msg/s,
// 500 subscribers sharing $share/benchmark/test/#, MQTT 5, QoS 1, 16 B.
import { sharedsub } from '../lib/workloads.js';

const s = sharedsub('sharedsub-50K-500-50K-50K', { publishers: 50000, subscribers: 500, rate: 50000, connectRate: 5000 });
export const { options, setup, handleSummary } = s;
export default s.run;
