// One runner for every scenario: a scenario file only describes its workload
// (clients, topics, rates) as flows, and this turns it into k6 options with
// thresholds, a setup that fixes the run id, the load itself and the result.
//
// A flow is { name, publishers, subscribers, pubTopic, subTopics, fanout,
// pubBase, subBase, pubUrl, subUrl }: publishers send to pubTopic (a template
// such as 'test/{i}'), subscribers subscribe to subTopics, and each message
// published is expected `fanout` times at the subscribers.
import exec from 'k6/execution';
import { Counter, Gauge } from 'k6/metrics';
import mqtt from 'k6/x/mqtt';
import internal from 'k6/x/mqtt/internal';
import * as env from './env.js';
import { instanceSuffix, summary } from './summary.js';

const stepRate = new Gauge('mqtt_step_rate'); // step boundaries, for annotations
// Verdicts that hold whatever this instance's share: thresholds are fixed
// before k6 tells a script its execution segment, so they cannot name the
// share's counts. Planned connections never opened:
const connectsMissing = new Counter('mqtt_connects_missing');
// Flows that publish to subscribers here, of which these received nothing:
const nothingReceived = new Counter('mqtt_nothing_received');
// Publish steps whose achieved rate fell below 95% of their target: a
// counter, 0 where nothing publishes (a gauge without a sample fails).
const rateShortfalls = new Counter('mqtt_rate_shortfalls');

// The project's reports/raw, wherever k6 is started (`k6 run fanin.js` in
// k6/scenarios), so that scripts/report.sh finds the result: resolved from
// this file, not from the working directory.
const RESULTS_DIR = decodeURIComponent(import.meta.resolve('../../reports/raw').replace(/^file:\/\//, ''))
  .replace(/^\/([A-Za-z]:)/, '$1');

// KNOWN are the parameters params() reads (and k6's own K6_ variables are
// never near them).
const KNOWN = ['SCALE', 'BROKER', 'MQTT_URL', 'MQTT_URL_B', 'MQTT_VERSION', 'QOS', 'PAYLOAD', 'PUBLISHERS',
  'SUBSCRIBERS', 'RATE', 'DURATION', 'CONNECT_RATE', 'KEEPALIVE', 'P99_MS', 'STEPS', 'PAYLOADS', 'MAX_INSTANCES',
  'LOCAL_ADDRESS', 'RESULTS_DIR', 'SEARCH_ID', 'TOPIC_PREFIX', 'ACCEPT_QOS_DOWNGRADE', 'RUN_ID', 'CLEAN_SESSION', 'SESSION_EXPIRY',
  'STRICT_ORDER'];

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
    // The scenario's VUs: k6 splits them over the instances of a
    // segmented test, and each instance's first VU runs its share, so at
    // most this many instances get one.
    max_instances: env.number('MAX_INSTANCES', 32, { min: 1, integer: true, max: 1000, why: 'each is an idle VU in every instance' }),
    scale,
    results_dir: env.text('RESULTS_DIR', RESULTS_DIR),
    // Source addresses of this generator's connections (127.0.0.2, a list
    // or 127.0.0.2-127.0.0.9): past ~28,000 connections from one address
    // to one broker address, the ephemeral ports run out.
    local_address: env.localAddress('LOCAL_ADDRESS'),
    run_id: env.runId('RUN_ID'),
    // The capacity search this run is a trial of (scripts/capacity.sh): a
    // tag on every sample, so that dashboards select a whole search.
    search_id: env.runId('SEARCH_ID'),
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
    // A delivery out of order (per topic, QoS >= 1, non-shared: MQTT
    // section 4.6) fails the run instead of only being named.
    strict_order: env.choice('STRICT_ORDER', 'false', ['true', 'false']) === 'true',
  };
  // Once, not once per VU (the scenario has MAX_INSTANCES of them): k6
  // reads the options in a VU of its own, numbered 0.
  if (__VU === 0) env.warnUnknown(name, KNOWN);
  env.gone('SEGMENT', 'k6 splits the load itself: run every instance with --execution-segment i/n ' +
    '--execution-segment-sequence 0,1/n,...,1 and the same RUN_ID, or use scripts/bench.sh --instances n (README: Several generators)');
  if (p.payloads && p.payloads.some((x) => !Number.isInteger(x) || x < 16)) {
    throw new Error(`${name}: PAYLOADS=${__ENV.PAYLOADS} is invalid: expected sizes in bytes >= 16, e.g. 128,1024,4096`);
  }
  env.check(name);
  if (p.strict_order && p.qos < 1) {
    throw new Error(`${name}: STRICT_ORDER=true is invalid with QOS=${p.qos}: MQTT requires ordered delivery only at ` +
      'QoS 1 and 2 (section 4.6); set QOS=1 or leave STRICT_ORDER unset');
  }
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

// scenario(name, defaults, workload): workload(params) returns the flows.
export function scenario(name, defaults, workload) {
  const p = params(name, defaults);
  const flows = workload(p).map((f) => withPrefix(f, p.topic_prefix));
  const publishing = flows.some((f) => f.publishers > 0);
  if (p.strict_order && flows.some((f) => [].concat(f.subTopics || []).some((t) => t.startsWith('$share/')))) {
    throw new Error(`${name}: STRICT_ORDER=true is invalid for shared subscriptions: a share group spreads a topic ` +
      'over its subscribers, and MQTT does not require order across them (MQTT 5.0 section 4.8.2); use a scenario ' +
      'without $share/ (p2p, fanout) or leave STRICT_ORDER unset');
  }
  if (!flows.some((f) => f.publishers + f.subscribers > 0)) {
    throw new Error(`${name}: PUBLISHERS=${p.publishers} and SUBSCRIBERS=${p.subscribers} leave no client to run: ` +
      'give at least one of them a value > 0, or leave them unset for the scenario\'s own numbers');
  }
  // Thresholds hold for any instance's share (k6 settles them before it
  // tells a script its segment) and for the merge of every instance's
  // result, which judges them again on the merged counts.
  const thresholds = {
    mqtt_connect_failures: ['count==0'],
    mqtt_connects_missing: ['count==0'],
  };
  if (publishing && flows.some((f) => f.fanout > 0 && f.subscribers > 0)) {
    thresholds.mqtt_nothing_received = ['count==0'];
  }
  if (publishing) {
    thresholds.mqtt_latency_p99 = [`value<${p.p99_ms}`];
    // A generator that cannot keep up fails the run instead of reporting
    // its own limit as the broker's.
    thresholds.mqtt_rate_shortfalls = ['count==0'];
    // Messages not sent on schedule (more than max_lag late): the target
    // rate was not reached, however close the achieved ratio.
    thresholds.mqtt_missed_sends = ['count==0'];
    thresholds.mqtt_publish_failures = ['count==0'];
    // Publishes the broker refused (PUBACK/PUBREC reason >= 0x80).
    thresholds.mqtt_publish_rejected = ['count==0'];
    // An ack outside the QoS flow (a PUBACK to QoS 2): the broker does not
    // give the QoS the run is named after.
    thresholds.mqtt_protocol_errors = ['count==0'];
    // What this instance can judge; the merge of a segmented run's results
    // counts every stream exactly.
    if (p.qos >= 1) thresholds.mqtt_lost = ['count==0'];
    if (p.strict_order) thresholds.mqtt_out_of_order = ['count==0'];
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
      // MAX_INSTANCES VUs, which k6 splits over a segmented test's
      // instances: each instance's first VU runs the instance's share (one
      // VU drives thousands of connections), the others end at once.
      [name]: {
        executor: 'per-vu-iterations', vus: p.max_instances, iterations: 1,
        maxDuration: `${p.planned_s + 10}s`, gracefulStop: `${150 + 5 * p.planned_steps}s`,
      },
    },
    thresholds,
    setupTimeout: '60s',
  };

  // setup fixes the run id once for the test and reserves this instance's
  // result file: a random part keeps generators started in the same
  // second apart, and a RUN_ID whose file exists stops here, before any
  // connection. The instances of a segmented test must share the run id,
  // so there it is the user's to give.
  function setup() {
    const seg = internal.segment();
    if (seg.count > 1 && !p.run_id) {
      throw new Error(`${name}: RUN_ID is required with --execution-segment (this is ${seg.segment} of ` +
        `${seg.sequence}): give every instance the same one, e.g. -e RUN_ID=${name}-run1, so that ` +
        '`k6 x mqtt-merge RUN_ID` finds their results');
    }
    // k6 stripes the scenario's VUs over the sequence: an instance that
    // gets none would run nothing, and its share of the load with it.
    if (internal.share(p.max_instances).count < 1) {
      throw new Error(`${name}: this instance (${seg.segment} of ${seg.sequence}) gets none of the scenario's ` +
        `MAX_INSTANCES=${p.max_instances} VUs, so its share would not run: set -e MAX_INSTANCES to at least the ` +
        'number of instances (for unequal segments, their common denominator), on k6 archive too');
    }
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
    const runId = p.run_id || `${name}-${p.broker}-${stamp}-${internal.randomId().slice(0, 6)}`;
    internal.claimResult(p.results_dir, runId, instanceSuffix(seg));
    // Client ids differ between generator processes: a broker takes an id
    // that connects again away from the connection that had it, so two
    // runs on one broker would keep disconnecting each other.
    return { run_id: runId, started_at: new Date().toISOString(), client_prefix: internal.randomId().slice(0, 6) };
  }

  async function run(data) {
    if (exec.vu.idInInstance !== 1) return; // see options.scenarios
    // On the VU, not only in options.tags: a `k6 run --tag` of the user's
    // replaces options.tags, and these must stay on every sample.
    exec.vu.metrics.tags.run_id = data.run_id;
    exec.vu.metrics.tags.broker = p.broker;
    if (p.search_id) exec.vu.metrics.tags.search = p.search_id;
    const seg = internal.segment();
    // This instance's share of each flow's clients, as k6 splits them.
    const shares = flows.map((f) => ({ pub: internal.share(f.publishers), sub: internal.share(f.subscribers) }));
    const rounds = p.payloads ? p.payloads.length : 1;
    // Planned connections (a payload sweep opens its publishers again per
    // size), and those open at once (a sweep closes one size's first).
    const planned = shares.reduce((n, s) => n + s.sub.count + s.pub.count * rounds, 0);
    const atOnce = shares.reduce((n, s) => n + s.sub.count + s.pub.count, 0);
    internal.note('params', p);
    internal.note('instance', seg);
    // The extension's status line (every 10 s) shows progress against these.
    internal.setPlan({ duration: `${p.planned_s}s`, connections: atOnce, instances: seg.count });
    const groups = [];
    try {
      await runFlows(Object.assign({}, p, { client_prefix: data.client_prefix }), flows, shares, seg, groups);
      // A run stopped early (a signal, an abort) never gets here: its
      // result says so, and it does not pass.
      internal.note('completed', true);
    } catch (e) {
      exec.test.abort(`${name}: ${e}`);
    } finally {
      groups.forEach((g) => g.close());
      const c = mqtt.stats().counters;
      connectsMissing.add(Math.max(0, planned - c.mqtt_connects));
      rateShortfalls.add(internal.rateShortfalls(internal.notes().steps || []));
      nothingReceived.add(flows.filter((f, i) => f.fanout > 0 && f.publishers > 0 && shares[i].sub.count > 0 &&
        !((internal.notes()[`delivery_${f.name}`] || {}).received > 0)).length);
      // Metrics one instance of several has nothing to judge by (no
      // subscribers here: no latency) are the merge's to judge.
      const here = Object.keys(thresholds).filter((m) => seg.count === 1 || judgedHere(m, flows, shares));
      internal.note('judged_here', here);
      internal.checkSamples(here);
    }
  }

  return { options, setup, run, handleSummary: (data) => summary(data, p, flows) };
}

// judgedHere: whether this instance's share of a segmented test gives
// metric m samples. An instance whose share is empty (a small test over
// many instances) has nothing to judge: the merge judges the run.
function judgedHere(m, flows, shares) {
  const has = (k) => shares.some((s) => s[k].count > 0);
  if (!has('pub') && !has('sub')) return m === 'mqtt_connects_missing' || m === 'mqtt_nothing_received';
  if (m === 'mqtt_latency_p99') return has('sub') && flows.some((f, i) => f.publishers > 0 && shares[i].sub.count > 0);
  return true;
}

// withPrefix puts TOPIC_PREFIX in front of a flow's topics (after
// $share/<group>/ for shared subscriptions).
function withPrefix(f, prefix) {
  if (!prefix) return f;
  const add = (t) => t.replace(/^(\$share\/[^/]+\/)?/, (m) => m + prefix);
  const subs = f.subTopics === undefined ? undefined : [].concat(f.subTopics).map(add);
  return Object.assign({}, f, { pubTopic: f.pubTopic && add(f.pubTopic), subTopics: subs });
}

// common: what every group has. Each instance opens its share of the
// clients at its share of CONNECT_RATE, so that all end their ramps together.
function common(p, url, f) {
  const c = { url, version: p.version, keepalive: p.keepalive, clean_session: p.clean_session, session_expiry: p.session_expiry,
    connect_rate: p.connect_rate * p.connect_share, connect_timeout: '30s', flow: f.name };
  if (p.local_address) c.local_address = p.local_address;
  return c;
}

// openGroups makes one group per flow for this instance's share of the
// flow's clients (shares[i][role]), connects it, and notes how that went
// (null: no clients here).
async function openGroups(p, flows, shares, groups, role, make) {
  const out = [];
  for (const [i, f] of flows.entries()) {
    const s = shares[i][role];
    let g = null;
    if (s.count > 0) {
      g = make(f, s);
      groups.push(g);
      // A group whose connect() rejects (no connection opened, or the
      // broker refused what the run needs: a QoS, shared subscriptions)
      // keeps the error in its note for the result's diagnosis; the counts
      // are in the counters.
      const key = `connect_${role}_${f.name}`;
      internal.note(key, await g.connect().catch((e) => {
        internal.note(key, { error: String(e) });
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
async function connectSubscribers(p, flows, shares, groups) {
  try {
    return await openGroups(p, flows, shares, groups, 'sub', (f, s) => new mqtt.SubscriberGroup(
      Object.assign(common(p, f.subUrl || p.url, f), {
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
function connectPublishers(p, flows, shares, groups, payload, round) {
  return openGroups(p, flows, shares, groups, 'pub', (f, s) => new mqtt.PublisherGroup(
    Object.assign(common(p, f.pubUrl || p.url, f), {
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

// How long the instances of a segmented test give each other to connect
// their subscribers before any publishes: they start together (the
// launcher, k6-operator), but not to the millisecond, and a message sent
// before its subscriber exists is lost.
const INSTANCES_SETTLE_MS = 5000;

async function runFlows(p, flows, shares, seg, groups) {
  const started = Date.now();
  const clients = (f) => f.publishers + f.subscribers;
  const here = shares.reduce((n, s) => n + s.pub.count + s.sub.count, 0);
  p.connect_share = here / Math.max(1, flows.reduce((n, f) => n + clients(f), 0));
  const subs = await connectSubscribers(p, flows, shares, groups);
  // Each flow's rate is split over the flows that publish, and within a
  // flow over the instances by their share of its publishers.
  const publishing = flows.filter((f) => f.publishers > 0).length;
  const rateShare = flows.map((f, i) => (f.publishers > 0 ? shares[i].pub.count / f.publishers / publishing : 0));
  if (publishing > 0 && !shares.some((s) => s.pub.count > 0)) {
    // Subscribers only here, of a test whose publishers are other
    // instances': wait out the planned run, then drain until quiet.
    const planned = started + p.planned_s * 1000 + INSTANCES_SETTLE_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, planned - Date.now())));
    await drain(flows, subs, flows.map(() => 0), seg);
    return;
  }
  if (publishing === 0) {
    // Connection scenario: hold the connections for DURATION.
    await new Promise((resolve) => setTimeout(resolve, env.seconds(p.duration) * 1000));
    return;
  }
  const steps = [];
  const sent = flows.map(() => 0);
  let pubs = null;
  let round = 0;
  if (seg.count > 1) await new Promise((resolve) => setTimeout(resolve, INSTANCES_SETTLE_MS));
  for (const st of plan(p)) {
    if (!pubs || st.payload) {
      if (pubs) pubs.forEach((g) => g && g.close());
      pubs = await connectPublishers(p, flows, shares, groups, st.payload || p.payload, round++);
    }
    const started = Date.now();
    stepRate.add(st.rate);
    const results = await Promise.all(pubs.map((g, i) =>
      g ? g.publish({ rate: st.rate * rateShare[i], duration: st.duration }) : null));
    // What the broker refused never reaches a subscriber: not expected.
    results.forEach((r, i) => { sent[i] += r ? r.sent - r.rejected : 0; });
    const sum = (k) => results.reduce((n, r) => n + (r ? r[k] : 0), 0);
    steps.push({ rate: st.rate, duration: st.duration, payload: st.payload || p.payload, start: started, end: Date.now(),
      sent: sum('sent'), target_rate: sum('target_rate'), achieved_rate: sum('achieved_rate'),
      failed: sum('failed'), window_full: sum('window_full'), missed: sum('missed'), missed_window: sum('missed_window'),
      rejected: sum('rejected'), unacked: sum('unacked'),
      // Until the last ack came in: the broker's side, apart from the send rate.
      ack_seconds: results.reduce((n, r) => Math.max(n, r ? r.ack_seconds : 0), 0) });
    internal.note('steps', steps);
  }
  stepRate.add(0);
  await drain(flows, subs, sent, seg);
}

// drain waits for the last messages: exactly the expected number when this
// instance sees every stream, else until the flow goes quiet.
function drain(flows, subs, sent, seg) {
  return Promise.all(subs.map((g, i) => {
    if (!g) return null;
    const f = flows[i];
    const expected = seg.count === 1 && f.fanout ? sent[i] * f.fanout : 0;
    return g.drain({ expected, idle: '3s', timeout: '120s' }).then((s) => internal.note(`delivery_${f.name}`, s));
  }));
}
