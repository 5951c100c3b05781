// mqttbs singlenode-conn-tcp-1M-5K: 1,000,000 clients at 5,000/s, held 30 min.
// One process holds ~19,000 connections here (open-files limit 20,000): run
// it as n k6 instances (README: Several generators), each with its
// own source address (LOCAL_ADDRESS) or host: one address has ~28,000
// ephemeral ports for one broker address.
import { connections } from '../lib/workloads.js';

const s = connections('conn-tcp-1M-5K', { subscribers: 1000000, connectRate: 5000, duration: '30m' });
export const { options, setup, handleSummary } = s;
export default s.run;
