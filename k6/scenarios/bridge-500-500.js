// EMQX guide test 4: two brokers bridged both ways (MQTT_URL and MQTT_URL_B);
// on each side 500 publishers whose messages cross the bridge to 500
// subscribers on the other side. QoS 1, 128 B.
import { bridge } from '../lib/workloads.js';

const s = bridge('bridge-500-500', { publishers: 500, subscribers: 500, payload: 128, rate: 1000, duration: '5m' });
export const { options, setup, handleSummary } = s;
export default s.run;
