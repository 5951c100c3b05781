// Groups: 100 publishers one-to-one with 100 subscribers at 2,000 msg/s for
// 30 s, QoS 1; every message timed and accounted for.
//   k6 run k6/extension/examples/p2p-groups.js
import mqtt from 'k6/x/mqtt';

export const options = {
  thresholds: {
    mqtt_lost: ['count==0'],
    mqtt_duplicates: ['count==0'],
    mqtt_latency_p99: ['value<50'],
    mqtt_rate_achieved_ratio: [`value>=${mqtt.policy.rate_reached}`],
  },
};

export default async function () {
  const url = __ENV.MQTT_URL || 'mqtt://127.0.0.1:1883';
  const subs = new mqtt.SubscriberGroup({ url, count: 100, topic: 'example/{i}', qos: 1 });
  await subs.connect();
  const pubs = new mqtt.PublisherGroup({ url, count: 100, topic: 'example/{i}', qos: 1, connect_rate: 500 });
  await pubs.connect();
  const r = await pubs.publish({ rate: 2000, duration: __ENV.DURATION || '30s' });
  const s = await subs.drain({ expected: r.sent });
  console.log(`sent ${r.sent}, received ${s.unique}, lost ${s.lost}`);
  pubs.close();
  subs.close();
}
