// Benchmark of the load generator itself (not of the broker), driven by
// python -m mqttbench generator-bench, which measures the k6 process from outside.
//   MODE=throughput  TOPOLOGY (p2p, fan-in, fan-out) at QOS, PAYLOAD bytes (or PAYLOAD_TEMPLATE),
//                    RATE messages delivered per second for SECONDS
//   MODE=idle        CONNS idle subscriber connections, held for HOLD seconds
//   MODE=soak        p2p QoS 0 up to 10M messages, with marks at 1M and 10M
import mqtt from 'k6/x/mqtt';

const url = __ENV.MQTT_URL || 'mqtt://127.0.0.1:1883';
const mode = __ENV.MODE || 'throughput';
const clients = Number(__ENV.CLIENTS || 100);

export const options = {
  scenarios: { bench: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '30m' } },
};

function mark(name) {
  console.log(`MARK ${name}`);
}

// The topologies, with CLIENTS connections on the wide side:
//   p2p     CLIENTS publishers, each to its own subscriber
//   fan-in  CLIENTS publishers, one subscriber of them all
//   fan-out one publisher, CLIENTS subscribers of its topic
// `fanout` is how many subscribers each message reaches.
const topologies = {
  p2p: { pubs: clients, subs: clients, pubTopic: 'bench/{i}', subTopic: 'bench/{i}', fanout: 1 },
  'fan-in': { pubs: clients, subs: 1, pubTopic: 'fanin/{i}', subTopic: 'fanin/+', fanout: 1 },
  'fan-out': { pubs: 1, subs: clients, pubTopic: 'fanout', subTopic: 'fanout', fanout: clients },
};

async function pair(qos, topology) {
  const t = topologies[topology];
  if (!t) throw new Error(`TOPOLOGY=${topology}: use one of ${Object.keys(topologies).join(', ')}`);
  const o = { url, qos, connect_rate: 2000 };
  if (/^(mqtts|wss):/.test(url) && __ENV.TLS_CA) o.tls = { ca: __ENV.TLS_CA };
  const so = Object.assign({ read_buffer: 65536, count: t.subs, topic: t.subTopic }, o);
  if (__ENV.POLL_INTERVAL) so.poll_interval = __ENV.POLL_INTERVAL; // '0': a reader goroutine per connection
  const subs = new mqtt.SubscriberGroup(so);
  await subs.connect();
  const po = { count: t.pubs, topic: t.pubTopic };
  if (__ENV.PAYLOAD_TEMPLATE) po.payload_template = __ENV.PAYLOAD_TEMPLATE;
  else po.payload_size = Number(__ENV.PAYLOAD || 16);
  const pubs = new mqtt.PublisherGroup(Object.assign(po, o));
  await pubs.connect();
  return { subs, pubs, fanout: t.fanout };
}

export default async function () {
  if (mode === 'idle') {
    const n = Number(__ENV.CONNS || 10000);
    mark('before-connect');
    await new Promise((r) => setTimeout(r, 1500));
    const subs = new mqtt.SubscriberGroup({ url, count: n, topic: 'idle/{i}', connect_rate: 5000, keepalive: 300 });
    const r = await subs.connect();
    console.log(`connected ${r.connected} failed ${r.failed}`);
    await new Promise((res) => setTimeout(res, 3000));
    mark('connected');
    await new Promise((res) => setTimeout(res, 1500));
    subs.close();
    return;
  }
  const qos = Number(__ENV.QOS || 0);
  const { subs, pubs, fanout } = await pair(qos, mode === 'soak' ? 'p2p' : __ENV.TOPOLOGY || 'p2p');
  if (mode === 'soak') {
    const rate = Number(__ENV.RATE || 100000);
    let done = 0;
    const marks = (__ENV.SOAK_MARKS || '1,10').split(',').map(Number);
    for (const [target, name] of marks.map((m) => [m * 1e6, `${m}M`])) {
      const r = await pubs.publish({ count: target - done, rate });
      done += r.sent;
      await subs.drain({ expected: done, idle: '2s' });
      mark(name);
    }
  } else {
    mark('publish-start');
    // RATE is what the subscribers receive: a fan-out publishes 1/fanout of it.
    const rate = Number(__ENV.RATE || 100000) / fanout;
    const r = await pubs.publish({ rate, duration: `${__ENV.SECONDS || 20}s` });
    const s = await subs.drain({ expected: r.sent * fanout, idle: '2s' });
    mark('publish-end');
    const payload = pubs.stats().payload_size;
    console.log(`RESULT ${JSON.stringify({ publish: r, subscribe: s, latency: mqtt.stats().mqtt_latency, payload })}`);
  }
  pubs.close();
  subs.close();
}
