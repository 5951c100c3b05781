// Reading and validating scenario parameters from the environment. Every
// problem stops the run in the init context, before any connection, with a
// message naming the variable and what it accepts.
import internal from 'k6/x/mqtt/internal';
import { refused } from './refusal.js';

const problems = [];

function fail(name, value, accepts) {
  problems.push(`${name}=${JSON.stringify(value)} is invalid: ${accepts}`);
}

function raw(name) {
  const v = __ENV[name];
  return v === undefined || v === '' ? undefined : String(v).trim();
}

export function number(name, def, { min = 0, integer = false, above = false, max = Infinity, why = '' } = {}) {
  const v = raw(name);
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || (above ? n <= min : n < min) || n > max) {
    const upper = max < Infinity ? ` and <= ${max}${why ? ` (${why})` : ''}` : '';
    fail(name, v, `expected ${integer ? 'a whole number' : 'a number'} ${above ? '>' : '>='} ${min}${upper}`);
    return def;
  }
  return n;
}

// topicPrefix: a prefix for topic names and filters, so no wildcard, no
// NUL, and no leading $ (the broker's own $SYS space).
export function topicPrefix(name) {
  const v = raw(name) ?? '';
  if (/[+#\u0000]/.test(v) || v.startsWith('$')) {
    fail(name, v, 'expected topic levels without +, #, NUL or a leading $, e.g. run1/');
    return '';
  }
  return v;
}

// warnUnknown warns about environment variables one typo away from a
// known parameter (QOSS=1 does not set QOS).
export function warnUnknown(scenario, known) {
  const near = (a, b) => {
    if (Math.abs(a.length - b.length) > 1) return false;
    let i = 0;
    while (i < Math.min(a.length, b.length) && a[i] === b[i]) i++;
    const rest = (x, k) => x.slice(i + k);
    return rest(a, 1) === rest(b, 1) || rest(a, 1) === rest(b, 0) || rest(a, 0) === rest(b, 1);
  };
  for (const name of Object.keys(__ENV)) {
    if (known.includes(name)) continue;
    const like = known.find((k) => k.length >= 3 && near(name, k));
    if (like) console.warn(`${scenario}: ${name} is not a parameter: did you mean ${like}? (it is ignored)`);
  }
}

export function choice(name, def, allowed) {
  const v = raw(name);
  if (v === undefined) return def;
  if (!allowed.map(String).includes(v)) {
    fail(name, v, `expected one of ${allowed.join(', ')}`);
    return def;
  }
  return v;
}

const durationRe = /^(\d+(\.\d+)?(ms|s|m|h))+$/;

export function seconds(text) {
  let total = 0;
  for (const [, n, , unit] of text.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit];
  }
  return total;
}

export function duration(name, def) {
  const v = raw(name);
  if (v === undefined) return def;
  if (!durationRe.test(v) || seconds(v) <= 0) {
    fail(name, v, 'expected a positive duration such as 30s, 5m or 1h30m');
    return def;
  }
  return v;
}

// Broker URLs follow the extension's own rules (the url option's), so a
// URL this accepts is one the groups accept.
export function url(name, def) {
  const v = raw(name) ?? def;
  const parsed = internal.parseUrl(v);
  if (parsed.error) {
    fail(name, v, `${parsed.error} (expected a broker URL such as mqtt://127.0.0.1:1883)`);
    return def;
  }
  return v;
}

// localAddress: source addresses for the connections (the extension's
// local_address option): empty for the system's choice.
export function localAddress(name) {
  const v = raw(name);
  if (v === undefined) return '';
  const parsed = internal.parseLocalAddress(v);
  if (parsed.error) {
    fail(name, v, `${parsed.error} (the generator's source addresses: several processes on one host give each its own)`);
    return '';
  }
  return v;
}

// payloadTemplate: PAYLOAD_TEMPLATE, checked by the extension's own
// parser (the payload_template option's), so a bad placeholder stops the
// run here, named.
export function payloadTemplate(name) {
  const v = __ENV[name] === undefined || __ENV[name] === '' ? undefined : String(__ENV[name]);
  if (v === undefined) return undefined;
  const parsed = internal.payloadTemplate(v, 'k6-{i}');
  if (parsed.error) {
    fail(name, v, `${parsed.error} (placeholders: {client}, {seq}, {ts_ms}, {rand:A-B}, {choice:a|b|c}, {fill:N}, ` +
      '{header}; e.g. {"device":"{client}","seq":{seq},"temp":{rand:18.0-30.0}})');
    return undefined;
  }
  return v;
}

// The directories where the stacks generate their TLS files: the native
// stack's state directory (MQTTBENCH_STATE, default .state in the clone),
// and the compose secrets as the k6 service mounts them.
const STATE = __ENV.MQTTBENCH_STATE || decodeURIComponent(import.meta.resolve('../../.state')
  .replace(/^file:\/\//, '')).replace(/^\/([A-Za-z]:)/, '$1');
const TLS_DIRS = [`${STATE}/tls`, '/run/secrets/mqtt-bench/tls'];

// tlsFile: a TLS file path given, or the stack's generated file of that
// name, or undefined (the system's CAs, no client certificate).
export function tlsFile(name, generated) {
  const v = raw(name);
  if (v !== undefined) return v;
  const dir = TLS_DIRS.find((d) => internal.fileExists(`${d}/${generated}`));
  return dir ? `${dir}/${generated}` : undefined;
}

// checkTLS: the TLS files (given or defaulted) must be what the tls option
// reads, so a wrong one stops the run here, named.
export function checkTLS(p) {
  const bad = internal.checkTLSFiles(p.tls_ca || '', p.tls_cert || '', p.tls_key || '');
  const named = (v, key) => `${v}=${JSON.stringify(p[key])}${raw(v) === undefined ? ' (the stack\'s generated file)' : ''}`;
  if (bad.ca) problems.push(`${named('TLS_CA', 'tls_ca')} is invalid: ${bad.ca} (expected the PEM file of the CA that signed the broker's certificate)`);
  if (bad.cert) problems.push(`${named('TLS_CERT', 'tls_cert')} is invalid: ${bad.cert} (expected PEM files of a client certificate and its key)`);
}

// runId: a name for the run's result file and tags, so no path separators.
export function runId(name) {
  const v = raw(name);
  if (v !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(v)) {
    fail(name, v, 'expected letters, digits, ".", "_" or "-" (at most 128), e.g. p2p-mosquitto-run1');
    return undefined;
  }
  return v;
}

export function text(name, def) {
  return raw(name) ?? def;
}

// STEPS="1000:60s,2000:60s": rate (msg/s) and how long it is held.
export function steps(name) {
  const v = raw(name);
  if (v === undefined) return undefined;
  const out = [];
  for (const part of v.split(',')) {
    const [rate, dur] = part.split(':').map((x) => x && x.trim());
    if (!(Number(rate) > 0) || !dur || !durationRe.test(dur)) {
      fail(name, v, 'expected a list of rate:duration such as 1000:60s,2000:60s');
      return undefined;
    }
    out.push({ rate: Number(rate), duration: dur });
  }
  return out;
}

// gone: a parameter that no longer exists stops the run with what replaces it.
export function gone(name, instead) {
  if (raw(name) !== undefined) problems.push(`${name} is no longer a parameter: ${instead}`);
}

// check throws once with every problem found, so a user fixes all at once.
export function check(scenario) {
  if (problems.length) {
    throw refused(scenario, problems.join('; '));
  }
}
