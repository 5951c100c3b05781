// Publishers reach the broker through PUB_URL (a delaying proxy), subscribers
// directly: the measured latency must include the known added delay.
import mqtt from 'k6/x/mqtt';

export const options = {
  scenarios: { 'delay-test': { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '1m' } },
};

export default async function () {
  const subs = new mqtt.SubscriberGroup({ url: __ENV.SUB_URL, count: 2, topic: 'delay/{i}', qos: 1 });
  await subs.connect();
  const pubs = new mqtt.PublisherGroup({ url: __ENV.PUB_URL, count: 2, topic: 'delay/{i}', qos: 1 });
  await pubs.connect();
  await pubs.publish({ duration: '4s', rate: 200 });
  await subs.drain({ expected: 800, idle: '2s' });
  pubs.close();
  subs.close();
}
