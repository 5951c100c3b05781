// handleSummary: the extension builds the run's result file (parameters,
// versions, host, thresholds, counts, latency, steps, timeline, streams)
// from the run's own state and k6's end-of-test data, judges it and renders
// the text summary, as k6 x mqtt-merge does for a merged run
// (k6/extension/result). This hands it what only the scenario knows.
import internal from 'k6/x/mqtt/internal';
import { network } from './network.js';

export function summary(data, p, flows) {
  return internal.summary(data, {
    parameters: p, flows, network: network || null, broker_version: __ENV.BROKER_VERSION || null,
  });
}
