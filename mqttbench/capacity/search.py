"""The search itself, apart from running anything: judging a trial against
the bounds, and choosing the next rate (doubling, then bisection)."""

from dataclasses import dataclass, field

from mqttbench import verdict_policy

# The EMQX guide's figure: the load at which the broker stays at 75% CPU.
DEFAULT_CPU_TARGET = 75.0
# How close the last good and the first bad rate must be to stop: 5% of
# the bad one.
DEFAULT_PRECISION = 5.0
# The diagnosis cause (k6/extension/verdict) that says a trial measured the
# generator, not the broker: no broker capacity can come of it.
GENERATOR = verdict_policy.CAUSE_GENERATOR


@dataclass
class Bounds:
    """The search's own bound: the broker's CPU. The latency bound (P99_MS)
    and every other one are the trial's thresholds, judged in its result."""

    cpu_target: float | None  # % of the broker's CPUs (cpu_basis says which); None: not judged (--no-cpu)


@dataclass
class Trial:
    """One real run at one rate, as judged."""

    rate: float
    run_id: str
    achieved_rate: float | None = None
    # The trial result's own verdict (k6/extension/verdict): its thresholds
    # passed, and its diagnosis (cause and text) says why not.
    passed: bool = False
    cause: str | None = None
    diagnosis: str | None = None
    broker_cpu_pct: float | None = None  # normalised to the broker's CPUs
    broker_cpu_core_pct: float | None = None  # % of one core, as procstat/docker say
    host_cpu_pct: float | None = None  # 1 - idle
    mem_pct: float | None = None
    broker_rss_mb: float | None = None
    latency_p50: float | None = None
    latency_p99: float | None = None
    send_lag_p99: float | None = None  # the generator's own lateness (intended -> actual send)
    lost: int = 0
    published: int = 0
    received: int = 0
    success_pct: float | None = None
    generator_cpu_pct: float | None = None  # of the generator host's cores
    error: str | None = None  # the run did not give a result
    good: bool = False
    reasons: list = field(default_factory=list)
    limit: str | None = None  # what made it bad: broker_cpu, error, or the trial's diagnosis cause
    cpu_unmeasured: bool = False  # the CPU bound could not be judged: no further trial

    @property
    def tps(self):
        """The EMQX guide's workload TPS: messages in + out per second."""
        if self.achieved_rate is None:
            return None
        out = self.achieved_rate * (self.received / self.published) if self.published else 0.0
        return self.achieved_rate + out


def judge(t, b):
    """Sets t.good, t.reasons and t.limit: the trial's own verdict (its
    thresholds, the diagnosis naming the cause, in k6/extension/verdict's
    order of blame), then the one bound the result cannot judge, the
    broker's CPU, measured from InfluxDB."""
    if t.error:
        t.good, t.reasons, t.limit = False, [t.error], "error"
        return t
    reasons = []
    limit = None
    if not t.passed:
        limit = t.cause
        reasons.append(t.diagnosis)
    if b.cpu_target is None:
        pass  # --no-cpu: the bound the search was told not to judge
    elif t.broker_cpu_pct is None:
        # A trial judged without its CPU would pass for good: the search stops.
        limit = limit or "error"
        t.cpu_unmeasured = True
        reasons.append("the broker's CPU was not measured (InfluxDB has no broker-process or host CPU)")
    elif t.broker_cpu_pct > b.cpu_target:
        limit = limit or verdict_policy.CAUSE_BROKER_CPU
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
        if not t.good and t.limit in (GENERATOR, "error"):
            self.stop = t.limit
        # Nor can a search go on whose CPU bound it cannot judge.
        if t.cpu_unmeasured:
            self.stop = "error"
