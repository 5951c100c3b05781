// The run's most likely cause, from the evidence in its result file: the
// broker's disconnects and outages, its refusals, losses and slow acks, and
// the generator's own pace and CPU. Causes are weighed in that order, so
// a run whose broker went away is never put down to the generator. Returns
// { cause, text, evidence }; cause is a short id:
//   broker_outage, broker_unreachable, broker_refused, broker_delivered_nothing,
//   broker_lost_messages, broker_slow_acks, broker_slow_reads, generator, broker_latency,
//   no_data, none (passed), unexplained.

const sum = (xs) => xs.reduce((n, x) => n + (x || 0), 0);
const r1 = (x) => (x === null || x === undefined ? null : Math.round(x * 10) / 10);
const r3 = (x) => (x === null || x === undefined ? null : Math.round(x * 1000) / 1000);
const pct = (x) => (x === null || x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`);

// evidence gathers the figures a cause is judged on.
export function evidence(r) {
  const c = r.counts || {};
  const lat = r.latency_ms || {};
  const steps = r.steps || [];
  const outages = r.outages || [];
  const g = r.generator || {};
  const cores = (r.host && r.host.cpus) || null;
  const cpuS = g.cpu_user_s === undefined ? null : g.cpu_user_s + g.cpu_system_s;
  const wall = r.duration_s || null;
  const ratios = steps.filter((s) => s.target_rate > 0).map((s) => s.achieved_rate / s.target_rate);
  const notes = Object.values(r.connect || {}).filter((n) => n);
  const firstError = notes.map((n) => n.first_error || n.error).find((x) => x) || null;
  const missedWindow = sum(steps.map((s) => s.missed_window));
  return {
    connects: c.mqtt_connects || 0,
    connect_failures: c.mqtt_connect_failures || 0,
    first_connect_error: firstError,
    disconnects: c.mqtt_disconnects || 0,
    // Of those, the ones the generator made: the broker read nothing of a
    // write for 2 s, so the connection was closed and redialled here.
    write_stalls: c.mqtt_write_stalls || 0,
    reconnect_attempts: c.mqtt_reconnect_attempts || 0,
    reconnects: c.mqtt_reconnects || 0,
    outages: outages.length,
    outage_s: r1(sum(outages.map((o) => o.duration_s))),
    outage_max_down: outages.reduce((n, o) => Math.max(n, o.max_down), 0),
    outage_unrecovered: outages.filter((o) => o.end_ms === null).length,
    publishes: c.mqtt_publishes || 0,
    publish_failures: c.mqtt_publish_failures || 0,
    rejected: c.mqtt_publish_rejected || 0,
    missed: c.mqtt_missed_sends || 0,
    missed_window: missedWindow,
    // A group's connect() that the broker turned down with its connections
    // open (a lower QoS granted, no shared subscriptions).
    refusal: c.mqtt_connects > 0 ? notes.map((n) => n.error).find((x) => x) || null : null,
    subscribe_failures: c.mqtt_subscribe_failures || 0,
    protocol_errors: c.mqtt_protocol_errors || 0,
    receives: c.mqtt_receives || 0,
    lost: c.mqtt_lost || 0,
    expects_delivery: (r.flows || []).some((f) => f.fanout > 0 && f.subscribers > 0),
    window_full: sum(steps.map((s) => s.window_full)),
    achieved_ratio: ratios.length ? r3(Math.min(...ratios)) : null,
    latency_p99_ms: lat.pub_to_sub && lat.pub_to_sub.count ? r3(lat.pub_to_sub.p99) : null,
    puback_p99_ms: lat.puback && lat.puback.count ? r3(lat.puback.p99) : null,
    send_lag_p99_ms: lat.send_lag && lat.send_lag.count ? r3(lat.send_lag.p99) : null,
    p99_bound_ms: r.parameters ? r.parameters.p99_ms : null,
    generator_cpu_s: r1(cpuS),
    wall_s: r1(wall),
    cores,
    // The generator's CPU as a share of all the host's cores over the run.
    generator_cpu_share: cpuS !== null && wall && cores ? r3(cpuS / wall / cores) : null,
    without_samples: r.without_samples || [],
  };
}

const latencyFailed = (r) => Object.entries(r.thresholds || {}).some(([k, ok]) => !ok && k.startsWith('mqtt_latency_p99'));

function generatorFigures(e) {
  return `send lag p99 ${e.send_lag_p99_ms ?? 'n/a'} ms; it used ${e.generator_cpu_s ?? 'n/a'} CPU-s in ` +
    `${e.wall_s ?? 'n/a'} s (${pct(e.generator_cpu_share)} of ${e.cores ?? '?'} cores)`;
}

// generatorShort: the generator is the limit (its scheduler missed sends,
// or it fell short with nothing else to blame); also names the broker's
// write stalls when there were some.
function generatorShort(e, stalls) {
  return ['generator', `The generator cannot reach the target rate: ${pct(e.achieved_ratio)} of it went out ` +
    `(${e.missed - e.missed_window} messages were due more than max_lag ago and never sent), with no broker disconnect, refusal or ` +
    `full inflight window${stalls ? `; also ${stalls}` : ''}; ${generatorFigures(e)}.`];
}

// judge picks the cause; the first rule whose evidence holds wins.
function judge(r, e) {
  if (e.disconnects > e.write_stalls) {
    const open = e.outage_unrecovered > 0 ? ', and not every connection was back when the run ended' : '';
    return ['broker_outage', `The broker dropped connections: ${e.disconnects} disconnects, ${e.outages} outage(s) ` +
      `lasting ${e.outage_s} s in all with up to ${e.outage_max_down} connections down at once${open}; ` +
      `${e.reconnect_attempts} reconnect attempts, ${e.reconnects} reconnects; ` +
      `${e.publish_failures} publishes failed and ${e.lost} messages were lost.`];
  }
  if (e.connect_failures > 0 && e.connects === 0) {
    return ['broker_unreachable', `No connection to the broker opened: all ${e.connect_failures} failed ` +
      `(${e.first_connect_error || 'no error recorded'}).`];
  }
  if (e.refusal) {
    return ['broker_refused', `The broker refused what the run needs, before load: ${e.refusal}`];
  }
  // Publishes fail without a drop when the broker refuses them (reason code
  // >= 0x80), or when it never frees the inflight window (slow acks, below).
  if (e.connect_failures > 0 || e.subscribe_failures > 0 || e.protocol_errors > 0 || e.rejected > 0 ||
    (e.publish_failures > 0 && e.window_full === 0 && e.write_stalls === 0)) {
    return ['broker_refused', `The broker refused: ${e.connect_failures} of ${e.connects + e.connect_failures} ` +
      `connections${e.first_connect_error ? ` (${e.first_connect_error})` : ''}, ${e.subscribe_failures} subscriptions, ` +
      `${e.protocol_errors} acks outside the QoS flow, ${e.rejected} publishes (mqtt_publish_rejected); ` +
      `${e.publish_failures} publishes failed.`];
  }
  if (e.expects_delivery && e.publishes > 0 && e.receives === 0) {
    return ['broker_delivered_nothing', `The broker took ${e.publishes} publishes and delivered none ` +
      '(an ACL, a topic mismatch or a broker that drops messages), with every connection up.'];
  }
  // Connections closed here because the broker read none of a write for
  // 2 s: what was lost with them is explained, and the scheduler's own
  // misses, if any, say whether the generator was the first limit.
  if (e.write_stalls > 0) {
    const stalls = `${e.write_stalls} times the broker read nothing of a connection's writes for 2 s ` +
      '(mqtt_write_stalls: closed and redialled here)';
    if (e.missed > e.missed_window) return generatorShort(e, stalls);
    return ['broker_slow_reads', `The broker did not read what it was sent: ${stalls}; ${pct(e.achieved_ratio)} of the ` +
      `target rate went out, ${e.lost} messages were lost with those connections.`];
  }
  if (e.lost > 0) {
    return ['broker_lost_messages', `The broker lost ${e.lost} of ${e.receives + e.lost} messages with no ` +
      `disconnect or refusal (inflight window full ${e.window_full} times, PUBACK p99 ${e.puback_p99_ms ?? 'n/a'} ms).`];
  }
  const short = e.achieved_ratio !== null && e.achieved_ratio < 0.95;
  if (e.missed_window > 0 || (e.window_full > 0 && (short || e.publish_failures > 0))) {
    return ['broker_slow_acks', `The broker held back acknowledgements: the inflight window was full ` +
      `${e.window_full} times (${e.missed_window} messages waited longer than max_lag and were never sent) and ` +
      `PUBACK p99 was ${e.puback_p99_ms ?? 'n/a'} ms: ${pct(e.achieved_ratio)} of the target rate went out, ` +
      `${e.publish_failures} publishes failed.`];
  }
  if (short || e.missed > 0) {
    return generatorShort(e, '');
  }
  if (latencyFailed(r) && e.latency_p99_ms !== null) {
    if (e.send_lag_p99_ms !== null && e.send_lag_p99_ms >= e.latency_p99_ms / 2) {
      return ['generator', `Latency p99 ${e.latency_p99_ms} ms is above the bound of ${e.p99_bound_ms} ms, ` +
        `and most of it is the generator's own lateness: ${generatorFigures(e)}.`];
    }
    return ['broker_latency', `The broker was slow to deliver: latency p99 ${e.latency_p99_ms} ms is above the ` +
      `bound of ${e.p99_bound_ms} ms with no disconnect or refusal, PUBACK p99 ${e.puback_p99_ms ?? 'n/a'} ms; ` +
      `the sends left on time (${generatorFigures(e)}).`];
  }
  if (r.completed === false) {
    return ['interrupted', `The run was stopped before its planned end (a signal, k6's REST API or an abort): ` +
      `its counts cover only what ran (${e.publishes} messages published, ${e.receives} received), and it does not pass.`];
  }
  if (e.without_samples.length > 0) {
    return ['no_data', `Thresholds on ${e.without_samples.join(', ')} had no samples to judge ` +
      `(${e.receives} messages received): the run measured nothing they bound.`];
  }
  if (r.passed) {
    return ['none', `Every threshold passed: ${e.connects} connections, ${e.publishes} messages published, ` +
      `${e.receives} received, no disconnect; the broker's latency: delivery p99 ${e.latency_p99_ms ?? 'n/a'} ms, ` +
      `PUBACK p99 ${e.puback_p99_ms ?? 'n/a'} ms; sends: ${generatorFigures(e)}.`];
  }
  const failed = Object.entries(r.thresholds || {}).filter(([, ok]) => !ok).map(([k]) => k);
  return ['unexplained', `Thresholds failed (${failed.join('; ')}) with no disconnect, refusal, loss or ` +
    `generator shortfall in the counts.`];
}

export function diagnose(r) {
  const e = evidence(r);
  const [cause, text] = judge(r, e);
  return { cause, text, evidence: e };
}
