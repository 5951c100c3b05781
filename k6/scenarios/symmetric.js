// Symmetric (EMQX guide test 3): 1,000 publishers one-to-one with 1,000
// subscribers, 128 B, QoS 1. Laptop-sized default: 1,000 msg/s for 1 min.
import { p2p } from '../lib/workloads.js';

const s = p2p('symmetric', { publishers: 1000, subscribers: 1000, payload: 128, rate: 1000, duration: '1m' });
export const { options, setup, handleSummary } = s;
export default s.run;
