// Reconnect storm: 1,000 publishers one-to-one with 1,000 subscribers, all
// with persistent sessions (CLEAN_SESSION=false), QoS 1, 1,000 msg/s; at
// 20 s the Toxiproxy between k6 and the broker cuts every connection for
// 10 s, then all reconnect at once (lib/storm.js). Passes when the cut took
// connections down, every one is back within RECOVERY_S (30) of the path's
// return and, at QoS >= 1, nothing was lost. Run it through a proxy:
// scripts/bench.sh --scenario storm-1K-1K-1K-10s --impair lan
import { p2p } from '../lib/workloads.js';
import { storm } from '../lib/storm.js';

const s = storm('storm-1K-1K-1K-10s', p2p('storm-1K-1K-1K-10s', {
  publishers: 1000, subscribers: 1000, rate: 1000, duration: '60s', cleanSession: false,
  storm: true, stormAt: '20s', outage: '10s',
}));
export const { options, setup, handleSummary, cut } = s;
export default s.run;
