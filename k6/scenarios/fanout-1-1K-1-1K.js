// mqttbs singlenode-fanout-1-1K-1-1K: 1 publisher at 1 msg/s to one topic,
// 1,000 subscribers (1,000 msg/s out), QoS 1, 16 B, MQTT 3.1.1, 30 min.
import { fanoutAll } from '../lib/workloads.js';

const s = fanoutAll('fanout-1-1K-1-1K', { publishers: 1, subscribers: 1000, rate: 1 });
export const { options, setup, handleSummary } = s;
export default s.run;
