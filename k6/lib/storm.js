// A reconnect storm: the load of a scenario (held connections, publishers
// at a steady rate), and at STORM_AT every connection cut at once by the
// Toxiproxy between k6 and the broker (TOXIPROXY_URL, its proxy `mqtt`:
// scripts/bench.sh --impair sets both), which refuses new ones until OUTAGE
// has passed; then everyone reconnects at once. Measured, each a metric
// with its threshold (so in the result's `metrics` and `thresholds`):
//   mqtt_storm_down            connections the cut took down (count > 0)
//   mqtt_storm_recovery_s      from the path's return to every connection
//                              back (max < RECOVERY_S)
//   mqtt_storm_reconnect_rate  connections back per second in that time
// The result's `outages` window is the storm from the first connection
// lost to the last one back; its counts say what was lost or duplicated
// (none lost at QoS >= 1 with persistent sessions: mqtt_lost count==0).
// TOXIPROXY_URL=none cuts nothing: the storm is an outage brought from
// elsewhere (a broker restart), and only the counts and outages judge it.
import { sleep } from 'k6';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import mqtt from 'k6/x/mqtt';
import * as env from './env.js';
import { refused } from './refusal.js';

const down = new Counter('mqtt_storm_down');
const recovery = new Trend('mqtt_storm_recovery_s');
const reconnectRate = new Trend('mqtt_storm_reconnect_rate');

// What a storm leaves behind by design, not judged: publishes due while
// the path was cut fail (they are not sent), the rate falls short, and
// messages held over the outage arrive late.
const EXPECTED = ['mqtt_publish_failures', 'mqtt_missed_sends', 'mqtt_rate_shortfalls', 'mqtt_latency_p99'];

// storm(name, s): the scenario s (lib/scenario.js) with the cut added as a
// k6 scenario of its own, started at STORM_AT. Returns k6's exports.
export function storm(name, s) {
  const p = s.p;
  const external = p.toxiproxy_url === 'none';
  const at = env.seconds(p.storm_at);
  const outage = env.seconds(p.outage);
  if (!external && at + outage + p.recovery_s > p.planned_s) {
    throw refused(name, `STORM_AT=${p.storm_at} + OUTAGE=${p.outage} + RECOVERY_S=${p.recovery_s} is past the ` +
      `run's ${p.planned_s} s: lengthen DURATION or cut earlier`);
  }
  const options = Object.assign({}, s.options, { thresholds: Object.assign({}, s.options.thresholds) });
  for (const m of EXPECTED) delete options.thresholds[m];
  if (!external) {
    options.thresholds.mqtt_storm_down = ['count>0'];
    options.thresholds.mqtt_storm_recovery_s = [`max<${p.recovery_s}`];
    options.thresholds.mqtt_storm_reconnect_rate = ['min>0'];
    options.scenarios = Object.assign({}, s.options.scenarios, {
      storm: {
        executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'cut', startTime: `${at}s`,
        maxDuration: `${Math.ceil(outage + p.recovery_s + 10)}s`,
      },
    });
  }
  const proxy = `${p.toxiproxy_url.replace(/\/+$/, '')}/proxies/mqtt`;
  const enable = (on) => {
    const r = http.post(proxy, JSON.stringify({ enabled: on }), { headers: { 'Content-Type': 'application/json' } });
    if (r.status !== 200) throw new Error(`${name}: Toxiproxy ${proxy} answered ${r.status} ${r.body}`);
  };

  function cut() {
    const t0 = Date.now();
    enable(false);
    sleep(outage);
    enable(true);
    const back = Date.now();
    // The window that opened with the cut: it ends when every connection
    // is back (lib/extension load/outages.go).
    const windowOf = () => mqtt.outages().filter((o) => o.start_ms >= t0 - 1000).pop();
    let w = windowOf();
    while (Date.now() - back < p.recovery_s * 1000 && (!w || w.end_ms === null)) {
      sleep(0.1);
      w = windowOf();
    }
    if (!w) {
      console.error(`${name}: the cut took no connection down: does MQTT_URL (${p.url}) go through ${proxy}?`);
      return;
    }
    down.add(w.max_down);
    const s = ((w.end_ms === null ? Date.now() : w.end_ms) - back) / 1000;
    recovery.add(Math.max(0, s));
    reconnectRate.add(w.end_ms === null ? 0 : w.max_down / Math.max(s, 0.001));
  }

  // In setup, not in the init context, so that `k6 archive` (k6-operator)
  // takes the scenario without a proxy; still before any connection.
  function setup() {
    if (!p.toxiproxy_url) {
      throw refused(name, `TOXIPROXY_URL is required: the Toxiproxy API whose proxy \`mqtt\` carries MQTT_URL ` +
        `(scripts/bench.sh --scenario ${name} --impair lan sets both), or TOXIPROXY_URL=none when the outage comes ` +
        'from elsewhere (a broker restart)');
    }
    return s.setup();
  }

  return { options, setup, run: s.run, handleSummary: s.handleSummary, cut };
}
