// One runner for every scenario: a scenario file only describes its workload
// (clients, topics, rates) as flows, and this turns it into k6 options with
// thresholds, a setup that fixes the run id, the load itself and the result.
//
// A flow is { name, publishers, subscribers, pubTopic, subTopics, fanout,
// pubBase, subBase, pubUrl, subUrl }: publishers send to pubTopic (a template
// such as 'test/{i}'), subscribers subscribe to subTopics, and each message
// published is expected `fanout` times at the subscribers.
import exec from 'k6/execution';
import { Gauge } from 'k6/metrics';
import mqtt from 'k6/x/mqtt';
import * as env from './env.js';
import { summary } from './summary.js';

const stepRate = new Gauge('mqtt_step_rate'); // step boundaries, for annotations

// The project's reports/raw, wherever k6 is started (`k6 run fanin.js` in
// k6/scenarios), so that scripts/report.sh finds the result: resolved from
// this file, not from the working directory.
const RESULTS_DIR = decodeURIComponent(import.meta.resolve('../../reports/raw').replace(/^file:\/\//, ''))
  .replace(/^\/([A-Za-z]:)/, '$1');

// KNOWN are the parameters params() reads (and k6's own K6_ variables are
// never near them).
const KNOWN = ['SCALE', 'BROKER', 'MQTT_URL', 'MQTT_URL_B', 'MQTT_VERSION', 'QOS', 'PAYLOAD', 'PUBLISHERS',
  'SUBSCRIBERS', 'RATE', 'DURATION', 'CONNECT_RATE', 'KEEPALIVE', 'P99_MS', 'STEPS', 'PAYLOADS', 'SEGMENT',
  'RESULTS_DIR', 'TOPIC_PREFIX', 'ACCEPT_QOS_DOWNGRADE', 'RUN_ID', 'CLEAN_SESSION', 'SESSION_EXPIRY'];

// params reads every parameter from the environment over the scenario's defaults.
function params(name, d) {
  const scale = env.number('SCALE', 1, { min: 0, above: true });
  const p = {
    scenario: name,
    broker: env.text('BROKER', 'mosquitto'),
    url: env.url('MQTT_URL', 'mqtt://127.0.0.1:1883'),
    url_b: d.bridged ? env.url('MQTT_URL_B', 'mqtt://127.0.0.1:1884') : undefined,
    version: env.choice('MQTT_VERSION', d.version || '3.1.1', ['3.1.1', '5', '5.0']).replace('5.0', '5'),
    qos: Number(env.choice('QOS', d.qos ?? 1, [0, 1, 2])),
    payload: env.number('PAYLOAD', d.payload ?? 16, {
      min: mqtt.limits.payload_min, integer: true, max: mqtt.limits.payload, why: 'the largest MQTT packet, less room for the topic',
    }),
    publishers: env.number('PUBLISHERS', d.publishers ?? 0, { integer: true }),
    subscribers: env.number('SUBSCRIBERS', d.subscribers ?? 0, { integer: true }),
    rate: env.number('RATE', d.rate ?? 0, { max: mqtt.limits.rate, why: "the extension's limit per process: run more generator processes" }),
    duration: env.duration('DURATION', d.duration || '30m'),
    connect_rate: env.number('CONNECT_RATE', d.connectRate ?? 1000, { above: true }),
    keepalive: env.number('KEEPALIVE', d.keepalive ?? 300, { integer: true, max: mqtt.limits.keepalive, why: 'a 16-bit field in CONNECT' }),
    p99_ms: env.number('P99_MS', d.p99Ms ?? 100, { above: true }),
    steps: env.steps('STEPS'),
    payloads: d.payloads ? env.text('PAYLOADS', d.payloads.join(',')).split(',').map(Number) : undefined,
    segment: env.segment('SEGMENT'),
    scale,
    results_dir: env.text('RESULTS_DIR', RESULTS_DIR),
    run_id: env.runId('RUN_ID'),
    // Isolates concurrent runs on one broker: their topics would otherwise
    // cross (mqttbs uses test/{i} everywhere), and the streams with them.
    topic_prefix: env.topicPrefix('TOPIC_PREFIX'),
    // A broker that grants less than QOS fails the run before load, unless
    // this accepts measuring at the granted level (the result then says so).
    accept_downgrade: env.choice('ACCEPT_QOS_DOWNGRADE', 'false', ['true', 'false']) === 'true',
    // Persistent sessions (subscribers and publishers): a broker restart
    // then loses no QoS >= 1 message; the reconnects resume the sessions.
    clean_session: env.choice('CLEAN_SESSION', 'true', ['true', 'false']) === 'true',
    session_expiry: env.number('SESSION_EXPIRY', 0, { integer: true, max: 4294967295, why: 'a 32-bit field in CONNECT' }),
  };
  env.warnUnknown(name, KNOWN);
  if (p.payloads && p.payloads.some((x) => !Number.isInteger(x) || x < 16)) {
    throw new Error(`${name}: PAYLOADS=${__ENV.PAYLOADS} is invalid: expected sizes in bytes >= 16, e.g. 128,1024,4096`);
  }
  env.check(name);
  if (p.session_expiry > 0 && p.version !== '5') {
    throw new Error(`${name}: SESSION_EXPIRY=${__ENV.SESSION_EXPIRY} is invalid with MQTT_VERSION=${p.version}: the session ` +
      'expiry interval is an MQTT 5 property; under 3.1.1 set CLEAN_SESSION=false to keep sessions, or set MQTT_VERSION=5');
  }
  if (!p.clean_session && p.version === '5' && p.session_expiry === 0) {
    throw new Error(`${name}: CLEAN_SESSION=false keeps nothing under MQTT 5 without SESSION_EXPIRY: the session ends with ` +
      'the connection; set SESSION_EXPIRY to the seconds the broker should keep it (e.g. 300)');
  }
  // SCALE shrinks the use case's defaults proportionally: fewer clients,
  // each with the load it has in the full use case (per-publisher rate,
  // connection ramp time). PUBLISHERS, SUBSCRIBERS, RATE, STEPS and
  // CONNECT_RATE given explicitly are kept as given.
  const given = (k) => __ENV[k] !== undefined && __ENV[k] !== '';
  const shrink = (k, n) => (given(k) || n === 0 ? n : Math.max(1, Math.round(n * scale)));
  const full = { publishers: p.publishers, subscribers: p.subscribers };
  p.publishers = shrink('PUBLISHERS', p.publishers);
  p.subscribers = shrink('SUBSCRIBERS', p.subscribers);
  if (!given('RATE') && full.publishers > 0) p.rate = (p.rate / full.publishers) * p.publishers;
  if (!given('CONNECT_RATE')) {
    const clients = (n) => n.publishers + n.subscribers;
    p.connect_rate *= clients(p) / Math.max(1, clients(full));
  }
  // The connection ramp must end within the run (CONNECT_RATE=0.001 would
  // hold it for days).
  const steps = plan(p);
  const total = steps.reduce((n, st) => n + env.seconds(st.duration), 0);
  const ramp = (p.publishers + p.subscribers) / p.connect_rate;
  // What k6's progress line shows as the run's length: the ramps (a
  // payload sweep opens its publishers again for each size) and the steps.
  const rounds = p.payloads ? p.payloads.length : 1;
  p.planned_s = Math.ceil((p.subscribers + rounds * p.publishers) / p.connect_rate + total);
  p.planned_steps = steps.length;
  if (ramp > total) {
    throw new Error(`${name}: CONNECT_RATE=${p.connect_rate} is too low: opening ${p.publishers + p.subscribers} ` +
      `connections would take ${Math.round(ramp)} s, longer than the run (DURATION=${p.duration}): raise CONNECT_RATE or lengthen DURATION`);
  }
  if (p.publishers > 0 && !(p.rate > 0) && !p.steps) {
    throw new Error(`${name}: RATE=${__ENV.RATE} is invalid: expected messages per second in total, > 0`);
  }
  return p;
}

// slice gives this generator process its share of n clients (SEGMENT=i/n).
function slice(n, seg) {
  const per = Math.ceil(n / seg.count);
  const start = Math.min(n, seg.index * per);
  return { base: start, count: Math.max(0, Math.min(n, start + per) - start) };
}

// scenario(name, defaults, workload): workload(params) returns the flows.
export function scenario(name, defaults, workload) {
  const p = params(name, defaults);
  const flows = workload(p).map((f) => withPrefix(f, p.topic_prefix));
  const publishing = flows.some((f) => f.publishers > 0);
  if (!flows.some((f) => f.publishers + f.subscribers > 0)) {
    throw new Error(`${name}: PUBLISHERS=${p.publishers} and SUBSCRIBERS=${p.subscribers} leave no client to run: ` +
      'give at least one of them a value > 0, or leave them unset for the scenario\'s own numbers');
  }
  // Verdicts that agree with the counts: every planned connection opened
  // (this process's share; a payload sweep opens its publishers again per
  // size), and a run that should deliver delivered something.
  const share = (n) => slice(n, p.segment).count;
  const rounds = p.payloads ? p.payloads.length : 1;
  const planned = flows.reduce((n, f) => n + share(f.subscribers) + share(f.publishers) * rounds, 0);
  // Open at once when all are up (a sweep closes one size's publishers first).
  const atOnce = flows.reduce((n, f) => n + share(f.subscribers) + share(f.publishers), 0);
  const thresholds = {
    mqtt_connect_failures: ['count==0'],
    mqtt_connects: [`count>=${planned}`],
  };
  if (publishing && flows.some((f) => f.fanout > 0 && share(f.subscribers) > 0)) {
    thresholds.mqtt_receives = ['count>0'];
  }
  if (publishing) {
    thresholds.mqtt_latency_p99 = [`value<${p.p99_ms}`];
    // A generator that cannot keep up fails the run instead of reporting
    // its own limit as the broker's.
    thresholds.mqtt_rate_achieved_ratio = ['value>=0.95'];
    // Messages not sent on schedule (more than max_lag late): the target
    // rate was not reached, however close the achieved ratio.
    thresholds.mqtt_missed_sends = ['count==0'];
    thresholds.mqtt_publish_failures = ['count==0'];
    // Publishes the broker refused (PUBACK/PUBREC reason >= 0x80).
    thresholds.mqtt_publish_rejected = ['count==0'];
    // An ack outside the QoS flow (a PUBACK to QoS 2): the broker does not
    // give the QoS the run is named after.
    thresholds.mqtt_protocol_errors = ['count==0'];
    // Loss can be judged here only when this process sees every stream.
    if (p.qos >= 1 && p.segment.count === 1) thresholds.mqtt_lost = ['count==0'];
  }
  // k6 passes a threshold whose metric never had a sample (a p99 bound when
  // no message arrived): run() counts such metrics here, failing the run.
  thresholds.mqtt_thresholds_without_samples = ['count==0'];
  const options = {
    tags: { scenario: name, broker: p.broker },
    scenarios: {
      // The planned length (and a little for the connections), not a day,
      // so the progress line tells the truth. The graceful stop holds what
      // may come on top: each step's wait for its last acks (5 s), the
      // drain of the last messages (up to 120 s) and the close.
      [name]: {
        executor: 'per-vu-iterations', vus: 1, iterations: 1,
        maxDuration: `${p.planned_s + 10}s`, gracefulStop: `${150 + 5 * p.planned_steps}s`,
      },
    },
    thresholds,
    setupTimeout: '60s',
  };

  // setup fixes the run id once for the test and reserves its result file:
  // a random part keeps generators started in the same second apart, and
  // a RUN_ID whose file exists stops here, before any connection.
  function setup() {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
    const runId = p.run_id || `${name}-${p.broker}-${stamp}-${mqtt.randomId().slice(0, 6)}`;
    mqtt.claimResult(p.results_dir, runId);
    // Client ids differ between generator processes: a broker takes an id
    // that connects again away from the connection that had it, so two
    // runs on one broker would keep disconnecting each other.
    return { run_id: runId, started_at: new Date().toISOString(), client_prefix: mqtt.randomId().slice(0, 6) };
  }

  async function run(data) {
    exec.vu.metrics.tags.run_id = data.run_id;
    mqtt.note('params', p);
    // The extension's status line (every 10 s) shows progress against these.
    mqtt.setPlan({ duration: `${p.planned_s}s`, connections: atOnce });
    const groups = [];
    try {
      await runFlows(Object.assign({}, p, { client_prefix: data.client_prefix }), flows, groups);
    } catch (e) {
      exec.test.abort(`${name}: ${e}`);
    } finally {
      groups.forEach((g) => g.close());
      mqtt.checkSamples(Object.keys(thresholds));
    }
  }

  return { options, setup, run, handleSummary: (data) => summary(data, p, flows) };
}

// withPrefix puts TOPIC_PREFIX in front of a flow's topics (after
// $share/<group>/ for shared subscriptions).
function withPrefix(f, prefix) {
  if (!prefix) return f;
  const add = (t) => t.replace(/^(\$share\/[^/]+\/)?/, (m) => m + prefix);
  const subs = f.subTopics === undefined ? undefined : [].concat(f.subTopics).map(add);
  return Object.assign({}, f, { pubTopic: f.pubTopic && add(f.pubTopic), subTopics: subs });
}

function common(p, url) {
  return { url, version: p.version, keepalive: p.keepalive, clean_session: p.clean_session, session_expiry: p.session_expiry,
    connect_rate: p.connect_rate, connect_timeout: '30s' };
}

// openGroups makes one group per flow for this process's slice of
// clients(f), connects it, and notes how that went (null: no clients here).
async function openGroups(p, flows, groups, role, clients, make) {
  const out = [];
  for (const f of flows) {
    const s = slice(clients(f), p.segment);
    let g = null;
    if (s.count > 0) {
      g = make(f, s);
      groups.push(g);
      // A group whose connect() rejects (no connection opened, or the
      // broker refused what the run needs: a QoS, shared subscriptions)
      // keeps the error in its note for the result's diagnosis; the counts
      // are in the counters.
      const key = `connect_${role}_${f.name}`;
      mqtt.note(key, await g.connect().catch((e) => {
        mqtt.note(key, { error: String(e) });
        throw e;
      }));
    }
    out.push(g);
  }
  return out;
}

// Subscribers connect first: a message published before its subscriber
// exists would count as lost.
// A $share/ filter the broker does not serve (announced, or a probe that
// does not come back) rejects connect(): the hint names this run's knobs.
async function connectSubscribers(p, flows, groups) {
  try {
    return await openGroups(p, flows, groups, 'sub', (f) => f.subscribers, (f, s) => new mqtt.SubscriberGroup(
      Object.assign(common(p, f.subUrl || p.url), {
        count: s.count, id_base: (f.subBase || 0) + s.base, topic: f.subTopics, qos: p.qos,
        client_id: `${p.client_prefix}-${f.name}-sub-{i}`, read_buffer: 16384, accept_downgrade: p.accept_downgrade,
      })));
  } catch (e) {
    if (!/shared subscriptions/.test(String(e))) throw e;
    const alt = p.version === '5' ? 'a broker configured with shared subscriptions' : 'MQTT_VERSION=5';
    throw new Error(`${e} (MQTT_VERSION=${p.version}: try ${alt}, or a scenario without shared subscriptions such as p2p or fanout)`);
  }
}

// connectPublishers opens each flow's publishers. A payload sweep makes a
// new set per payload size (round k), with their own publisher ids.
function connectPublishers(p, flows, groups, payload, round) {
  return openGroups(p, flows, groups, 'pub', (f) => f.publishers, (f, s) => new mqtt.PublisherGroup(
    Object.assign(common(p, f.pubUrl || p.url), {
      count: s.count, id_base: (f.pubBase || 0) + round * f.publishers + s.base, topic: f.pubTopic, qos: p.qos,
      payload_size: payload, client_id: `${p.client_prefix}-${f.name}-pub-{i}`,
    })));
}

// The run's steps: STEPS, a payload sweep, or RATE held for DURATION.
function plan(p) {
  if (p.steps) return p.steps;
  if (p.payloads) return p.payloads.map((payload) => ({ rate: p.rate, duration: p.duration, payload }));
  return [{ rate: p.rate, duration: p.duration }];
}

async function runFlows(p, flows, groups) {
  const subs = await connectSubscribers(p, flows, groups);
  const active = flows.filter((f) => slice(f.publishers, p.segment).count > 0).length;
  if (active === 0) {
    // Connection scenario: hold the connections for DURATION.
    await new Promise((resolve) => setTimeout(resolve, env.seconds(p.duration) * 1000));
    return;
  }
  const steps = [];
  const sent = flows.map(() => 0);
  let pubs = null;
  let round = 0;
  for (const st of plan(p)) {
    if (!pubs || st.payload) {
      if (pubs) pubs.forEach((g) => g && g.close());
      pubs = await connectPublishers(p, flows, groups, st.payload || p.payload, round++);
    }
    const started = Date.now();
    stepRate.add(st.rate);
    // Each flow publishes its share; each process its segment's share.
    const results = await Promise.all(pubs.map((g) =>
      g ? g.publish({ rate: st.rate / active / p.segment.count, duration: st.duration }) : null));
    // What the broker refused never reaches a subscriber: not expected.
    results.forEach((r, i) => { sent[i] += r ? r.sent - r.rejected : 0; });
    const sum = (k) => results.reduce((n, r) => n + (r ? r[k] : 0), 0);
    steps.push({ rate: st.rate, duration: st.duration, payload: st.payload || p.payload, start: started, end: Date.now(),
      sent: sum('sent'), target_rate: sum('target_rate'), achieved_rate: sum('achieved_rate'),
      failed: sum('failed'), window_full: sum('window_full'), missed: sum('missed'), missed_window: sum('missed_window'),
      rejected: sum('rejected') });
    mqtt.note('steps', steps);
  }
  stepRate.add(0);
  await drain(p, flows, subs, sent);
}

// drain waits for the last messages: exactly the expected number when this
// process sees every stream, else until the flow goes quiet.
function drain(p, flows, subs, sent) {
  return Promise.all(subs.map((g, i) => {
    if (!g) return null;
    const f = flows[i];
    const expected = p.segment.count === 1 && f.fanout ? sent[i] * f.fanout : 0;
    return g.drain({ expected, idle: '3s', timeout: '120s' }).then((s) => mqtt.note(`delivery_${f.name}`, s));
  }));
}
