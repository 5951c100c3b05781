// mqttbs singlenode-p2p-50K-50K-50K-50K: 50,000 publishers, 50,000
// subscribers, 1 msg/s per publisher (50K msg/s in and out), QoS 1, 16 B.
// 100,000 connections: several k6 instances (README: Several generators).
import { p2p } from '../lib/workloads.js';

const s = p2p('p2p-50K-50K-50K-50K', { publishers: 50000, subscribers: 50000, rate: 50000, connectRate: 5000 });
export const { options, setup, handleSummary } = s;
export default s.run;
