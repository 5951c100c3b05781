// mqttbs singlenode-fanout-5-1000-5-250K: 5 publishers at 50 msg/s each to
// 5 topics, 1,000 subscribers each on all 5 topics (250K msg/s out), QoS 1, 16 B.
import { fanoutAll } from '../lib/workloads.js';

const s = fanoutAll('fanout-5-1000-5-250K', { publishers: 5, subscribers: 1000, rate: 250 });
export const { options, setup, handleSummary } = s;
export default s.run;
