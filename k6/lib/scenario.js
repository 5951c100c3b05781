// One runner for every scenario: a scenario file only describes its workload
// (clients, topics, rates) as flows, and this turns it into k6 options with
// thresholds, a setup that fixes the run id, the load itself and the result.
//
// A flow is { name, publishers, subscribers, pubTopic, subTopics, fanout,
// pubBase, subBase, pubUrl, subUrl }: publishers send to pubTopic (a template
// such as 'test/{i}'), subscribers subscribe to subTopics, and each message
// published is expected `fanout` times at the subscribers.
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import mqtt from 'k6/x/mqtt';
import internal from 'k6/x/mqtt/internal';
import * as env from './env.js';
import { params, warnUnused } from './params.js';
import { runFlows } from './run.js';
import { summary } from './summary.js';
import { judgedHere, thresholds as thresholdsOf } from './thresholds.js';
import { refused } from './refusal.js';

// Verdicts that hold whatever this instance's share: thresholds are fixed
// before k6 tells a script its execution segment, so they cannot name the
// share's counts. Planned connections never opened:
const connectsMissing = new Counter('mqtt_connects_missing');
// Flows that publish to subscribers here, of which these received nothing:
const nothingReceived = new Counter('mqtt_nothing_received');
// Flows whose own verdict failed (the extension's, as the result's
// flow_verdicts): judged where one process sees the whole run, else by the
// merge.
const partsFailed = new Counter('mqtt_parts_failed');
// Publish steps that did not reach their rate (verdict.Reached): a
// counter, 0 where nothing publishes (a gauge without a sample fails).
const rateShortfalls = new Counter('mqtt_rate_shortfalls');

// scenario(name, defaults, workload): workload(params) returns the flows.
export function scenario(name, defaults, workload) {
  const p = params(name, defaults);
  const flows = workload(p).map((f) => withPrefix(f, p.topic_prefix));
  if (__VU === 0) warnUnused(name, p, flows, defaults); // once: see params
  // Strict order where the verdict judges none could never fail the run.
  const unjudged = p.strict_order && internal.unjudgedOrder({
    parameters: { qos: p.qos }, flows: flows.map((f) => ({ subTopics: f.subTopics })),
  });
  if (unjudged) {
    throw refused(name, `STRICT_ORDER=true is invalid here: the verdict does not judge order (${unjudged}); ` +
      'use a scenario without $share/ (p2p, fanout) or leave STRICT_ORDER unset');
  }
  if (!flows.some((f) => f.publishers + f.subscribers > 0)) {
    throw refused(name, `PUBLISHERS=${p.publishers} and SUBSCRIBERS=${p.subscribers} leave no client to run: ` +
      'give at least one of them a value > 0, or leave them unset for the scenario\'s own numbers');
  }
  const thresholds = thresholdsOf(p, flows);
  const options = {
    tags: { scenario: name, broker: p.broker },
    scenarios: {
      // MAX_INSTANCES VUs, which k6 splits over a segmented test's
      // instances: each instance's first VU runs the instance's share (one
      // VU drives thousands of connections), the others wait out the plan
      // (idle, see run). constant-vus, whose progress is elapsed over its
      // duration (k6 v1.8.1 lib/executor/constant_vus.go), so the progress
      // line tells the truth from 0% to 100%: per-vu-iterations counts
      // iterations done, and the idle VUs' were done at once (97% from the
      // first second with 32). The duration is the plan (the connection
      // ramp and the steps); the graceful stop holds what may come on top:
      // a slow ramp (10 s), each step's wait for its last acks (5 s), the
      // drain of the last messages (up to 120 s) and the close.
      [name]: {
        executor: 'constant-vus', vus: p.max_instances, duration: `${p.planned_s}s`,
        gracefulStop: `${160 + 5 * p.planned_steps}s`,
      },
    },
    thresholds,
    setupTimeout: '60s',
  };

  // setup fixes the run id once for the test and reserves this instance's
  // result file: a random part keeps generators started in the same
  // second apart, and a RUN_ID whose file exists stops here, before any
  // connection. The instances of a segmented test must share the run id,
  // so there it is the user's to give.
  // scheduled: the scenario's duration as k6 runs it, in seconds: the
  // options of an archive are those of `k6 archive`'s parameters.
  // (A k6 run --duration or --vus replaces the scenario: then the plan.)
  const scheduled = () => {
    const sc = (exec.test.options.scenarios || {})[name];
    return sc && sc.duration ? env.seconds(sc.duration) : p.planned_s;
  };

  function setup() {
    // An archive keeps the options its parameters made (k6 archive), while
    // the script reads k6 run's: a plan of other length would hold the
    // progress bar and the end of the run to the archive's.
    if (scheduled() !== p.planned_s) {
      throw refused(name, `this run plans ${p.planned_s} s, but its options (made by k6 archive, with the ` +
        `parameters given there) schedule ${scheduled()} s: give the parameters that shape the load (DURATION, ` +
        'STEPS, SCALE, PUBLISHERS, SUBSCRIBERS, CONNECT_RATE, PAYLOADS) to k6 archive with -e, not to k6 run');
    }
    const seg = internal.segment();
    if (seg.count > 1 && !p.run_id) {
      throw refused(name, `RUN_ID is required with --execution-segment (this is ${seg.segment} of ` +
        `${seg.sequence}): give every instance the same one, e.g. -e RUN_ID=${name}-run1, so that ` +
        '`k6 x mqtt-merge RUN_ID` finds their results');
    }
    // k6 stripes the scenario's VUs over the sequence: an instance that
    // gets none would run nothing, and its share of the load with it.
    if (internal.share(p.max_instances).count < 1) {
      throw refused(name, `this instance (${seg.segment} of ${seg.sequence}) gets none of the scenario's ` +
        `MAX_INSTANCES=${p.max_instances} VUs, so its share would not run: set -e MAX_INSTANCES to at least the ` +
        'number of instances (for unequal segments, their common denominator), on k6 archive too');
    }
    // This process's connections must fit its open-files limit: refused
    // here, before anything connects, rather than failing mid-ramp.
    const all = flows.map((f) => ({ pub: { count: f.publishers }, sub: { count: f.subscribers } }));
    const tooMany = internal.checkOpenFiles({ connections: atOnce(sharesOf(flows)), total: atOnce(all) });
    if (tooMany) throw refused(name, tooMany, { cause: internal.causeGeneratorOpenFiles });
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
    const runId = p.run_id || `${name}-${p.broker}-${stamp}-${internal.randomId().slice(0, 6)}`;
    internal.claimResult(p.results_dir, runId);
    // Client ids differ between generator processes: a broker takes an id
    // that connects again away from the connection that had it, so two
    // runs on one broker would keep disconnecting each other.
    return {
      run_id: runId, started_at: new Date().toISOString(), client_prefix: internal.randomId().slice(0, 6),
      broker_version: askedVersion(),
    };
  }

  // The broker's version, when the caller did not say it (BROKER_VERSION):
  // asked of the running broker where its broker.toml says it tells it
  // (BROKER_VERSION_TOPIC, comma-separated, as BROKER_VERSION_USERNAME: its
  // version_topic and version_username, which compose's k6 service reads
  // there), once, before the load. {version, source} or {error}.
  function askedVersion() {
    if (__ENV.BROKER_VERSION || !__ENV.BROKER_VERSION_TOPIC) return null;
    const got = internal.brokerVersion(p.url, __ENV.BROKER_VERSION_TOPIC.split(','), __ENV.BROKER_VERSION_USERNAME || '');
    if (got.error) console.warn(`${name}: the broker's version was not told: ${got.error}`);
    return got;
  }

  async function run(data) {
    // One iteration of the first VU runs the load; any other waits out the
    // scenario's duration (and a moment: k6 then starts no other
    // iteration), so that constant-vus neither spins nor runs the load twice.
    if (exec.vu.idInInstance !== 1 || exec.vu.iterationInScenario > 0) {
      sleep(Math.max(0, exec.scenario.startTime + scheduled() * 1000 + 100 - Date.now()) / 1000);
      return;
    }
    // On the VU, not only in options.tags: a `k6 run --tag` of the user's
    // replaces options.tags, and these must stay on every sample.
    exec.vu.metrics.tags.run_id = data.run_id;
    exec.vu.metrics.tags.broker = p.broker;
    if (p.search_id) exec.vu.metrics.tags.search = p.search_id;
    const seg = internal.segment();
    const shares = sharesOf(flows);
    const rounds = p.payloads ? p.payloads.length : 1;
    // Planned connections (a payload sweep opens its publishers again per size).
    const planned = shares.reduce((n, s) => n + s.sub.count + s.pub.count * rounds, 0);
    // The extension's status line (every 10 s) shows progress against these.
    internal.setPlan({ duration: `${p.planned_s}s`, connections: atOnce(shares), instances: seg.count });
    const groups = [];
    try {
      await runFlows(Object.assign({}, p, { client_prefix: data.client_prefix }), flows, shares, seg, groups);
      // A run stopped early (a signal, an abort) did not complete, and does
      // not pass: its phases end on k6's cancel and may well get here.
      internal.markCompleted();
    } catch (e) {
      exec.test.abort(`${name}: ${e}`);
    } finally {
      groups.forEach((g) => g.close());
      const c = mqtt.stats().counters;
      connectsMissing.add(Math.max(0, planned - c.mqtt_connects));
      rateShortfalls.add(internal.rateShortfalls());
      // The parts the extension's verdict fails, on what the result file
      // will hold of them (one instance of several: the merge's to judge).
      if (flows.length > 1) partsFailed.add(seg.count > 1 ? 0 : internal.partsFailed({ parameters: p, flows }));
      // What each flow's subscribers received is their drain()'s.
      nothingReceived.add(internal.nothingReceived(flows.map((f, i) => ({
        flow: f.name, owed: f.fanout > 0 && f.publishers > 0 && shares[i].sub.count > 0,
      }))));
      // Metrics one instance of several has nothing to judge by (no
      // subscribers here: no latency) are the merge's to judge.
      const here = Object.keys(thresholds).filter((m) => seg.count === 1 || judgedHere(m, flows, shares));
      internal.checkSamples(here); // and the result's without_samples
    }
  }

  return { p, options, setup, run, handleSummary: (data) => summary(data, p, flows) };
}

// This instance's share of each flow's clients, as k6 splits them.
function sharesOf(flows) {
  return flows.map((f) => ({ pub: internal.share(f.publishers), sub: internal.share(f.subscribers) }));
}

// The connections of shares open at once (a payload sweep closes one
// size's publishers before it opens the next's).
function atOnce(shares) {
  return shares.reduce((n, s) => n + s.sub.count + s.pub.count, 0);
}

// withPrefix puts TOPIC_PREFIX in front of a flow's topics (after
// $share/<group>/ for shared subscriptions).
function withPrefix(f, prefix) {
  if (!prefix) return f;
  const add = (t) => t.replace(/^(\$share\/[^/]+\/)?/, (m) => m + prefix);
  const subs = f.subTopics === undefined ? undefined : [].concat(f.subTopics).map(add);
  return Object.assign({}, f, { pubTopic: f.pubTopic && add(f.pubTopic), subTopics: subs });
}
