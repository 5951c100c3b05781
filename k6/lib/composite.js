// The mqttbs composite: many clients connect, most of them background
// connections that hold their keep-alive and session and send nothing, the
// rest in point-to-point, fan-out and fan-in parts. Each part is a flow of
// lib/scenario.js, so each has its own accounting, latency and verdict
// (the extension's verdict.Flows); the background is a connection-only
// flow, as the conn-* scenarios' are.
import { scenario } from './scenario.js';

const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));
const given = (k) => __ENV[k] !== undefined && __ENV[k] !== '';

// The parts' sizes at SCALE (each client keeps its full-size load: 1 msg/s
// per publisher unless the part says otherwise), and the background's
// (BACKGROUND given explicitly is kept as given).
function sized(d, p) {
  const n = (x) => (p.scale === 1 || x === 0 ? x : Math.max(1, Math.round(x * p.scale)));
  const part = (q) => ({ publishers: n(q.publishers), subscribers: n(q.subscribers), perPublisher: q.perPublisher ?? 1 });
  return {
    background: given('BACKGROUND') ? p.background : n(p.background),
    p2p: part({ publishers: d.p2p, subscribers: d.p2p }),
    fanout: part(d.fanout),
    fanin: part(d.fanin),
  };
}

// flows: each part on its own topics and publisher ids (the run's
// publisher registry is by id), so that no part receives another's
// messages and each stream belongs to one flow.
function flows(s) {
  const { p2p, fanout, fanin } = s;
  const fanoutBase = p2p.publishers + 1;
  const faninBase = fanoutBase + fanout.publishers;
  const rate = (q) => q.publishers * q.perPublisher;
  return [
    { name: 'background', publishers: 0, subscribers: s.background },
    { name: 'p2p', publishers: p2p.publishers, subscribers: p2p.subscribers, pubBase: 1, subBase: 1,
      pubTopic: 'p2p/{i}', subTopics: 'p2p/{i}', fanout: 1, rate: rate(p2p) },
    // mqttbs fan-out: every subscriber on every publisher's topic.
    { name: 'fanout', publishers: fanout.publishers, subscribers: fanout.subscribers, pubBase: fanoutBase,
      pubTopic: 'fanout/{i}', subTopics: range(fanout.publishers, (i) => `fanout/${fanoutBase + i}`),
      fanout: fanout.subscribers, rate: rate(fanout) },
    // mqttbs fan-in: one shared subscription over every publisher's topic.
    { name: 'fanin', publishers: fanin.publishers, subscribers: fanin.subscribers, pubBase: faninBase,
      pubTopic: 'fanin/{i}', subTopics: '$share/composite/fanin/#', fanout: 1, rate: rate(fanin) },
  ].filter((f) => f.publishers + f.subscribers > 0);
}

// composite(name, { background, p2p, fanout: {publishers, subscribers,
// perPublisher}, fanin: {...}, duration, connectRate }): MQTT 5 by
// default, as the fan-in's shared subscription is (sharedsub-*).
export function composite(name, d) {
  const full = flows(sized(d, { scale: 1, background: d.background }));
  const sum = (k) => full.reduce((n, f) => n + (f[k] || 0), 0);
  // The totals shape the run's plan (its connection ramp, its rate);
  // the workload puts the parts' own figures in their place.
  const defaults = Object.assign({ version: '5', composite: true }, d, {
    publishers: sum('publishers'), subscribers: sum('subscribers'), rate: sum('rate'),
  });
  return scenario(name, defaults, (p) => {
    const s = sized(d, p);
    const fs = flows(s);
    p.background = s.background;
    const rate = fs.reduce((n, f) => n + (f.rate || 0), 0);
    // RATE given scales every part in proportion (their rates are weights).
    if (!given('RATE')) p.rate = rate;
    p.publishers = fs.reduce((n, f) => n + f.publishers, 0);
    p.subscribers = fs.reduce((n, f) => n + f.subscribers, 0);
    return fs;
  });
}
