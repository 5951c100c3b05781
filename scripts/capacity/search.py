"""The search itself, apart from running anything: judging a trial against
the bounds, and choosing the next rate (doubling, then bisection)."""

from dataclasses import dataclass, field

# The EMQX guide's figure: the load at which the broker stays at 75% CPU.
DEFAULT_CPU_TARGET = 75.0
# How close the last good and the first bad rate must be to stop: 5% of
# the bad one.
DEFAULT_PRECISION = 5.0
# The generator, at this share of its cores or more, is saturated: a
# trial that fell short of its rate then measured the generator.
GENERATOR_SATURATED = 0.9


@dataclass
class Bounds:
    cpu_target: float | None  # % of the broker's CPUs (cpu_basis says which); None: not judged (--no-cpu)
    p99_ms: float
    qos: int


@dataclass
class Trial:
    """One real run at one rate, as judged."""

    rate: float
    run_id: str
    achieved_rate: float | None = None
    # The trial result's own verdict (k6/extension/verdict: its rate_verdict
    # is null): every step sent its share of the rate on schedule, nothing missed.
    rate_reached: bool = False
    broker_cpu_pct: float | None = None  # normalised to the broker's CPUs
    broker_cpu_core_pct: float | None = None  # % of one core, as procstat/docker say
    host_cpu_pct: float | None = None  # 1 - idle
    mem_pct: float | None = None
    broker_rss_mb: float | None = None
    latency_p50: float | None = None
    latency_p99: float | None = None
    send_lag_p99: float | None = None  # the generator's own lateness (intended -> actual send)
    puback_p99: float | None = None  # the broker's acknowledgement latency
    lost: int = 0
    published: int = 0
    received: int = 0
    success_pct: float | None = None
    connect_failures: int = 0
    missed_sends: int = 0
    missed_window: int = 0
    generator_cpu_pct: float | None = None  # of the generator host's cores
    error: str | None = None  # the run did not give a result
    good: bool = False
    reasons: list = field(default_factory=list)
    limit: str | None = None  # what made it bad: broker_cpu, latency, loss, generator, connections, error
    cpu_unmeasured: bool = False  # the CPU bound could not be judged: no further trial

    @property
    def tps(self):
        """The EMQX guide's workload TPS: messages in + out per second."""
        if self.achieved_rate is None:
            return None
        out = self.achieved_rate * (self.received / self.published) if self.published else 0.0
        return self.achieved_rate + out


def judge(t, b):
    """Sets t.good, t.reasons and t.limit. The order of the checks is the
    order of blame: a generator that fell short measured itself, not the
    broker; then connections, loss, latency and the broker's CPU."""
    reasons = []
    limit = None
    if t.error:
        t.good, t.reasons, t.limit = False, [t.error], "error"
        return t
    # The achieved rate is what the generator sent on schedule (the wait
    # for acks is not in it): a shortfall is messages never sent.
    if not t.rate_reached:
        # Missed sends that waited for a full QoS window are the broker
        # holding acks back; the rest the generator's scheduler reached too
        # late: its own limit. A busy generator is its limit whatever the
        # broker did; an idle broker is no evidence against the generator.
        late = t.missed_sends - t.missed_window
        saturated = t.generator_cpu_pct is not None and t.generator_cpu_pct >= 100 * GENERATOR_SATURATED
        if late > 0 or saturated:
            limit = "generator"
            reasons.append(
                f"the generator did not reach {t.rate:,.0f} msg/s (achieved {fmt(t.achieved_rate)}, "
                f"{late} sends it reached too late) with the broker at {fmt(t.broker_cpu_pct)}% CPU and the "
                f"generator at {fmt(t.generator_cpu_pct)}% of its cores"
            )
        else:
            limit = "broker_backpressure"
            reasons.append(
                f"the broker did not acknowledge {t.rate:,.0f} msg/s in time (achieved {fmt(t.achieved_rate)}; "
                f"{t.missed_window} sends waited on unacknowledged messages, PUBACK p99 {fmt(t.puback_p99)} ms)"
            )
    # A generator that sends late (a busy or throttled host) makes every
    # message late by as much: when its lateness alone reaches the latency
    # bound, the trial measured the generator, whatever the broker did.
    if t.send_lag_p99 is not None and t.send_lag_p99 >= b.p99_ms:
        limit = limit or "generator"
        reasons.append(
            f"the generator sent late: its own send lag p99 {t.send_lag_p99:,.1f} ms reaches the p99 bound "
            f"({b.p99_ms:g} ms) by itself, the generator at {fmt(t.generator_cpu_pct)}% of its cores"
        )
    if t.connect_failures:
        limit = limit or "connections"
        reasons.append(f"{t.connect_failures} connections failed")
    if b.qos >= 1 and t.lost:
        limit = limit or "loss"
        reasons.append(f"{t.lost} messages lost at QoS {b.qos}")
    if t.latency_p99 is None or t.latency_p99 >= b.p99_ms:
        limit = limit or "latency"
        reasons.append(f"p99 {fmt(t.latency_p99)} ms, bound {b.p99_ms:g} ms")
    if b.cpu_target is None:
        pass  # --no-cpu: the bound the search was told not to judge
    elif t.broker_cpu_pct is None:
        # A trial judged without its CPU would pass for good: the search stops.
        limit = limit or "error"
        t.cpu_unmeasured = True
        reasons.append("the broker's CPU was not measured (InfluxDB has no broker-process or host CPU)")
    elif t.broker_cpu_pct > b.cpu_target:
        limit = limit or "broker_cpu"
        reasons.append(f"broker CPU {t.broker_cpu_pct:.1f}%, target {b.cpu_target:g}%")
    t.good, t.reasons, t.limit = not reasons, reasons, limit
    return t


def fmt(x):
    return "n/a" if x is None else f"{x:,.1f}"


@dataclass
class Search:
    """Doubling from the start rate until a trial is bad, then bisection
    between the last good and the first bad rate until they are within
    the precision. Rates are whole messages per second."""

    start: float
    max_rate: float
    precision: float = DEFAULT_PRECISION
    good: float = 0.0  # the highest good rate so far
    bad: float | None = None  # the lowest bad rate so far
    stop: str | None = None  # why no further trial is due

    def next_rate(self):
        if self.stop:
            return None
        if self.bad is None:
            rate = self.start if self.good == 0 else self.good * 2
            if rate > self.max_rate:
                if self.good >= self.max_rate:
                    self.stop = "max_rate"
                    return None
                rate = self.max_rate
            return rate
        if self.bad - self.good <= self.precision / 100 * self.bad:
            self.stop = "precision"
            return None
        rate = round((self.good + self.bad) / 2)
        if rate <= self.good or rate >= self.bad:
            self.stop = "precision"
            return None
        return rate

    def record(self, t):
        if t.good:
            self.good = max(self.good, t.rate)
        else:
            self.bad = t.rate if self.bad is None else min(self.bad, t.rate)
        # A generator-limited trial or an error ends the search: more rate
        # would only measure the generator again.
        if not t.good and t.limit in ("generator", "error"):
            self.stop = t.limit
        # Nor can a search go on whose CPU bound it cannot judge.
        if t.cpu_unmeasured:
            self.stop = "error"
