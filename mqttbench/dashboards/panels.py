"""The panels of the dashboards (mqttbench/dashboards/__main__.py and the
modules of its dashboards): the Dashboard that places them, their colours
by value, line shapes and axes, so that every dashboard draws alike."""

from mqttbench import flux_filters as ff
from mqttbench.brokers import facts as broker_facts
from mqttbench.dashboards.flux import DS, RATE_REACHED, SYS_INTERVAL_S, k6_sum
from mqttbench.dashboards.variables import ANNOTATIONS, VARIABLES

# Dashboard JSON schema version. 41 is at or below the latest version of
# Grafana 12.2.1's migrator (41 or 42: see tests/dashboards/test_grafana_upstream.py),
# and the migrations 40-42 change nothing in these dashboards (refresh is a
# string, no timepicker.time_options, no hideFrom overrides).
SCHEMA_VERSION = 41


# ---- Panels ------------------------------------------------------------------
def thresholds(*steps):
    """Colours by value: the first step from -infinity (null in JSON)."""
    return {"mode": "absolute", "steps": [{"color": c, "value": v} for c, v in steps]}


# Stats: a count of failures is good only at 0; delivery only at 100 %
# (a QoS >= 1 run fails on a single loss: k6/lib/scenario.js mqtt_lost);
# the rate ratio from RATE_REACHED on.
COUNT_COLOURS = thresholds(("green", None), ("red", 1))
DELIVERY_COLOURS = thresholds(("red", None), ("green", 100))
RATIO_COLOURS = thresholds(("red", None), ("green", RATE_REACHED))
# Line shapes: a value that holds until the next one (a step start, a $SYS
# value published on change), or that covers the span before its point (a
# rate since the previous report).
HOLDS, COVERS_BEFORE = "stepAfter", "stepBefore"


def right_axis(label):
    """A series' own axis, on the right, labelled: Grafana gives series one
    scale only when their unit, range, placement and label all agree
    (Grafana's buildScaleKey, of grafana-ui's uPlot config)."""
    return {"custom.axisPlacement": "right", "custom.axisLabel": label}


class Dashboard:
    def __init__(self, uid, title, description, variables=VARIABLES, annotations=ANNOTATIONS, since="now-30m"):
        self.uid, self.title, self.description = uid, title, description
        self.variables, self.annotations, self.since = variables, annotations, since
        self.panels, self.x, self.y, self.line_h = [], 0, 0, 0

    def _place(self, w, h):
        if self.x + w > 24:
            self.x, self.y, self.line_h = 0, self.y + self.line_h, 0
        pos = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.x += w
        self.line_h = max(self.line_h, h)
        return pos

    def row(self, title, repeat):
        """A row repeated by a variable: one copy per value (one for a
        single-value variable), its panels bound to that value."""
        if self.x:  # a row starts a line of its own
            self.x, self.y, self.line_h = 0, self.y + self.line_h, 0
        pos = self._place(24, 1)
        self.panels.append(
            {"id": len(self.panels) + 1, "type": "row", "title": title, "collapsed": False, "repeat": repeat}
            | {"gridPos": pos, "panels": []}
        )
        return self

    def panel(self, title, queries, unit="short", kind="timeseries", w=12, h=8, description="", **field):
        """field: decimals, min, colours (thresholds), line (a line shape
        for every series, or {series name: shape}), axis (the label of the
        axis the series are drawn on), series ({series name: {property:
        value}}: an axis of its own, say) and no_value (what the panel says
        when the query has no data, instead of "No data")."""
        targets = [{"refId": chr(65 + i), "datasource": DS, "query": q} for i, q in enumerate(queries)]
        defaults = {"unit": unit}
        props = {name: dict(ps) for name, ps in field.get("series", {}).items()}
        if "decimals" in field:
            defaults["decimals"] = field["decimals"]
        if "no_value" in field:
            # Grafana writes a panel's noValue where it would write "No data"
            # (PanelDataErrorView), and in a stat in place of the value.
            defaults["noValue"] = field["no_value"]
        if kind == "timeseries":
            # Rates, counts, bytes, durations and shares are never negative:
            # an axis from 0 does not zoom into a flat line's noise
            # (4.00 K, 4 K, 4.00 K...).
            defaults["min"] = field.get("min", 0)
            custom = {}
            line = field.get("line")
            if isinstance(line, str):
                custom["lineInterpolation"] = line
            for name, shape in (line or {}).items() if isinstance(line, dict) else ():
                props.setdefault(name, {})["custom.lineInterpolation"] = shape
            if "axis" in field:
                custom["axisLabel"] = field["axis"]
            if custom:
                defaults["custom"] = custom
        overrides = [
            {"matcher": {"id": "byName", "options": name}, "properties": [{"id": k, "value": v} for k, v in ps.items()]}
            for name, ps in props.items()
        ]
        p = {
            "id": len(self.panels) + 1,
            "type": kind,
            "title": title,
            "description": description,
            "datasource": DS,
            "gridPos": self._place(w, h),
            "targets": targets,
            "fieldConfig": {"defaults": defaults, "overrides": overrides},
            "options": {},
        }
        if kind == "stat":
            defaults["color"] = {"mode": "thresholds"}
            defaults["thresholds"] = field["colours"]
            # The value alone: the panel's title says what it is.
            p["options"] = {
                "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "colorMode": "value",
                "graphMode": "none",
                "textMode": "value",
            }
        self.panels.append(p)
        return self

    def json(self):
        return {
            "id": None,
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": ["mqtt-bench"],
            "timezone": "browser",
            "editable": True,
            "schemaVersion": SCHEMA_VERSION,
            "version": 1,
            "refresh": "5s",
            "time": {"from": self.since, "to": "now"},
            "graphTooltip": 1,
            "templating": {"list": self.variables},
            "annotations": {"list": self.annotations},
            "panels": self.panels,
        }


SEARCH_SUM = " With a capacity search chosen in run_id: the sum over all its trials."
# Who publishes its series as $SYS topics (broker.toml [metrics] measurement), by name.
SYS_BROKERS = list(
    dict.fromkeys(
        broker_facts.load(b)["name"]
        for b in broker_facts.names()
        if broker_facts.load(b)["metrics"]["measurement"] == ff.MOSQUITTO_SYS
    )
)
SYS_NOTE = (
    f" {' and '.join(SYS_BROKERS)} {'publishes' if len(SYS_BROKERS) == 1 else 'publish'} each $SYS topic every "
    f"sys_interval ({SYS_INTERVAL_S} s) and only when it changed: a value holds until the next"
)


def count_stat(board, title, metric, description, w=6):
    board.panel(title, [k6_sum(metric, title.lower())], "short", "stat", w=w, h=5, description=description, decimals=0,
                colours=COUNT_COLOURS)  # fmt: skip
