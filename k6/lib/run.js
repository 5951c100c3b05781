// The run itself: each flow's groups opened for this instance's share
// (subscribers first), the publish steps, and the drain of the last
// messages. The extension keeps what each group's connect and drain found
// for the result; the steps are the scenario's to hand over (addStep).
import { Gauge } from 'k6/metrics';
import mqtt from 'k6/x/mqtt';
import internal from 'k6/x/mqtt/internal';
import * as env from './env.js';
import { isTLS, plan } from './params.js';

const stepRate = new Gauge('mqtt_step_rate'); // step boundaries, for annotations

// common: what every group has. Each instance opens its share of the
// clients at its share of CONNECT_RATE, so that all end their ramps together.
function common(p, url, f) {
  const c = { url, version: p.version, keepalive: p.keepalive, clean_session: p.clean_session, session_expiry: p.session_expiry,
    connect_rate: p.connect_rate * p.connect_share, connect_timeout: '30s', flow: f.name };
  if (p.local_address) c.local_address = p.local_address;
  // Each group's counters carry its flow, so that a time series (InfluxDB,
  // Grafana's "Messages by part") tells a composite's parts apart.
  c.tags = { flow: f.name };
  if (isTLS(url)) c.tls = tlsOptions(p);
  return c;
}

// tlsOptions: TLS_CA, TLS_CERT, TLS_KEY and TLS_SERVER_NAME as the tls option.
function tlsOptions(p) {
  const t = {};
  if (p.tls_ca) t.ca = p.tls_ca;
  if (p.tls_cert) Object.assign(t, { cert: p.tls_cert, key: p.tls_key });
  if (p.tls_server_name) t.server_name = p.tls_server_name;
  return t;
}

// openGroups makes one group per flow for this instance's share of the
// flow's clients (shares[i][role]) and connects it (null: no clients here).
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
      // stops the run; the extension keeps the error for the diagnosis.
      await g.connect();
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
      }, template(p) ? { payload_template: template(p) } : {})));
  } catch (e) {
    if (!/shared subscriptions/.test(String(e))) throw e;
    const alt = p.version === '5' ? 'a broker configured with shared subscriptions' : 'MQTT_VERSION=5';
    throw new Error(`${e} (MQTT_VERSION=${p.version}: try ${alt}, or a scenario without shared subscriptions such as p2p or fanout)`);
  }
}

// connectPublishers opens each flow's publishers. A payload sweep makes a
// new set per payload size (round k), with their own publisher ids.
function connectPublishers(p, flows, shares, groups, payload, round) {
  const body = template(p) ? { payload_template: template(p) } : { payload_size: payload };
  return openGroups(p, flows, shares, groups, 'pub', (f, s) => new mqtt.PublisherGroup(
    Object.assign(common(p, f.pubUrl || p.url, f), body, {
      count: s.count, id_base: (f.pubBase || 0) + round * f.publishers + s.base, topic: f.pubTopic, qos: p.qos,
      client_id: `${p.client_prefix}-${f.name}-pub-{i}`,
    })));
}

// The payload template in use: not in a payload sweep, whose sizes are
// filler (the subscribers must then not look for a text header).
function template(p) {
  return p.payloads && !p.steps ? undefined : p.payload_template;
}

// A template's steady size (the widest of the flows' groups: {client} is
// as wide as the longest client id) replaces PAYLOAD in the steps (the
// extension replaces it in the result's parameters).
function templateSize(p, pubs) {
  const size = pubs.reduce((n, g) => Math.max(n, g ? g.stats().payload_size : 0), 0);
  if (size > 0) p.payload = size;
}

// How long the instances of a segmented test give each other to connect
// their subscribers before any publishes: they start together (the
// launcher, k6-operator), but not to the millisecond, and a message sent
// before its subscriber exists is lost.
const INSTANCES_SETTLE_MS = 5000;

export async function runFlows(p, flows, shares, seg, groups) {
  const started = Date.now();
  const clients = (f) => f.publishers + f.subscribers;
  const here = shares.reduce((n, s) => n + s.pub.count + s.sub.count, 0);
  p.connect_share = here / Math.max(1, flows.reduce((n, f) => n + clients(f), 0));
  const subs = await connectSubscribers(p, flows, shares, groups);
  // Each flow's rate is split over the flows that publish, and within a
  // flow over the instances by their share of its publishers.
  // A flow may give its own rate (a composite's parts: lib/composite.js),
  // its weight in each step's rate.
  const publishing = flows.filter((f) => f.publishers > 0).length;
  const weighed = flows.reduce((n, f) => n + (f.publishers > 0 && f.rate > 0 ? f.rate : 0), 0);
  const weight = (f) => (weighed > 0 ? (f.rate || 0) / weighed : 1 / publishing);
  const rateShare = flows.map((f, i) => (f.publishers > 0 ? (shares[i].pub.count / f.publishers) * weight(f) : 0));
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
  const sent = flows.map(() => 0);
  let pubs = null;
  let round = 0;
  if (seg.count > 1) await new Promise((resolve) => setTimeout(resolve, INSTANCES_SETTLE_MS));
  for (const st of plan(p)) {
    if (!pubs || st.payload) {
      if (pubs) pubs.forEach((g) => g && g.close());
      pubs = await connectPublishers(p, flows, shares, groups, st.payload || p.payload, round++);
      if (template(p)) templateSize(p, pubs);
    }
    const started = Date.now();
    stepRate.add(st.rate);
    const results = await Promise.all(pubs.map((g, i) =>
      g ? g.publish({ rate: st.rate * rateShare[i], duration: st.duration }) : null));
    // What the broker refused never reaches a subscriber: not expected.
    results.forEach((r, i) => { sent[i] += r ? r.sent - r.rejected : 0; });
    const sum = (k) => results.reduce((n, r) => n + (r ? r[k] : 0), 0);
    internal.addStep({ rate: st.rate, duration: st.duration, payload: st.payload || p.payload, start: started, end: Date.now(),
      sent: sum('sent'), target_rate: sum('target_rate'), achieved_rate: sum('achieved_rate'),
      failed: sum('failed'), window_full: sum('window_full'), missed: sum('missed'), missed_window: sum('missed_window'),
      rejected: sum('rejected'), unacked: sum('unacked'),
      // Until the last ack came in: the broker's side, apart from the send rate.
      ack_seconds: results.reduce((n, r) => Math.max(n, r ? r.ack_seconds : 0), 0) });
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
    return g.drain({ expected, idle: '3s', timeout: '120s' });
  }));
}
