// handleSummary: one self-describing result file per run (parameters,
// versions, host, thresholds, counts, latency quantiles, steps and the
// per-second timeline) and a compact text summary. This gathers what the
// run measured; the extension writes the file (its type, its verdicts:
// k6/extension/result). Reports read only these files and InfluxDB.
import mqtt from 'k6/x/mqtt';
import internal from 'k6/x/mqtt/internal';
import { network } from './network.js';

const latencyKinds = {
  pub_to_sub: 'mqtt_latency',
  pub_to_sub_from_intended: 'mqtt_latency_intended',
  send_lag: 'mqtt_send_lag',
  connect: 'mqtt_connect_duration',
  suback: 'mqtt_suback_duration',
  puback: 'mqtt_puback_duration',
  // The parts of connect: the TLS handshake, then CONNECT → CONNACK.
  tls_handshake: 'mqtt_tls_handshake_duration',
  connack: 'mqtt_connack_duration',
  // From a connection's drop to its reconnect's CONNACK: what an outage cost.
  reconnect: 'mqtt_reconnect_duration',
};

// instanceSuffix names one instance's result file of a segmented test:
// <run id>.seg-2-of-4.json; a test in one instance keeps <run id>.json.
export function instanceSuffix(seg) {
  return seg.count > 1 ? `.seg-${seg.index + 1}-of-${seg.count}` : '';
}

function collect(prefix, notes) {
  const out = {};
  for (const [k, v] of Object.entries(notes)) {
    if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  }
  return out;
}

export function result(data, p, flows) {
  const st = mqtt.stats();
  const notes = internal.notes();
  const thresholds = {};
  let passed = true;
  // A threshold whose metric never had a sample judged nothing: it fails
  // here as it failed the run (mqtt_thresholds_without_samples), also when
  // the run was aborted before it could count them.
  const judged = Object.entries(data.metrics).filter(([, m]) => m.thresholds).map(([name]) => name);
  // Of them, those this instance has data for (run() says which: one
  // instance of several may have no subscribers, or no publishers).
  const noData = internal.withoutSamples(notes.judged_here || judged);
  for (const [name, m] of Object.entries(data.metrics)) {
    for (const [expr, t] of Object.entries(m.thresholds || {})) {
      const ok = t.ok && !noData.includes(name.split('{')[0]);
      thresholds[`${name} ${expr}`] = ok;
      passed = passed && ok;
    }
  }
  const latency = {};
  for (const [k, metric] of Object.entries(latencyKinds)) latency[k] = st[metric];
  // k6's own values of every metric with thresholds, for a merge to judge
  // them again over all instances.
  const judgedMetrics = {};
  for (const name of judged) judgedMetrics[name] = { type: data.metrics[name].type, values: data.metrics[name].values };
  const setup = data.setup_data || {};
  const seg = internal.segment();
  const completed = notes.completed === true;
  const r = {
    schema: null, // the extension's to set (k6/extension/result)
    run_id: setup.run_id,
    scenario: p.scenario,
    broker: p.broker,
    started_at: setup.started_at,
    client_id_prefix: setup.client_prefix,
    ended_at: new Date().toISOString(),
    duration_s: data.state ? data.state.testRunDurationMs / 1000 : null,
    passed: passed && completed,
    completed,
    instance: seg,
    // A payload template's steady size is the payload (run.js).
    parameters: notes.template_payload ? Object.assign({}, p, { payload: notes.template_payload }) : p,
    flows,
    versions: { k6: st.k6_version, extension: st.version, broker: __ENV.BROKER_VERSION || null },
    host: mqtt.host(),
    generator: st.process, // the k6 process's own CPU seconds and peak RSS
    ...(network ? { network } : {}), // the impaired path (scripts/bench.sh --impair), if any
    thresholds,
    metrics: judgedMetrics,
    counts: st.counters,
    latency_ms: latency,
    connect: collect('connect_', notes), // by role and flow: sub_p2p, pub_p2p
    delivery: collect('delivery_', notes),
    steps: notes.steps || [],
    // Windows in which connections were down (first lost → all back):
    // [{ start_ms, end_ms (null: closed while down, e.g. the run ended), duration_s, max_down }].
    outages: mqtt.outages(),
    without_samples: noData,
    timeline: mqtt.timeline(),
    // Whole, so that instances' files merge exactly: every latency
    // histogram (HdrHistogram's own encoding) and the per-stream counts.
    histograms: internal.histograms(),
    streams: internal.streams(),
  };
  return r;
}

const fmt = (x) => (x === undefined || x === null ? '-' : Number(x).toFixed(x < 10 ? 3 : 1));
// A latency figure, n/a where nothing was measured.
const na = (h, stat) => (h.count ? fmt(h[stat]) : 'n/a');

export function text(r) {
  const c = r.counts;
  const l = r.latency_ms.pub_to_sub || {};
  const li = r.latency_ms.pub_to_sub_from_intended || {};
  const lines = [
    '',
    `mqtt-bench ${r.scenario} on ${r.broker}: ${r.passed ? 'PASSED' : 'FAILED'}  (run ${r.run_id})`,
    `  connections   ${c.mqtt_connects} ok, ${c.mqtt_connect_failures} failed; ${c.mqtt_disconnects} disconnects, ` +
      `${c.mqtt_reconnect_attempts} reconnect attempts, ${c.mqtt_reconnects} reconnects` +
      (c.mqtt_write_stalls > 0 ? ` (${c.mqtt_write_stalls} closed here: the broker read nothing for 2 s)` : ''),
    `  messages      ${c.mqtt_publishes} published, ${c.mqtt_receives} received, ${c.mqtt_lost} lost, ` +
      `${c.mqtt_duplicates} duplicates, ${c.mqtt_out_of_order} out of order, ${c.mqtt_publish_failures} failed`,
  ];
  const tls = Object.values(r.connect || {}).find((g) => g && g.tls_version);
  if (tls) {
    const h = r.latency_ms.tls_handshake || {};
    const k = r.latency_ms.connack || {};
    // The handshake rate: connections opened per second of the groups' ramps.
    const opened = Object.values(r.connect || {}).filter((g) => g && g.seconds > 0);
    const rate = opened.reduce((n, g) => n + g.connected, 0) / opened.reduce((n, g) => n + g.seconds, 0);
    lines.push(`  transport     ${tls.tls_version}, ${tls.cipher_suite}; ${h.count} TLS handshakes ` +
      `at ${fmt(rate)}/s, avg ${fmt(h.avg)} ms, p99 ${fmt(h.p99)} ms; CONNECT → CONNACK avg ${fmt(k.avg)} ms, ` +
      `p99 ${fmt(k.p99)} ms`);
  }
  if (c.mqtt_protocol_errors > 0) {
    lines.push(`  protocol      ${c.mqtt_protocol_errors} publishes answered outside the QoS ${r.parameters.qos} flow ` +
      '(mqtt_protocol_errors): the broker does not implement this QoS as asked');
  }
  if (c.mqtt_publish_rejected > 0) {
    lines.push(`  rejected      ${c.mqtt_publish_rejected} publishes refused by the broker (reason code >= 0x80, ` +
      'mqtt_publish_rejected): not published, not expected at the subscribers');
  }
  // Each part of a scenario of several flows (a composite's), with the
  // extension's own verdict of it (verdict.Flows).
  if (r.flows.length > 1) {
    for (const [name, v] of r.flows.map((f) => [f.name, (r.flow_verdicts || {})[f.name]]).filter(([, v]) => v)) {
      lines.push(`  part ${name.padEnd(10)} ${v.passed ? 'ok' : 'FAIL'}: ${v.text}` +
        (v.failures ? `; ${v.failures.join('; ')}` : ''));
    }
  }
  if (r.rate_verdict) lines.push(`  rate          ${r.rate_verdict}`);
  if (r.ordering.text) lines.push(`  ordering      ${r.ordering.text}`);
  for (const s of r.steps) {
    lines.push(`  step          target ${fmt(s.target_rate)} msg/s, achieved ${fmt(s.achieved_rate)} msg/s` +
      ` (${s.payload} B, ${s.duration})`);
  }
  if (l.count) {
    lines.push(`  latency ms    avg ${fmt(l.avg)}  p50 ${fmt(l.p50)}  p90 ${fmt(l.p90)}  p95 ${fmt(l.p95)}  p99 ${fmt(l.p99)}  max ${fmt(l.max)}`);
    lines.push(`  from intended avg ${fmt(li.avg)}  p50 ${fmt(li.p50)}  p90 ${fmt(li.p90)}  p95 ${fmt(li.p95)}  p99 ${fmt(li.p99)}  max ${fmt(li.max)}`);
  }
  const rc = r.latency_ms.reconnect || {};
  if (rc.count || (r.outages || []).length) {
    lines.push(`  reconnect ms  p50 ${na(rc, 'p50')}  p99 ${na(rc, 'p99')}  max ${na(rc, 'max')}  ` +
      `(${rc.count || 0} reconnects, each from its connection's drop to its CONNACK)`);
  }
  for (const o of r.outages || []) {
    lines.push(`  outage        ${new Date(o.start_ms).toISOString()}: ${fmt(o.duration_s)} s, up to ${o.max_down} ` +
      `connections down${o.end_ms === null ? ', closed while still down' : ''}`);
  }
  for (const [t, ok] of Object.entries(r.thresholds)) {
    const none = !ok && (r.without_samples || []).includes(t.split(/[{ ]/)[0]) ? ' (no samples)' : '';
    lines.push(`  ${ok ? 'ok  ' : 'FAIL'}          ${t}${none}`);
  }
  lines.push(`  diagnosis     ${r.diagnosis.cause}: ${r.diagnosis.text}`);
  if (r.instance.count > 1) {
    lines.push(`  instance      ${r.instance.index + 1} of ${r.instance.count} (execution segment ${r.instance.segment}): ` +
      `the run's verdict is the merge's, once every instance is done: k6 x mqtt-merge ${r.run_id}`);
  }
  lines.push(`  result        ${r.parameters.results_dir}/${r.run_id}${instanceSuffix(r.instance)}.json`, '');
  return lines.join('\n');
}

export function summary(data, p, flows) {
  // Without setup's data the run never started (setup failed, e.g. on a
  // RUN_ID whose result exists): there is no result, and no file of
  // another run may be touched.
  if (!(data.setup_data && data.setup_data.run_id)) {
    return { stdout: `\nmqtt-bench ${p.scenario}: the run did not start (setup failed); no result file written\n` };
  }
  // The file is the extension's: the one result type the merge writes too
  // (k6/extension/result), with every verdict judged there.
  const file = internal.resultFile(result(data, p, flows));
  const r = JSON.parse(file);
  return {
    [`${p.results_dir}/${r.run_id}${instanceSuffix(r.instance)}.json`]: file,
    stdout: text(r),
  };
}
