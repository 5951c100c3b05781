// The workload shapes of mqttbs and the EMQX performance-testing guide, as
// flows for lib/scenario.js. Scenario files pick a shape and its defaults.
import { scenario } from './scenario.js';
import { refused } from './refusal.js';

const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));

// Point-to-point (EMQX: symmetric): publisher i -> test/i -> subscriber i.
export function p2p(name, defaults) {
  return scenario(name, defaults, (p) => {
    if (p.publishers !== p.subscribers) {
      throw refused(name, `PUBLISHERS (${p.publishers}) and SUBSCRIBERS (${p.subscribers}) must be equal for point-to-point`);
    }
    return [{ name: 'p2p', publishers: p.publishers, subscribers: p.subscribers, pubBase: 1, subBase: 1,
      pubTopic: 'test/{i}', subTopics: 'test/{i}', fanout: 1 }];
  });
}

// Fan-out, mqttbs style: every subscriber subscribes to all the topics, one
// per publisher (test/1..test/N).
export function fanoutAll(name, defaults) {
  return scenario(name, defaults, (p) => [{ name: 'fanout', publishers: p.publishers, subscribers: p.subscribers,
    pubBase: 1, pubTopic: 'test/{i}', subTopics: range(p.publishers, (i) => `test/${i + 1}`), fanout: p.subscribers }]);
}

// Fan-out, EMQX guide style: subscribers spread evenly over the publishers'
// topics (10 publishers, 2,000 subscribers: 200 per topic).
export function fanoutSpread(name, defaults) {
  return scenario(name, defaults, (p) => {
    if (p.subscribers % p.publishers !== 0) {
      throw refused(name, `SUBSCRIBERS (${p.subscribers}) must be a multiple of PUBLISHERS (${p.publishers})`);
    }
    return [{ name: 'fanout', publishers: p.publishers, subscribers: p.subscribers,
      pubTopic: 'fanout/{i}', subTopics: `fanout/{i%${p.publishers}}`, fanout: p.subscribers / p.publishers }];
  });
}

// Fan-in, mqttbs style: all publishers' topics consumed by one shared group.
export function sharedsub(name, defaults) {
  return scenario(name, Object.assign({ version: '5' }, defaults), (p) => [{ name: 'sharedsub',
    publishers: p.publishers, subscribers: p.subscribers, pubBase: 1, pubTopic: 'test/{i}',
    subTopics: '$share/benchmark/test/#', fanout: 1 }]);
}

// Fan-in, EMQX guide style: every 100 publishers' messages are shared by a
// group of 5 subscribers (2,000 publishers, 100 subscribers: 20 groups);
// the publishers per group follow from the counts.
export function faninGroups(name, defaults, membersPerGroup = 5) {
  return scenario(name, Object.assign({ version: '5' }, defaults), (p) => {
    const groups = Math.max(1, Math.round(p.subscribers / membersPerGroup));
    const members = Math.ceil(p.subscribers / groups);
    const pubs = Math.max(Math.ceil(p.publishers / groups), 1);
    return [{ name: 'fanin', publishers: p.publishers, subscribers: p.subscribers,
      pubTopic: `fanin/{i/${pubs}}/{i}`, subTopics: `$share/g{i/${members}}/fanin/{i/${members}}/#`, fanout: 1 }];
  });
}

// Connections only: clients connect at CONNECT_RATE and stay for DURATION.
export function connections(name, defaults) {
  return scenario(name, Object.assign({ qos: 0 }, defaults), (p) => [{ name: 'conn', publishers: 0,
    subscribers: p.subscribers }]);
}

// Bridging: two brokers bridged both ways; on each side publishers whose
// messages cross the bridge to the subscribers on the other side.
export function bridge(name, defaults) {
  return scenario(name, Object.assign({ bridged: true }, defaults), (p) => [
    { name: 'a2b', publishers: p.publishers, subscribers: p.subscribers, pubUrl: p.url, subUrl: p.url_b,
      pubTopic: 'bridge/a2b/{i}', subTopics: 'bridge/a2b/{i}', fanout: 1 },
    { name: 'b2a', publishers: p.publishers, subscribers: p.subscribers, pubUrl: p.url_b, subUrl: p.url,
      pubBase: p.publishers, subBase: p.subscribers, pubTopic: `bridge/b2a/{i}`, subTopics: `bridge/b2a/{i}`, fanout: 1 },
  ]);
}

// Payload sweep: p2p where each payload size gets fresh publishers, whose
// topics map back onto the same subscribers.
export function payloadSweep(name, defaults) {
  return scenario(name, defaults, (p) => [{ name: 'payload', publishers: p.publishers, subscribers: p.subscribers,
    pubTopic: `test/{i%${p.publishers}}`, subTopics: 'test/{i}', fanout: 1 }]);
}
