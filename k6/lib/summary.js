// handleSummary: the extension builds the run's result file (parameters,
// versions, host, thresholds, counts, latency, steps, timeline, streams)
// from the run's own state and k6's end-of-test data, judges it and renders
// the text summary, as k6 x mqtt-merge does for a merged run
// (k6/extension/result). This hands it what only the scenario knows.
import internal from 'k6/x/mqtt/internal';
import { network } from './network.js';

export function summary(data, p, flows) {
  return internal.summary(data, {
    parameters: p, flows, network: network || null, ...brokerVersion(data), broker_deviations: brokerDeviations(),
  });
}

// The verdicts the broker's facts list as its known deviations from the
// spec (brokers/<name>/broker.toml [[deviations]] verdict), comma-separated
// in BROKER_DEVIATIONS as the stack that runs k6 passes them: a violation
// among them is named as the broker's known behaviour (the verdict stays).
function brokerDeviations() {
  const listed = (__ENV.BROKER_DEVIATIONS || '').split(',').map((s) => s.trim()).filter(Boolean);
  return listed.length ? listed : null;
}

// Where the broker's version comes from, first that has it: the caller's
// BROKER_VERSION (scripts/bench.sh natively: the broker's $SYS topic or its
// [native] version command, with BROKER_VERSION_SOURCE), the running broker
// asked in setup (scenario.js), the image compose ran (BROKER_IMAGE).
function brokerVersion(data) {
  const asked = (data.setup_data || {}).broker_version || {};
  if (__ENV.BROKER_VERSION) {
    return { broker_version: __ENV.BROKER_VERSION, broker_source: __ENV.BROKER_VERSION_SOURCE || 'BROKER_VERSION' };
  }
  if (asked.version) return { broker_version: asked.version, broker_source: asked.source };
  if (__ENV.BROKER_IMAGE) return { broker_version: `image ${__ENV.BROKER_IMAGE}`, broker_source: 'the image compose ran' };
  return { broker_version: null, broker_source: asked.error || null };
}
