// The impaired network path of this run, when scripts/bench.sh --impair put
// Toxiproxy between the generator and the broker: NETWORK holds its record
// (mqttbench/stack/impair.py: the profile and every toxic as Toxiproxy held them),
// which the result file keeps as `network`. Read in the init context, so
// that a malformed one stops the run before any connection.
import { refused } from './refusal.js';

function read() {
  const v = __ENV.NETWORK;
  if (v === undefined || v === '') return undefined;
  let rec;
  try {
    rec = JSON.parse(v);
  } catch (e) {
    rec = undefined;
  }
  if (!rec || typeof rec !== 'object' || Array.isArray(rec) || typeof rec.profile !== 'string') {
    throw refused(null, `NETWORK=${v.slice(0, 80)} is invalid: expected the JSON record of mqttbench/stack/impair.py ` +
      '(scripts/bench.sh --impair PROFILE sets it); unset it for a run without impairment');
  }
  return rec;
}

export const network = read();

// addedMs is the most delay the profile's latency toxics add to a message
// from publisher to subscriber (each direction's latency and jitter): the
// p99 bound is the broker's share, P99_MS, on top of it (params.js).
export const addedMs = (network ? network.toxics || [] : [])
  .filter((t) => t.type === 'latency')
  .reduce((n, t) => n + (t.attributes.latency || 0) + (t.attributes.jitter || 0), 0);
