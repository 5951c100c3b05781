// EMQX guide test 2: 1,000:1,000 one-to-one at QoS 1 and 20K msg/s, one
// step per payload size (PAYLOADS, bytes), each held for DURATION.
import { payloadSweep } from '../lib/workloads.js';

const s = payloadSweep('payload-1K-1K-20K', { publishers: 1000, subscribers: 1000, rate: 20000, duration: '5m', payloads: [128, 1024, 4096, 8192] });
export const { options, setup, handleSummary } = s;
export default s.run;
