// Fan-out (EMQX guide test 3): 10 publishers, 2,000 subscribers, 200 per
// topic, 128 B. Laptop-sized default: 10 msg/s in, 2,000 msg/s out, 1 min.
import { fanoutSpread } from '../lib/workloads.js';

const s = fanoutSpread('fanout', { publishers: 10, subscribers: 2000, payload: 128, rate: 10, duration: '1m' });
export const { options, setup, handleSummary } = s;
export default s.run;
