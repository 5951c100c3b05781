// Fan-in (EMQX guide test 3): 2,000 publishers, 100 subscribers; every 100
// publishers' messages are shared by a group of 5 subscribers. Laptop-sized
// default rate (1 msg/s per publisher) and duration.
import { faninGroups } from '../lib/workloads.js';

const s = faninGroups('fanin', { publishers: 2000, subscribers: 100, payload: 128, rate: 2000, duration: '1m' });
export const { options, setup, handleSummary } = s;
export default s.run;
