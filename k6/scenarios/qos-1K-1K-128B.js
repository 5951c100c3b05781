// EMQX guide test 1: 1,000 publishers one-to-one with 1,000 subscribers,
// 128 B payloads, at QoS 0, 1 or 2 (QOS). Find the recommended load with
// STEPS, e.g. STEPS=5000:2m,10000:2m,20000:2m, and the report's capacity search.
import { p2p } from '../lib/workloads.js';

const s = p2p('qos-1K-1K-128B', { publishers: 1000, subscribers: 1000, payload: 128, rate: 5000, duration: '5m' });
export const { options, setup, handleSummary } = s;
export default s.run;
