// mqttbs singlenode-conn-tcp-10K-100: 10,000 clients connect over TCP within
// 100 s (100/s), MQTT 3.1.1, keep-alive 300, clean session, and stay 30 min.
import { connections } from '../lib/workloads.js';

const s = connections('conn-tcp-10K-100', { subscribers: 10000, connectRate: 100, duration: '30m' });
export const { options, setup, handleSummary } = s;
export default s.run;
