// mqttbs singlenode-conn-tcp-1M-5K: 1,000,000 clients at 5,000/s, held 30 min.
// One process holds ~19,000 connections here (open-files limit 20,000): run
// it as n generator processes, SEGMENT=0/n .. SEGMENT=n-1/n, each with its
// own source address or host (more than ~64K connections per source IP
// exhaust ports).
import { connections } from '../lib/workloads.js';

const s = connections('conn-tcp-1M-5K', { subscribers: 1000000, connectRate: 5000, duration: '30m' });
export const { options, setup, handleSummary } = s;
export default s.run;
