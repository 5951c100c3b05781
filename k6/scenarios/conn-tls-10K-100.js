// mqttbs singlenode-conn-tls-10K-100: conn-tcp-10K-100 over TLS: 10,000
// clients connect to the broker's TLS listener within 100 s (100/s), MQTT
// 3.1.1, keep-alive 300, clean session, and stay 30 min. The result and the
// summary give the TLS handshake time (latency_ms.tls_handshake) apart from
// CONNECT -> CONNACK, and the handshake rate; TLS_CA etc.: README, Transports.
import { connections } from '../lib/workloads.js';

const s = connections('conn-tls-10K-100', {
  subscribers: 10000, connectRate: 100, duration: '30m', url: 'mqtts://127.0.0.1:8883', tls: true,
});
export const { options, setup, handleSummary } = s;
export default s.run;
