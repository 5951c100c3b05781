// The run's thresholds: what fails a run, the same for every instance's
// share and for the merge of their results (k6 x mqtt-merge judges them
// again on the merged counts).

// thresholds(p, flows): k6's thresholds option for the scenario.
export function thresholds(p, flows) {
  const publishing = flows.some((f) => f.publishers > 0);
  // They hold for any instance's share (k6 settles them before it
  // tells a script its segment) and for the merge of every instance's
  // result, which judges them again on the merged counts.
  const t = {
    mqtt_connect_failures: ['count==0'],
    mqtt_connects_missing: ['count==0'],
  };
  if (publishing && flows.some((f) => f.fanout > 0 && f.subscribers > 0)) {
    t.mqtt_nothing_received = ['count==0'];
  }
  if (publishing) {
    // Over an impaired path (scripts/bench.sh --impair), p99_ms already
    // holds the delay the profile adds on top of P99_MS (params.js).
    t.mqtt_latency_p99 = [`value<${p.p99_ms}`];
    // A generator that cannot keep up fails the run instead of reporting
    // its own limit as the broker's.
    t.mqtt_rate_shortfalls = ['count==0'];
    // Messages not sent on schedule (more than max_lag late): the target
    // rate was not reached, however close the achieved ratio.
    t.mqtt_missed_sends = ['count==0'];
    t.mqtt_publish_failures = ['count==0'];
    // Publishes the broker refused (PUBACK/PUBREC reason >= 0x80).
    t.mqtt_publish_rejected = ['count==0'];
    // An ack outside the QoS flow (a PUBACK to QoS 2): the broker does not
    // give the QoS the run is named after.
    t.mqtt_protocol_errors = ['count==0'];
    // What this instance can judge; the merge of a segmented run's results
    // counts every stream exactly.
    if (p.qos >= 1) t.mqtt_lost = ['count==0'];
    if (p.strict_order) t.mqtt_out_of_order = ['count==0'];
  }
  // Each flow's own verdict (the extension's verdict.Flows): a composite's
  // part may fail on its own where the sums over all parts pass.
  if (flows.length > 1) t.mqtt_parts_failed = ['count==0'];
  // k6 passes a threshold whose metric never had a sample (a p99 bound when
  // no message arrived): run() counts such metrics here, failing the run.
  t.mqtt_thresholds_without_samples = ['count==0'];
  return t;
}

// judgedHere: whether this instance's share of a segmented test gives
// metric m samples. An instance whose share is empty (a small test over
// many instances) has nothing to judge: the merge judges the run.
export function judgedHere(m, flows, shares) {
  const has = (k) => shares.some((s) => s[k].count > 0);
  if (!has('pub') && !has('sub')) return ['mqtt_connects_missing', 'mqtt_nothing_received', 'mqtt_parts_failed'].includes(m);
  if (m === 'mqtt_latency_p99') return has('sub') && flows.some((f, i) => f.publishers > 0 && shares[i].sub.count > 0);
  return true;
}

