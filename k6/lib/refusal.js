// A scenario's refusal of its input, before any connection: thrown as k6's
// error (its exit code 107) and written as a file its caller reads,
// <RESULTS_DIR>/<RUN_ID>.refused.json (k6/extension/mqtt/refusal.go): the
// outcome as a value, never text read out of k6's log. Without RUN_ID no
// file is written (nobody could find it).
import internal from 'k6/x/mqtt/internal';

// $MQTTBENCH_RESULTS/raw, else the project's reports/raw, wherever k6 is
// started (`k6 run fanin.js` in k6/scenarios), so that scripts/report.sh
// finds the result: resolved from this file, not from the working directory.
export const RESULTS_DIR = __ENV.MQTTBENCH_RESULTS ? `${__ENV.MQTTBENCH_RESULTS}/raw`
  : decodeURIComponent(import.meta.resolve('../../reports/raw').replace(/^file:\/\//, ''))
    .replace(/^\/([A-Za-z]:)/, '$1');

// refused(scenario, message, facts): the Error to throw. facts: what a
// caller reads beyond the message (cause, what the broker lacks, ...).
export function refused(scenario, message, facts = {}) {
  const written = internal.refuse(__ENV.RESULTS_DIR || RESULTS_DIR, __ENV.RUN_ID || '',
    { cause: 'bad_input', scenario: scenario || null, ...facts, message });
  return new Error(scenario ? `${scenario}: ${written}` : written);
}
