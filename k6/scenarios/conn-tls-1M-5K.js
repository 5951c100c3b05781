// mqttbs singlenode-conn-tls-1M-5K: conn-tcp-1M-5K over TLS: 1,000,000
// clients at 5,000 TLS handshakes/s, held 30 min. Run it as n k6 instances
// (README: Several generators), as conn-tcp-1M-5K.
import { connections } from '../lib/workloads.js';

const s = connections('conn-tls-1M-5K', {
  subscribers: 1000000, connectRate: 5000, duration: '30m', url: 'mqtts://127.0.0.1:8883', tls: true,
});
export const { options, setup, handleSummary } = s;
export default s.run;
