// Point-to-point, laptop-sized: 100 publishers one-to-one with 100
// subscribers, 16 B, QoS 1, 1,000 msg/s for 1 min. All parameters: README.
import { p2p } from '../lib/workloads.js';

const s = p2p('p2p', { publishers: 100, subscribers: 100, rate: 1000, duration: '1m' });
export const { options, setup, handleSummary } = s;
export default s.run;
