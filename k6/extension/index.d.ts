/**
 * **k6/x/mqtt**: an MQTT 3.1.1 / 5.0 load generator for benchmarking brokers.
 *
 * Two APIs:
 * - `Client`: one connection, event-driven, close to grafana/xk6-mqtt's
 *   MQTT.js-like API, so scripts move between the two.
 * - `PublisherGroup` / `SubscriberGroup`: many connections per VU, opened at a
 *   controlled rate; publishing paced from Go (no JS call per message); every
 *   message timed and accounted for at the subscribers.
 *
 * Every benchmark payload starts with a 16-byte header (publisher id,
 * sequence number, actual send time, send lag), so subscribers measure
 * latency from the actual and from the intended send time (no coordinated
 * omission) and count lost, duplicate and out-of-order messages per stream.
 *
 * @example
 * ```javascript
 * import mqtt from 'k6/x/mqtt';
 * export const options = { thresholds: { mqtt_lost: ['count==0'], mqtt_latency_p99: ['value<50'] } };
 * export default async function () {
 *   const url = 'mqtt://127.0.0.1:1883';
 *   const subs = new mqtt.SubscriberGroup({ url, count: 100, topic: 'test/{i}', qos: 1 });
 *   await subs.connect();
 *   const pubs = new mqtt.PublisherGroup({ url, count: 100, topic: 'test/{i}', qos: 1, payload_size: 16 });
 *   await pubs.connect();
 *   const r = await pubs.publish({ rate: 1000, duration: '60s' });
 *   await subs.drain({ expected: r.sent });
 *   pubs.close(); subs.close();
 * }
 * ```
 * @module mqtt
 */
export as namespace mqtt;

/** 0 at most once, 1 at least once, 2 exactly once. */
export declare type QoS = 0 | 1 | 2;

/** A duration: "10s", "250ms", "1m30s", or milliseconds. */
export declare type Duration = string | number;

/** TLS for mqtts://, ssl://, tls:// or wss:// URLs. PEM text or a path to a PEM file. */
export declare interface TLSOptions {
  ca?: string;
  cert?: string;
  key?: string;
  insecure_skip_verify?: boolean;
  server_name?: string;
}

export declare interface Will {
  topic: string;
  payload?: string;
  qos?: QoS;
  retain?: boolean;
}

/** Options every connection takes. Unknown options are an error. */
export declare interface ConnectionOptions {
  /** mqtt://host:port (tcp://), mqtts:// (ssl://, tls://), ws://host:port/path and wss:// (WebSocket, path default /mqtt). Default mqtt://127.0.0.1:1883. */
  url?: string;
  /** "3.1.1" (or 4) and "5" (or "5.0"). Default "3.1.1". */
  version?: string | number;
  /** Seconds; 0 disables. Default 60. */
  keepalive?: number;
  /**
   * Clean session (3.1.1) / clean start (5). Default true. false (3.1.1)
   * keeps the session across connections. Groups start a new session at
   * their first connect whatever this says (an earlier run's session is not
   * resumed); their reconnects resume it, and publisher groups then re-send
   * unacknowledged QoS 1/2 messages with DUP.
   */
  clean_session?: boolean;
  /**
   * MQTT 5 session expiry interval, seconds. > 0 keeps the session across
   * connections: reconnects ask for it back (clean start 0).
   */
  session_expiry?: number;
  username?: string;
  password?: string;
  will?: Will;
  tls?: TLSOptions;
  /** Dial + TLS + CONNECT to CONNACK. Default "10s". */
  connect_timeout?: Duration;
  /** Reconnect with exponential backoff when the broker drops a connection. Default true. */
  reconnect?: boolean;
  reconnect_backoff_min?: Duration;
  reconnect_backoff_max?: Duration;
  /** Read buffer per connection read by its own goroutine, bytes. Default 4096. */
  read_buffer?: number;
  /** MQTT 5 Receive Maximum announced to the broker. */
  receive_maximum?: number;
  /**
   * Source addresses to dial from, in turn: "127.0.0.2", a list
   * "10.0.0.5,10.0.0.6" or a range "127.0.0.2-127.0.0.9" (last byte). One
   * address has about 28,000 ephemeral ports for one broker address.
   * Replaces the VU's dialer (k6's blockHostnames and hosts do not apply).
   */
  local_address?: string;
}

/** Options of a group of connections. */
export declare interface GroupOptions extends ConnectionOptions {
  /** Number of connections. Default 1. */
  count?: number;
  /** Index of the first client in the test: {i} runs from id_base to id_base + count - 1. */
  id_base?: number;
  /** Client id template: {i}, {i%N}, {i/N}, {vu}, {role}. Default "k6-{role}-{i}". */
  client_id?: string;
  /** New connections per second (0: as fast as possible). */
  connect_rate?: number;
  /** Connections being opened at once. Default 128. */
  connect_concurrency?: number;
  /**
   * Extra k6 tags on every metric sample of the group (values: strings,
   * numbers or booleans). Keep them low-cardinality: a phase or a broker
   * name, never a client id. (`servers` is refused: a group has one url.)
   */
  tags?: Record<string, string | number | boolean>;
  /**
   * The flow the group's traffic belongs to in the result's streams:
   * instances' result files merge their per-stream accounting by flow name.
   * Default "".
   */
  flow?: string;
}

export declare interface PublisherGroupOptions extends GroupOptions {
  /** Topic template, e.g. "test/{i}" (no wildcards). Required. */
  topic: string;
  qos?: QoS;
  retain?: boolean;
  /** Exact payload size in bytes, >= 16 (the header). Default 16. Not with payload_template. */
  payload_size?: number;
  /**
   * Fill each message from a template: {client}, {seq}, {ts_ms},
   * {rand:A-B}, {choice:a|b|c}, {fill:N}, and {header} where the 16-byte
   * header goes as 22 base64url characters (without it: binary, before the
   * template). Every message has the template's steady size (stats().payload_size),
   * padded with trailing spaces.
   */
  payload_template?: string;
  /** Default total rate of publish() (msg/s). */
  rate?: number;
  /** Default rate per client of publish() when `rate` is not set. */
  rate_per_client?: number;
  /** QoS 1/2 messages in flight per client (capped by the broker's Receive Maximum). Default 1024. */
  max_inflight?: number;
  /** Least time between scheduler wake-ups; messages due meanwhile share a write. Default "1ms". */
  batch_interval?: Duration;
  /** Default max_lag of publish(). Default "1s". */
  max_lag?: Duration;
  /**
   * At QoS 1, the PUBACKs of plain-TCP connections are read by one poller
   * per group (as a SubscriberGroup's messages are), which looks every
   * poll_interval while acks come in, and timed by the kernel's receive
   * time. Default "100us"; at most "10ms"; 0: a reader goroutine per
   * connection, as TLS connections and QoS 2 publishers always have.
   */
  poll_interval?: Duration;
}

export declare interface SubscriberGroupOptions extends GroupOptions {
  /** Filter template(s); "$share/group/filter" for shared subscriptions. None: connect only. */
  topic?: string | string[];
  qos?: QoS;
  /**
   * Plain-TCP connections are read by one poller per group (epoll) that wakes
   * on the first message after a quiet spell, then looks every poll_interval
   * while traffic lasts. Messages are timed by the kernel's receive time, so
   * the interval does not add to latency, except for a message that shares a
   * read with a later one on the same connection (timed with that one: at most
   * the interval late). With a broker that leaves Nagle's algorithm on, our
   * acks follow the reads, so the interval can delay the broker's sends.
   * Default "100us"; at most "10ms"; 0: a reader goroutine per connection (as
   * TLS connections always have).
   */
  poll_interval?: Duration;
  /**
   * A SUBACK granting less than `qos` fails connect() (naming the filter and
   * both levels) unless this is true; then the group measures at the granted
   * level, which stats().granted_qos reports. Default false.
   */
  accept_downgrade?: boolean;
  /** The publishers' payload_template: where their messages carry the header. */
  payload_template?: string;
}

export declare interface ConnectResult {
  connected: number;
  failed: number;
  seconds: number;
  first_error: string;
  /**
   * SubscriberGroup with a "$share/" filter: "announced" (the CONNACK says
   * Shared Subscription Available = 1) or "received" (a probe message came
   * back through a shared subscription to the same filter).
   */
  shared_check?: 'announced' | 'received';
  /** Probe messages published ("received"): one per filter, for reconciling a broker's own counters. */
  probes?: number;
  /** What the connections run over. */
  transport: 'tcp' | 'tls' | 'ws' | 'wss';
  /** TLS and WebSocket over TLS: the negotiated version ("TLS 1.3") and cipher suite, of the first handshake. */
  tls_version?: string;
  cipher_suite?: string;
}

export declare interface PublishPhase {
  /** Total msg/s. */
  rate?: number;
  /** msg/s per client (when rate is not given). */
  rate_per_client?: number;
  /** How long the rate is held (the phase lasts exactly this long). */
  duration?: Duration;
  /** Or: how many messages. */
  count?: number;
  /** How long to wait at the end for QoS 1/2 acknowledgements. Default "5s". */
  drain?: Duration;
  batch_interval?: Duration;
  /**
   * How late a message may still be sent: one due longer ago is missed
   * (never sent, never expected at the subscribers, counted in
   * mqtt_missed_sends), so a rate beyond reach or a window that stays full
   * ends the phase on time with bounded memory. Default "1s", at least "1ms".
   */
  max_lag?: Duration;
}

export declare interface PublishResult {
  /** Written to the broker. QoS 1/2: each ends published (acknowledged), rejected or failed. */
  sent: number;
  failed: number;
  /** Refused by the broker (PUBACK/PUBREC reason >= 0x80): not delivered, so not expected at subscribers. */
  rejected: number;
  /** Never sent: due longer than max_lag ago. */
  missed: number;
  /** Of missed, those that waited for a full QoS 1/2 window (the rest: the generator did not get to them). */
  missed_window: number;
  seconds: number;
  target_rate: number;
  achieved_rate: number;
  achieved_ratio: number;
  /** Times a QoS 1/2 message waited for the in-flight window (broker backpressure). */
  window_full: number;
  max_lag_ms: number;
}

export declare class PublisherGroup {
  constructor(options: PublisherGroupOptions);
  /** Opens the connections at connect_rate; rejects only if none succeeded. */
  connect(): Promise<ConnectResult>;
  /** Publishes at the phase's rate, paced from Go; sequence numbers continue across calls (step load). */
  publish(phase: PublishPhase): Promise<PublishResult>;
  stats(): {
    clients: number; connected: number; published: number; failed: number; rejected: number; missed: number;
    reconnects: number; payload_size: number;
  };
  /** Disconnects every client and pushes the final metrics. */
  close(): void;
}

export declare interface DeliveryStats {
  clients: number;
  connected: number;
  received: number;
  unique: number;
  lost: number;
  duplicates: number;
  out_of_order: number;
  streams: number;
  expected: number;
  min_per_client: number;
  max_per_client: number;
  /** Sockets the group's poller has read (0 with poll_interval 0, TLS, or outside Linux). */
  polled_sockets: number;
  /** The lowest QoS the broker granted (-1 before any SUBACK). */
  granted_qos: number;
  /** Shared-subscription probe messages this group's members received and skipped. */
  probes_received: number;
  /** Drops of the group's connections (a composite's background must keep every one). */
  disconnects: number;
}

export declare class SubscriberGroup {
  constructor(options: SubscriberGroupOptions);
  /**
   * Opens the connections at connect_rate and subscribes each. Rejects when
   * the broker refuses what the group measures: a QoS downgrade (see
   * accept_downgrade), or a shared subscription where its CONNACK says
   * Shared Subscription Available = 0, or (MQTT 3.1.1, or no such property)
   * where a probe message does not come back through a shared subscription
   * to the same filter within 5 s: a broker that takes "$share/..." as a
   * literal filter would deliver nothing. Probes are not counted anywhere.
   */
  connect(): Promise<ConnectResult>;
  /** Waits until `expected` messages arrived, or none for `idle`, or `timeout`. */
  drain(options?: { expected?: number; idle?: Duration; timeout?: Duration }): Promise<DeliveryStats>;
  /** Messages expected in all: those that never arrived count as lost. */
  setExpected(n: number): void;
  stats(): DeliveryStats;
  /** Disconnects, then pushes lost, duplicate and out-of-order counts. */
  close(): void;
}

/** A latency summary in milliseconds, from an HDR histogram. */
export declare interface LatencyStats {
  count: number; avg: number; min: number; p50: number; p75: number; p90: number; p95: number; p99: number; p999: number; max: number;
}

/** Process-wide totals, for handleSummary. */
export declare function stats(): {
  version: string;
  k6_version: string;
  counters: Record<string, number>;
  process: { cpu_user_s: number; cpu_system_s: number; max_rss_kb: number };
  mqtt_latency: LatencyStats;
  mqtt_latency_intended: LatencyStats;
  mqtt_send_lag: LatencyStats;
  mqtt_connect_duration: LatencyStats;
  mqtt_suback_duration: LatencyStats;
  mqtt_puback_duration: LatencyStats;
  mqtt_tls_handshake_duration: LatencyStats;
  mqtt_connack_duration: LatencyStats;
  /** From a connection's drop to the CONNACK of the reconnect that brought it back. */
  mqtt_reconnect_duration: LatencyStats;
};

/** One row per second of the run, process-wide. */
export declare function timeline(): Array<{
  t: number; published: number; received: number; connections: number; target_rate: number;
  latency_avg_ms: number; latency_p50_ms: number; latency_p99_ms: number; latency_max_ms: number; send_lag_p99_ms: number;
}>;

/**
 * Windows in which connections were down, process-wide: one opens when a
 * connection is lost with its reconnect pending and none was down, and ends
 * when every one is back; end_ms is null when the connections still down
 * were closed before that (the run ended, or a payload sweep's publishers
 * were replaced, during it).
 */
export declare function outages(): Array<{ start_ms: number; end_ms: number | null; duration_s: number; max_down: number }>;

/** The generator host: CPU model, cores, memory, kernel, OS, network sysctls. */
export declare function host(): Record<string, unknown>;

/*
 * While a test runs, the process logs one status line every 10 s (k6's log,
 * level info), whatever the number of VUs and groups:
 *
 *     mqtt: 0:40/2:10 connections 2000/2000 sent 1000 msg/s delivered 1000 msg/s p99 3.10 ms missing 0 (0.00%)
 *
 * elapsed since the first group or client was made / planned length;
 * connections open / planned; over the last interval, messages published
 * (mqtt_publishes: QoS 0 written, QoS 1/2 acknowledged) and received
 * (mqtt_receives) per second; the pub-to-sub latency p99 so far ("-" before
 * any message); and the messages missing so far, of those and the messages
 * received: the stream accounting's gaps (a later message of the stream
 * arrived; a late arrival still fills one), plus mqtt_lost of subscriber
 * groups already closed. Messages sent after a stream's last receipt are in
 * flight until its group closes, when they and the gaps left become
 * mqtt_lost. The same accounting at every QoS, QoS 0 too.
 *
 * (k6/lib tells the line the plan; without it the line shows only what is.)
 */

export declare const version: string;

/** The options' limits (rate in msg/s per group phase, payload bytes, keep-alive seconds). */
export declare const limits: { rate: number; payload: number; payload_min: number; keepalive: number };

/** The verdict package's bounds and causes, as a result's `policy` records them: a script's thresholds
 * take rate_reached from here rather than restate it. */
export declare const policy: {
  rate_reached: number;
  generator_throttled: number;
  broker_cpu_saturated_pct: number;
  broker_cpu_explains: string[];
  causes: string[];
  ordering_spec: string;
};


// ---- low-level client (grafana/xk6-mqtt compatible) --------------------

export declare interface ClientOptions extends ConnectionOptions {
  client_id?: string;
  /** Alias of client_id, as in grafana/xk6-mqtt. */
  clientId?: string;
  /** k6 tags on the client's metrics: in the constructor only (connect() refuses them). */
  tags?: Record<string, string | number | boolean>;
}

/** Per-message tags are refused: a client's counts carry its constructor's tags. */
export declare interface PublishOptions { qos?: QoS; retain?: boolean }
export declare interface SubscribeOptions { qos?: QoS; no_local?: boolean }
export declare type StringOrArrayBuffer = string | ArrayBuffer;

export declare interface MQTTError { name: "MQTTError"; message: string; method: string }

export declare class Client {
  readonly connected: boolean;
  constructor(options?: ClientOptions);
  connect(url?: string | ClientOptions, options?: ClientOptions): void;
  connectAsync(url?: string | ClientOptions, options?: ClientOptions): Promise<void>;
  /** Drops the connection; the client reconnects with backoff. */
  reconnect(): void;
  subscribe(topic: string | string[], options?: SubscribeOptions): void;
  /** Resolves with the granted QoS (or reason code) of each filter. */
  subscribeAsync(topic: string | string[], options?: SubscribeOptions): Promise<number[]>;
  unsubscribe(topic: string | string[]): void;
  unsubscribeAsync(topic: string | string[]): Promise<void>;
  publish(topic: string, payload: StringOrArrayBuffer, options?: PublishOptions): void;
  /** Resolves when written (QoS 0) or acknowledged (PUBACK / PUBCOMP). */
  publishAsync(topic: string, payload: StringOrArrayBuffer, options?: PublishOptions): Promise<void>;
  end(): void;
  endAsync(): Promise<void>;
  on(event: "connect" | "end" | "reconnect" | "close", listener: () => void): void;
  on(event: "message", listener: (topic: string, payload: ArrayBuffer) => void): void;
  on(event: "error", listener: (error: MQTTError) => void): void;
}
