// Connections, laptop-sized: 1,000 clients at 100/s, held for 1 min.
import { connections } from '../lib/workloads.js';

const s = connections('conn', { subscribers: 1000, connectRate: 100, duration: '1m' });
export const { options, setup, handleSummary } = s;
export default s.run;
