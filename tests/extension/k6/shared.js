// A shared subscription spreads messages over its members with no duplicates.
import mqtt from 'k6/x/mqtt';

const N = 4000;
export const options = {
  scenarios: { 'sharedsub-test': { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '1m' } },
  thresholds: { mqtt_receives: [`count==${N}`], mqtt_lost: ['count==0'], mqtt_duplicates: ['count==0'] },
};

export default async function () {
  const url = __ENV.MQTT_URL;
  const subs = new mqtt.SubscriberGroup({ url, count: 5, topic: '$share/benchmark/shared/#', qos: 1, version: 5 });
  await subs.connect();
  const pubs = new mqtt.PublisherGroup({ url, count: 20, topic: 'shared/{i}', qos: 1, version: 5 });
  await pubs.connect();
  await pubs.publish({ count: N, rate: 2000 });
  const s = await subs.drain({ expected: N, idle: '3s' });
  if (s.min_per_client === 0 || s.max_per_client === N) {
    throw new Error(`messages not spread over the group: ${JSON.stringify(s)}`);
  }
  pubs.close();
  subs.close();
}
