"""Regressions found, not guessed: the statistics of a comparison in rounds
(scripts/compare.sh --rounds N --baseline NAME --fail-on ...). One module,
so that compare.md's verdicts and compare.sh's exit code cannot disagree.

Per metric, a column's rounds are compared with the baseline's: the change
of their medians, a bootstrap interval of that change (each side resampled
with replacement, seeded: the same rounds give the same interval), and a
word: `regressed`, `improved` or `no change beyond noise (±x%)`. A word is
only given when the whole interval lies beyond the metric's noise floor:
with five rounds a side, an interval that merely excludes 0 happens by
chance now and then, and an A/A comparison must not cry wolf. A bound of
--fail-on is judged the same way: breached only when the whole interval
lies beyond it."""

import math
import random
import re
import statistics
from dataclasses import dataclass

LEVEL_PCT = 95  # the interval's confidence, in percent (a statistic's, not a verdict's)
RESAMPLES = 2000
SEED = 36  # with the metric's name: each metric its own reproducible stream


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    worse: int  # +1: a rise is worse (latency, CPU); -1: a fall is (rate)
    floor: float  # the noise floor: % change, or points for kind "points"
    kind: str = "ratio"  # ratio: % change of the medians; points: their difference
    decimals: int = 3
    # The least difference of the medians, in the metric's unit, that can be a
    # change at all: a sub-millisecond latency doubles by chance (an A/A run
    # drew p99 0.217 -> 0.616 ms, +184%, its interval wholly beyond +10%).
    least: float = 0.0
    # The same in % of one core, for a broker CPU figure (see least()).
    least_cpu_pct: float = 0.0


METRICS = {
    m.name: m
    for m in [
        Metric("rate", "delivered rate (msg/s)", -1, 2.0, decimals=1),
        Metric("p50", "latency p50 (ms)", +1, 5.0, least=1.0),
        Metric("p99", "latency p99 (ms)", +1, 10.0, least=1.0),
        # procstat counts CPU in 10 ms clock ticks: in a 1 s sample one tick is
        # 1% of a core, and a quiet broker's rounds read 0% and 1% by chance
        # (an A/A run drew a median of 0, "-100% improved"). The floor lies
        # between one tick and two: at exactly one, the rates' wobble tipped
        # medians one tick apart over it (1% at 99.9 msg/s is 100.1 µs, one
        # tick at the rates' median 100.05 µs).
        Metric("broker_cpu_per_msg", "broker CPU per message (µs)", +1, 10.0, decimals=1, least_cpu_pct=1.5),
        Metric("rss", "broker RSS max (MB)", +1, 5.0, decimals=1),
        Metric("conn_rate", "connection rate (conn/s)", -1, 10.0, decimals=1),
        Metric("loss", "loss (% of published)", +1, 0.01, kind="points"),
    ]
}


def values(figures):
    """The metrics of one run from its comparison figures (tables.run_figures
    and report.comparison.rounds.connect_rate); None where a figure is n/a."""
    f = figures or {}
    cpu, rate, published = f.get("broker_cpu_avg"), f.get("sub_rate"), f.get("published")
    return {
        "rate": rate,
        "p50": f.get("latency_p50"),
        "p99": f.get("latency_p99"),
        # % of one core / messages per second -> CPU microseconds per delivered message.
        "broker_cpu_per_msg": cpu * 1e4 / rate if cpu is not None and rate else None,
        "rss": f.get("broker_rss_max_mb"),
        "conn_rate": f.get("connect_rate"),
        "loss": 100.0 * (f.get("lost") or 0) / published if published else None,
    }


def median(xs):
    return statistics.median(xs)


def change(metric, base, cand):
    """The change from the median base to the median cand: % (ratio) or points."""
    if metric.kind == "points":
        return cand - base
    if base == 0:
        return 0.0 if cand == 0 else math.copysign(math.inf, cand)
    return 100.0 * (cand / base - 1.0)


def interval(metric, base, cand, seed=SEED, resamples=RESAMPLES, level_pct=LEVEL_PCT):
    """The bootstrap percentile interval of the change of medians (base and
    cand: each round's value), reproducible for a given seed."""
    rng = random.Random(f"{seed}:{metric.name}")
    got = sorted(
        change(metric, median(rng.choices(base, k=len(base))), median(rng.choices(cand, k=len(cand))))
        for _ in range(resamples)
    )
    tail = (100 - level_pct) / 200
    return got[int(tail * resamples)], got[min(resamples - 1, math.ceil((1.0 - tail) * resamples) - 1)]


def pct(x, kind="ratio"):
    """A change as text: +12.3% (or +0.05 pt for points)."""
    if math.isinf(x):
        return "+inf%" if x > 0 else "-inf%"
    return f"{x:+.2f} pt" if kind == "points" else f"{x:+.1f}%"


@dataclass
class Verdict:
    metric: Metric
    base: float
    cand: float
    change: float
    low: float
    high: float
    word: str  # regressed, improved, no change beyond noise (±x%)
    least: float = 0.0  # the least difference of the medians that is a change

    def text(self):
        k = self.metric.kind
        return f"{pct(self.change, k)} [{pct(self.low, k)}, {pct(self.high, k)}] {self.word}"


def least(metric, base_values, cand_values):
    """The least difference of the medians, in the metric's unit, that can be
    a change, given both sides' rounds ({metric: [value per round]}): a CPU
    floor in % of one core is worth 1e4 * pct / rate µs per message."""
    if not metric.least_cpu_pct:
        return metric.least
    rates = [r for r in [*base_values.get("rate", []), *cand_values.get("rate", [])] if r]
    return max(metric.least, 1e4 * metric.least_cpu_pct / median(rates)) if rates else metric.least


def verdict(metric, base, cand, seed=SEED, least_diff=None):
    """The verdict of a column's rounds (cand) against the baseline's (base);
    None when either has no value (an n/a figure). least_diff: least()'s,
    else the metric's own."""
    least_diff = metric.least if least_diff is None else least_diff
    base = [x for x in base if x is not None]
    cand = [x for x in cand if x is not None]
    if not base or not cand:
        return None
    mb, mc = median(base), median(cand)
    c = change(metric, mb, mc)
    lo, hi = interval(metric, base, cand, seed)
    # The interval in the metric's "worse" direction: a rise of latency, a fall of rate.
    w_lo, w_hi = sorted((metric.worse * lo, metric.worse * hi))
    if abs(mc - mb) < least_diff:
        w_lo, w_hi = min(w_lo, 0.0), max(w_hi, 0.0)  # too small a difference to be a change
    if w_lo > metric.floor:
        word = "regressed"
    elif w_hi < -metric.floor:
        word = "improved"
    else:
        reach = max(abs(lo), abs(hi))
        word = "no change beyond noise (±" + (f"{reach:.2f} pt)" if metric.kind == "points" else f"{reach:.1f}%)")
    return Verdict(metric, mb, mc, c, lo, hi, word, least_diff)


class BadBound(ValueError):
    """A --fail-on that cannot be read: the message names it and the fix."""


BOUND_RE = re.compile(r"^([a-z0-9_]+)=([+-])([0-9]+(?:\.[0-9]+)?)(%|pt)?$")


def parse_bounds(text):
    """--fail-on 'p99=+10%,rate=-5%,loss=+0.1pt' -> {metric: signed bound}.
    The sign says the direction that regresses (a rise of p99, a fall of
    rate), so that a bound reads as the change it forbids."""
    bounds = {}
    for part in [p.strip() for p in (text or "").split(",")]:
        m = BOUND_RE.match(part)
        if not m:
            raise BadBound(
                f"--fail-on: '{part}' is not METRIC=±N% (e.g. --fail-on 'p99=+10%,rate=-5%'; "
                "loss in points: loss=+0.1pt)"
            )
        name, sign, n, unit = m.groups()
        metric = METRICS.get(name)
        if metric is None:
            raise BadBound(f"--fail-on: unknown metric '{name}' (known: {', '.join(METRICS)})")
        if (unit == "pt") != (metric.kind == "points"):
            want = "pt (percentage points), e.g. loss=+0.1pt" if metric.kind == "points" else "%, e.g. p99=+10%"
            raise BadBound(f"--fail-on: {name}'s bound is in {want}; got '{part}'")
        bound = float(n) * (1 if sign == "+" else -1)
        if bound * metric.worse <= 0:
            way = "rise" if metric.worse > 0 else "fall"
            fix = f"{name}={'+' if metric.worse > 0 else '-'}{n}{unit or ''}"
            raise BadBound(f"--fail-on: {name} regresses when it {way}s: write {fix}; got '{part}'")
        if name in bounds:
            raise BadBound(f"--fail-on: {name} is bounded twice: give one bound per metric")
        bounds[name] = bound
    return bounds


def breach(v, bound):
    """A sentence when verdict v breaches bound (the whole interval beyond it), else None."""
    if v is None:
        return None
    w_lo = min(v.metric.worse * v.low, v.metric.worse * v.high)
    if w_lo <= v.metric.worse * bound or abs(v.cand - v.base) < v.least:
        return None
    k = v.metric.kind
    return (
        f"{v.metric.name} regressed by {pct(v.change, k)} (median {v.base:.{v.metric.decimals}f} -> "
        f"{v.cand:.{v.metric.decimals}f}; {LEVEL_PCT}% interval {pct(v.low, k)} to {pct(v.high, k)}), "
        f"wholly beyond the bound {pct(bound, k)}"
    )
