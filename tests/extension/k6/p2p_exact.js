// N messages at QoS 1 (or QOS) are received exactly N times. EXPECT (default
// N) is the count the thresholds require: a wrong one must fail the run.
import mqtt from 'k6/x/mqtt';

const N = Number(__ENV.N || 5000);
const CLIENTS = Number(__ENV.CLIENTS || 10);
const EXPECT = Number(__ENV.EXPECT || N);

export const options = {
  tags: { run_id: __ENV.RUN_ID || 'test', broker: 'mosquitto' },
  scenarios: { 'p2p-test': { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '2m' } },
  thresholds: {
    mqtt_receives: [`count==${EXPECT}`],
    mqtt_lost: ['count==0'],
    mqtt_duplicates: ['count==0'],
    mqtt_publishes: [`count==${EXPECT}`],
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
