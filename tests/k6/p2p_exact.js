// N messages at QoS 1 (or QOS) are received exactly N times.
import mqtt from 'k6/x/mqtt';

const N = Number(__ENV.N || 5000);
const CLIENTS = Number(__ENV.CLIENTS || 10);

export const options = {
  tags: { run_id: __ENV.RUN_ID || 'test', broker: 'mosquitto' },
  scenarios: { 'p2p-test': { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '2m' } },
  thresholds: {
    mqtt_receives: [`count==${N}`],
    mqtt_lost: ['count==0'],
    mqtt_duplicates: ['count==0'],
    mqtt_publishes: [`count==${N}`],
  },
};

export default async function () {
  const common = { url: __ENV.MQTT_URL, count: CLIENTS, topic: 'exact/{i}', qos: Number(__ENV.QOS || 1) };
  const subs = new mqtt.SubscriberGroup(common);
  await subs.connect();
  const pubs = new mqtt.PublisherGroup(common);
  await pubs.connect();
  const r = await pubs.publish({ count: N, rate: Number(__ENV.RATE || 2500) });
  await subs.drain({ expected: r.sent, idle: '3s' });
  pubs.close();
  subs.close();
}
