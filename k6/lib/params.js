// The scenarios' parameters: one table of every environment variable a
// scenario reads (its name, its key in the result's `parameters`, how it is
// read over the scenario's defaults d), from which the known-variable list
// for near-miss warnings is derived, and the checks across them.
import mqtt from 'k6/x/mqtt';
import * as env from './env.js';
import { addedMs } from './network.js';
import { RESULTS_DIR, refused } from './refusal.js';

const bool = (name, def) => env.choice(name, def, ['true', 'false']) === 'true';

// [variable, key, read(defaults)], read in this order.
const TABLE = [
  ['SCALE', 'scale', () => env.number('SCALE', 1, { min: 0, above: true })],
  ['BROKER', 'broker', () => env.text('BROKER', 'mosquitto')],
  ['MQTT_URL', 'url', (d) => env.url('MQTT_URL', d.url || 'mqtt://127.0.0.1:1883')],
  // TLS (mqtts://, wss://): file paths, by default the stack's generated
  // files (scripts/init/tls.sh) where they exist; checked before any connection.
  ['TLS_CA', 'tls_ca', () => env.tlsFile('TLS_CA', 'ca.pem')],
  ['TLS_CERT', 'tls_cert', () => env.tlsFile('TLS_CERT', 'client.pem')],
  ['TLS_KEY', 'tls_key', () => env.tlsFile('TLS_KEY', 'client.key')],
  ['TLS_SERVER_NAME', 'tls_server_name', () => env.text('TLS_SERVER_NAME', undefined)],
  ['MQTT_URL_B', 'url_b', (d) => (d.bridged ? env.url('MQTT_URL_B', 'mqtt://127.0.0.1:1884') : undefined)],
  ['MQTT_VERSION', 'version', (d) => env.choice('MQTT_VERSION', d.version || '3.1.1', ['3.1.1', '5', '5.0']).replace('5.0', '5')],
  ['QOS', 'qos', (d) => Number(env.choice('QOS', d.qos ?? 1, [0, 1, 2]))],
  ['PAYLOAD', 'payload', (d) => env.number('PAYLOAD', d.payload ?? 16, {
    min: mqtt.limits.payload_min, integer: true, max: mqtt.limits.payload, why: 'the largest MQTT packet, less room for the topic',
  })],
  ['PUBLISHERS', 'publishers', (d) => env.number('PUBLISHERS', d.publishers ?? 0, { integer: true })],
  ['SUBSCRIBERS', 'subscribers', (d) => env.number('SUBSCRIBERS', d.subscribers ?? 0, { integer: true })],
  // A composite's background connections (lib/composite.js): open, idle.
  ['BACKGROUND', 'background', (d) => (d.composite ? env.number('BACKGROUND', d.background ?? 0, { integer: true }) : undefined)],
  ['RATE', 'rate', (d) => env.number('RATE', d.rate ?? 0, {
    max: mqtt.limits.rate, why: "the extension's limit per process: run more generator processes",
  })],
  ['DURATION', 'duration', (d) => env.duration('DURATION', d.duration || '30m')],
  ['CONNECT_RATE', 'connect_rate', (d) => env.number('CONNECT_RATE', d.connectRate ?? 1000, { above: true })],
  ['KEEPALIVE', 'keepalive', (d) => env.number('KEEPALIVE', d.keepalive ?? 300, {
    integer: true, max: mqtt.limits.keepalive, why: 'a 16-bit field in CONNECT',
  })],
  ['P99_MS', 'p99_ms', (d) => env.number('P99_MS', d.p99Ms ?? 100, { above: true })],
  ['STEPS', 'steps', () => env.steps('STEPS')],
  // Each message filled from a template (load/payload.go), at its steady
  // size; the latency and sequence header goes where {header} is, else
  // binary before it.
  ['PAYLOAD_TEMPLATE', 'payload_template', () => env.payloadTemplate('PAYLOAD_TEMPLATE')],
  ['PAYLOADS', 'payloads', (d) => (d.payloads ? env.text('PAYLOADS', d.payloads.join(',')).split(',').map(Number) : undefined)],
  // The scenario's VUs: k6 splits them over the instances of a segmented
  // test, and each instance's first VU runs its share, so at most this
  // many instances get one.
  ['MAX_INSTANCES', 'max_instances', () => env.number('MAX_INSTANCES', 32, {
    min: 1, integer: true, max: 1000, why: 'each is an idle VU in every instance',
  })],
  ['RESULTS_DIR', 'results_dir', () => env.text('RESULTS_DIR', RESULTS_DIR)],
  // Source addresses of this generator's connections (127.0.0.2, a list
  // or 127.0.0.2-127.0.0.9): past ~28,000 connections from one address
  // to one broker address, the ephemeral ports run out.
  ['LOCAL_ADDRESS', 'local_address', () => env.localAddress('LOCAL_ADDRESS')],
  ['RUN_ID', 'run_id', () => env.runId('RUN_ID')],
  // The capacity search this run is a trial of (scripts/capacity.sh): a
  // tag on every sample, so that dashboards select a whole search.
  ['SEARCH_ID', 'search_id', () => env.runId('SEARCH_ID')],
  // Isolates concurrent runs on one broker: their topics would otherwise
  // cross (mqttbs uses test/{i} everywhere), and the streams with them.
  ['TOPIC_PREFIX', 'topic_prefix', () => env.topicPrefix('TOPIC_PREFIX')],
  // A broker that grants less than QOS fails the run before load, unless
  // this accepts measuring at the granted level (the result then says so).
  ['ACCEPT_QOS_DOWNGRADE', 'accept_downgrade', () => bool('ACCEPT_QOS_DOWNGRADE', 'false')],
  // Persistent sessions (subscribers and publishers): a broker restart
  // then loses no QoS >= 1 message; the reconnects resume the sessions.
  ['CLEAN_SESSION', 'clean_session', (d) => bool('CLEAN_SESSION', d.cleanSession === false ? 'false' : 'true')],
  ['SESSION_EXPIRY', 'session_expiry', () => env.number('SESSION_EXPIRY', 0, {
    integer: true, max: 4294967295, why: 'a 32-bit field in CONNECT',
  })],
  // A delivery out of order where the verdict judges order
  // (k6/extension/verdict) fails the run instead of only being named.
  ['STRICT_ORDER', 'strict_order', () => bool('STRICT_ORDER', 'false')],
  // A reconnect storm (storm-* scenarios, lib/storm.js): at STORM_AT the
  // Toxiproxy at TOXIPROXY_URL cuts every connection for OUTAGE; all must
  // be back within RECOVERY_S of the path's return. TOXIPROXY_URL=none:
  // the outage comes from elsewhere (a broker restart) and nothing is cut.
  ['TOXIPROXY_URL', 'toxiproxy_url', (d) => (d.storm ? env.text('TOXIPROXY_URL', '') : undefined)],
  ['STORM_AT', 'storm_at', (d) => (d.storm ? env.duration('STORM_AT', d.stormAt) : undefined)],
  ['OUTAGE', 'outage', (d) => (d.storm ? env.duration('OUTAGE', d.outage) : undefined)],
  ['RECOVERY_S', 'recovery_s', (d) => (d.storm ? env.number('RECOVERY_S', d.recoveryS ?? 30, { above: true }) : undefined)],
];

// KNOWN are the variables the table reads (k6's own K6_ variables are
// never near them).
export const KNOWN = TABLE.map(([name]) => name);

// What a scenario leaves unread of the variables a user set: [variable,
// why(p, flows, d)], why being the reason it is ignored here, or false.
const publishes = (flows) => flows.some((f) => f.publishers > 0);
// isTLS: the URL's scheme is one the extension speaks TLS on.
export const isTLS = (url) => /^(mqtts|ssl|tls|wss):/.test(url || '');
const tlsUrl = (p) => [p.url, p.url_b].some(isTLS);
const PARTS = "a composite's parts have their own clients: SCALE shrinks them, BACKGROUND sets the background";
const UNUSED = [
  ...['TLS_CA', 'TLS_CERT', 'TLS_KEY', 'TLS_SERVER_NAME'].map((v) => [v, (p) => !tlsUrl(p) &&
    'MQTT_URL is not a TLS URL (mqtts://, wss://)']),
  ['MQTT_URL_B', (p, flows, d) => !d.bridged && 'only the bridging scenario (bridge-500-500) has a second broker'],
  ['PUBLISHERS', (p, flows, d) => (d.composite ? PARTS : !publishes(flows) && 'this scenario opens connections only (SUBSCRIBERS)')],
  ['SUBSCRIBERS', (p, flows, d) => d.composite && PARTS],
  ['BACKGROUND', (p, flows, d) => !d.composite && 'only the composite scenarios (composite*) have background connections'],
  ['RATE', (p, flows) => (!publishes(flows) ? 'this scenario publishes nothing' : p.steps && 'STEPS gives the rates')],
  ['STEPS', (p, flows) => !publishes(flows) && 'this scenario publishes nothing'],
  ['DURATION', (p, flows) => publishes(flows) && p.steps && 'STEPS gives the durations'],
  ['PAYLOAD', (p, flows, d) => (!publishes(flows) ? 'this scenario publishes nothing'
    : (d.payloads && !p.steps && 'the payload sweep takes its sizes from PAYLOADS')
      || (p.payload_template && 'PAYLOAD_TEMPLATE gives the payload, at its steady size'))],
  ['PAYLOAD_TEMPLATE', (p, flows, d) => (!publishes(flows) ? 'this scenario publishes nothing'
    : d.payloads && !p.steps && 'the payload sweep sends filler of the PAYLOADS sizes')],
  ['PAYLOADS', (p, flows, d) => (!d.payloads ? 'only the payload sweep (payload-1K-1K-20K) reads it; PAYLOAD sets the one size here'
    : p.steps && 'STEPS replaces the sweep')],
];

// warnUnused warns about each variable set that this scenario does not read
// (PAYLOADS=16,abc on p2p.js), as warnUnknown does about near misses.
export function warnUnused(name, p, flows, d) {
  for (const [v, why] of UNUSED) {
    const reason = __ENV[v] !== undefined && __ENV[v] !== '' && why(p, flows, d);
    if (reason) console.warn(`${name}: ${v}=${__ENV[v]} is not used by this scenario: ${reason} (it is ignored)`);
  }
}

// The run's steps: STEPS, a payload sweep, or RATE held for DURATION.
export function plan(p) {
  if (p.steps) return p.steps;
  if (p.payloads) return p.payloads.map((payload) => ({ rate: p.rate, duration: p.duration, payload }));
  return [{ rate: p.rate, duration: p.duration }];
}

// params reads every parameter from the environment over the scenario's defaults.
export function params(name, d) {
  const p = { scenario: name };
  for (const [, key, read] of TABLE) p[key] = read(d);
  // Over an impaired path (scripts/bench.sh --impair), P99_MS is the
  // broker's budget on top of the most delay the profile adds: the bound
  // the threshold, the result and the diagnosis then all apply.
  p.p99_ms += addedMs;
  // Once, not once per VU (the scenario has MAX_INSTANCES of them): k6
  // reads the options in a VU of its own, numbered 0.
  if (__VU === 0) env.warnUnknown(name, KNOWN);
  env.gone('SEGMENT', 'k6 splits the load itself: run every instance with --execution-segment i/n ' +
    '--execution-segment-sequence 0,1/n,...,1 and the same RUN_ID, or use scripts/bench.sh --instances n (README: Several generators)');
  if (p.payloads && p.payloads.some((x) => !Number.isInteger(x) || x < 16)) {
    throw refused(name, `PAYLOADS=${__ENV.PAYLOADS} is invalid: expected sizes in bytes >= 16, e.g. 128,1024,4096`);
  }
  // The stack's TLS files are the defaults of TLS runs only.
  if (!tlsUrl(p)) {
    for (const [v, k] of [['TLS_CA', 'tls_ca'], ['TLS_CERT', 'tls_cert'], ['TLS_KEY', 'tls_key']]) {
      if (__ENV[v] === undefined || __ENV[v] === '') p[k] = undefined;
    }
  }
  env.checkTLS(p);
  env.check(name);
  if (d.tls && !tlsUrl(p)) {
    throw refused(name, `MQTT_URL=${p.url} is invalid for a TLS scenario: it measures TLS connections; give the ` +
      "broker's TLS listener, e.g. mqtts://127.0.0.1:8883 (or conn-tcp-* for plain TCP)");
  }
  if (p.session_expiry > 0 && p.version !== '5') {
    throw refused(name, `SESSION_EXPIRY=${__ENV.SESSION_EXPIRY} is invalid with MQTT_VERSION=${p.version}: the session ` +
      'expiry interval is an MQTT 5 property; under 3.1.1 set CLEAN_SESSION=false to keep sessions, or set MQTT_VERSION=5');
  }
  // What the broker cannot do (its brokers/<name>/broker.toml [capabilities],
  // natively [native.capabilities], which scripts/bench.sh exports as
  // BROKER_MQTT and BROKER_QOS, and the table as BROKER_CAPABILITIES):
  // refused here, before any connection, naming the broker and the capability;
  // the refusal's file names them apart for its caller (refusal.js).
  const lacks = (v, value) => env.text(v, '') !== '' && !env.text(v, '').split(',').includes(String(value));
  const table = env.text('BROKER_CAPABILITIES', 'capabilities');
  const where = `brokers/${p.broker}/broker.toml [${table}]`;
  const refuse = (what, key, has, why) => {
    const message = `${p.broker} lacks ${what} (${where} ${key}: ${has})${why}`;
    throw refused(name, message, { cause: 'broker_lacks', broker: p.broker, lacks: what, facts: where });
  };
  if (lacks('BROKER_MQTT', p.version)) {
    refuse(`MQTT ${p.version}`, 'mqtt', __ENV.BROKER_MQTT,
      p.version === '5' ? ': this scenario needs it (shared subscriptions, MQTT 5 properties); choose p2p or fanout' : '');
  }
  if (lacks('BROKER_QOS', p.qos)) {
    refuse(`QoS ${p.qos}`, 'qos', __ENV.BROKER_QOS,
      ': it grants or answers a lower QoS, which the run would not measure as named; set QOS to one it has');
  }
  if (!p.clean_session && p.version === '5' && p.session_expiry === 0) {
    throw refused(name, `CLEAN_SESSION=false keeps nothing under MQTT 5 without SESSION_EXPIRY: the session ends with ` +
      'the connection; set SESSION_EXPIRY to the seconds the broker should keep it (e.g. 300)');
  }
  // SCALE shrinks the use case's defaults proportionally: fewer clients,
  // each with the load it has in the full use case (per-publisher rate,
  // connection ramp time). PUBLISHERS, SUBSCRIBERS, RATE, STEPS and
  // CONNECT_RATE given explicitly are kept as given.
  const given = (k) => __ENV[k] !== undefined && __ENV[k] !== '';
  const shrink = (k, n) => (given(k) || n === 0 ? n : Math.max(1, Math.round(n * p.scale)));
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
    throw refused(name, `CONNECT_RATE=${p.connect_rate} is too low: opening ${p.publishers + p.subscribers} ` +
      `connections would take ${Math.round(ramp)} s, longer than the run (DURATION=${p.duration}): raise CONNECT_RATE or lengthen DURATION`);
  }
  if (p.publishers > 0 && !(p.rate > 0) && !p.steps) {
    throw refused(name, `RATE=${__ENV.RATE} is invalid: expected messages per second in total, > 0`);
  }
  return p;
}
