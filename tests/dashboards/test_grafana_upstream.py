"""Grafana cannot run here, so the dashboards and the provisioning are held
against what Grafana 12.2.1 (GRAFANA_IMAGE in .env) reads, as its source and
documentation say. Each FACTS row is one behaviour of Grafana, the citation
it was checked in, and the check of our files against it.

The sources were read in the stored index of grafana/grafana (the v12.2.1
tag itself could not be fetched: the repository is 3.2 GB); a row names the
commit it read, and where 12.2.1 could lie on either side of a change, the
check accepts both sides."""

import argparse
import importlib.util
import json
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from dashboard_answers import dashboard_queries, load_dashboards

GRAFANA = ROOT / "grafana"
DS_FILE = GRAFANA / "provisioning/datasources/influxdb.yaml"
PROVIDER_FILE = GRAFANA / "provisioning/dashboards/mqtt-bench.yaml"
DS_REF = {"type": "influxdb", "uid": "mqtt-bench-influxdb"}
TOKEN_FILE = "/run/secrets/mqtt-bench/influx_token"


def panels():
    """Every panel but the rows."""
    for name, d in load_dashboards().items():
        for p in d["panels"]:
            if p["type"] != "row":
                yield name, p


def rows():
    for name, d in load_dashboards().items():
        for p in d["panels"]:
            if p["type"] == "row":
                yield name, p


def datasource():
    return yaml.safe_load(DS_FILE.read_text())["datasources"][0]


def provider():
    return yaml.safe_load(PROVIDER_FILE.read_text())["providers"][0]


def grafana_service():
    """compose.yaml's grafana service as text, with its scalar aliases
    (`- *secrets`) resolved: no YAML library and no compose binary needed."""
    text = (ROOT / "compose.yaml").read_text()
    m = re.search(r"^  grafana:\n((?:    .*\n|\s*\n)+)", text, re.M)
    assert m, "compose.yaml has no grafana service"
    anchors = dict(re.findall(r"&([\w-]+) ([^\s{}\[\]]+)$", text, re.M))
    return re.sub(r"\*([\w-]+)", lambda a: anchors.get(a.group(1), a.group(0)), m.group(1))


def compose_env(service, key, default=None):
    m = re.search(rf"^\s+{key}: *(.*)$", service, re.M)
    return m.group(1).strip().strip("\"'") if m else default


def mounts(service):
    return dict(re.findall(r"^\s+- \"?([^:\s\"]+):([^:\s\"]+)(?::ro)?\"?$", service, re.M))


# --- the checks ---------------------------------------------------------------


def check_panel_types():
    # Core panel plugins of 12.2.1 that these dashboards may use.
    used = {p["type"] for _, p in panels()}
    assert used <= {"timeseries", "stat", "table"}, used


def check_rows():
    for name, d in load_dashboards().items():
        variables = {v["name"] for v in d["templating"]["list"]}
        for r in (p for p in d["panels"] if p["type"] == "row"):
            assert set(r) <= {"id", "type", "title", "collapsed", "repeat", "gridPos", "panels"}, (name, r["title"])
            # Expanded: its panels are those after it in the list, up to the
            # next row; a repeat names a variable (one copy per value).
            assert r["collapsed"] is False and r["panels"] == [], (name, r["title"])
            assert r.get("repeat", next(iter(variables))) in variables, (name, r["title"])
            assert (r["gridPos"]["w"], r["gridPos"]["h"], r["gridPos"]["x"]) == (24, 1, 0), (name, r["title"])


def check_stat_options():
    enums = {
        "colorMode": {"background", "background_solid", "none", "value"},
        "graphMode": {"area", "line", "none"},
        "textMode": {"auto", "name", "none", "value", "value_and_name"},
        "justifyMode": {"auto", "center"},
    }
    allowed = set(enums) | {"reduceOptions", "orientation", "text", "wideLayout", "showPercentChange"}
    for name, p in panels():
        if p["type"] != "stat":
            continue
        opts = p["options"]
        assert set(opts) <= allowed, (name, p["title"], set(opts) - allowed)
        for key, values in enums.items():
            assert opts.get(key, next(iter(values))) in values, (name, p["title"], key)
        assert set(opts["reduceOptions"]) <= {"calcs", "fields", "values", "limit"}, (name, p["title"])
        assert opts["reduceOptions"]["calcs"] == ["lastNotNull"], (name, p["title"])


def check_timeseries_options():
    for name, p in panels():
        if p["type"] == "timeseries":
            assert set(p["options"]) <= {"legend", "tooltip", "timezone", "orientation"}, (name, p["title"])


def check_units():
    known = {"short", "none", "percent", "percentunit", "ms", "s", "bytes", "decbytes", "Bps", "bps", "ops"}
    for name, p in panels():
        assert set(p["fieldConfig"]) == {"defaults", "overrides"}, (name, p["title"])
        assert p["fieldConfig"]["defaults"]["unit"] in known, (name, p["title"])


LINE_INTERPOLATION = {"linear", "smooth", "stepAfter", "stepBefore"}
AXIS_PLACEMENT = {"auto", "top", "right", "bottom", "left", "hidden"}
# What a series' override may set: its line shape, an axis of its own.
OVERRIDES = {
    "custom.lineInterpolation": LINE_INTERPOLATION.__contains__,
    "custom.axisPlacement": AXIS_PLACEMENT.__contains__,
    "custom.axisLabel": lambda v: isinstance(v, str),
}


def check_field_config():
    for name, p in panels():
        d = p["fieldConfig"]["defaults"]
        assert set(d) <= {"unit", "decimals", "min", "custom", "color", "thresholds", "noValue", "links"}, (
            name,
            p["title"],
        )
        for link in d.get("links", []):
            # A data link: its title and URL; ${__data.fields.<name>} is the clicked row's value of that field.
            assert set(link) == {"title", "url"} and p["type"] == "table", (name, p["title"])
            assert set(re.findall(r"\$\{(__\w+)", link["url"])) <= {"__data"}, (name, p["title"])
        assert all(isinstance(d.get(k, 0), int) for k in ("decimals", "min")), (name, p["title"])
        assert isinstance(d.get("noValue", ""), str), (name, p["title"])
        assert set(d.get("custom", {})) <= {"lineInterpolation", "axisLabel"}, (name, p["title"])
        assert isinstance(d.get("custom", {}).get("axisLabel", ""), str), (name, p["title"])
        assert d.get("custom", {}).get("lineInterpolation", "linear") in LINE_INTERPOLATION, (name, p["title"])
        for o in p["fieldConfig"]["overrides"]:
            assert o["matcher"]["id"] == "byName" and isinstance(o["matcher"]["options"], str), (name, p["title"])
            for prop in o["properties"]:
                assert prop["id"] in OVERRIDES and OVERRIDES[prop["id"]](prop["value"]), (p["title"], prop)
        if "thresholds" in d:
            t = d["thresholds"]
            assert d["color"] == {"mode": "thresholds"} and t["mode"] == "absolute", (name, p["title"])
            # The first step is the base, from -Infinity (saved as null).
            values = [s["value"] for s in t["steps"]]
            assert values[0] is None and values[1:] == sorted(values[1:]), (name, p["title"])
            assert all(isinstance(s["color"], str) for s in t["steps"]), (name, p["title"])


def check_series_named_by_field():
    # A time series' table: _time, _value and _field, its only group-key
    # column; the backend names the value by it and keeps no label.
    tail = '  |> keep(columns: ["_time", "_value", "_field"])\n  |> group(columns: ["_field"])'
    for name, p in panels():
        if p["type"] == "timeseries":
            for t in p["targets"]:
                q = t["query"]
                assert q.endswith(tail) or q.rsplit("\n", 1)[1].startswith("union(tables: [b"), (name, p["title"])
                assert q.count(tail) >= 1, (name, p["title"])


def check_schema_version():
    for name, d in load_dashboards().items():
        assert 13 <= d["schemaVersion"] <= 41, (name, d["schemaVersion"])
        # What the migrations up to the latest (40 refresh, 41 time_options,
        # 42 hideFrom, 43 formatTime) would change: nothing here.
        assert isinstance(d["refresh"], str), name
        assert "time_options" not in d.get("timepicker", {}), name
        for _, p in panels():
            assert "custom.hideFrom" not in json.dumps(p["fieldConfig"]["overrides"]), (name, p["title"])
            assert all(t.get("id") != "formatTime" for t in p.get("transformations", [])), (name, p["title"])


def check_refresh_interval():
    for name, d in load_dashboards().items():
        value, unit = re.fullmatch(r"(\d+)(s|m|h)", d["refresh"]).groups()
        assert int(value) * {"s": 1, "m": 60, "h": 3600}[unit] >= 5, name


def check_datasource_fields():
    ds = datasource()
    v1 = {"orgId", "version", "name", "type", "access", "url", "user", "database", "basicAuth", "basicAuthUser"}
    v1 |= {"withCredentials", "isDefault", "correlations", "jsonData", "secureJsonData", "editable", "uid"}
    assert set(ds) <= v1, set(ds) - v1
    assert (ds["type"], ds["uid"], ds["access"]) == ("influxdb", DS_REF["uid"], "proxy")
    influx = {"version", "timeInterval", "httpMode", "dbName", "organization", "defaultBucket", "maxSeries"}
    assert set(ds["jsonData"]) <= influx, set(ds["jsonData"]) - influx
    assert ds["jsonData"]["version"] == "Flux"
    assert ds["jsonData"]["organization"] and ds["jsonData"]["defaultBucket"]
    assert set(ds["secureJsonData"]) == {"token"}


def check_token_from_file():
    token = datasource()["secureJsonData"]["token"]
    m = re.fullmatch(r"\$(|__\w+){([^}]+)}", token)  # pkg/setting/expanders.go's regex
    assert m and m.groups() == ("__file", TOKEN_FILE), token
    assert "$$" not in token and "INFLUX_TOKEN" not in DS_FILE.read_text()


def check_file_secret_survives_expand_env():
    # After $__file{} the value still passes os.ExpandEnv: a `$` in the
    # token would be taken for a variable. Our generator writes [A-Za-z0-9].
    script = ROOT / "scripts/init/secrets.sh"
    if not script.exists():
        pytest.skip("no scripts/init/secrets.sh")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["sh", str(script), tmp], check=True, capture_output=True)
        assert re.fullmatch(r"[A-Za-z0-9]{20,}", Path(tmp, "influx_token").read_text())


def check_datasource_by_uid():
    for name, d in load_dashboards().items():
        ps = [p for p in d["panels"] if p["type"] != "row"]
        refs = [p["datasource"] for p in ps]
        refs += [t["datasource"] for p in ps for t in p["targets"]]
        refs += [v["datasource"] for v in d["templating"]["list"] if v["type"] == "query"]  # a textbox has none
        refs += [a["datasource"] for a in d["annotations"]["list"]]
        assert all(r == DS_REF for r in refs), name
    assert datasource()["uid"] == DS_REF["uid"]


def check_flux_macros():
    macros = {"timeRangeStart", "timeRangeStop", "windowPeriod", "bucket", "defaultBucket", "organization"}
    for board, title, q in dashboard_queries():
        for obj, attr in re.findall(r"([a-zA-Z]+)\.([a-zA-Z]+)", q):  # macros.go's fluxVariableFilterExp
            # Grafana rewrites any x.<macro> as text, and defines no v record.
            assert (obj == "v") == (attr in macros), (board, title, f"{obj}.{attr}")


def check_template_variables():
    for name, d in load_dashboards().items():
        names = {v["name"] for v in d["templating"]["list"]}
        for v in d["templating"]["list"]:
            if v["type"] == "textbox":  # a value typed in (History's reports), its default the query
                assert set(v) <= {"name", "label", "type", "query", "current", "description", "hide"}, v["name"]
                assert v["current"]["value"] == v["query"], (name, v["name"])
                continue
            assert v["type"] == "query" and v["refresh"] in (1, 2), (name, v["name"])
            # The legacy string form, which InfluxVariableSupport and the
            # editor still accept; the editor saves {refId, query} objects.
            assert isinstance(v["query"], str) and v["definition"] == v["query"], (name, v["name"])
            assert "schema.tagValues(bucket: v.defaultBucket" in v["query"], (name, v["name"])
        for board, title, q in dashboard_queries():
            if board == name:  # each board's queries, its own variables
                assert set(re.findall(r"\$\{(\w+)\}", q)) <= names, (board, title)


def check_multi_value_variables_match_as_regex():
    for name, d in load_dashboards().items():
        multi = [v for v in d["templating"]["list"] if v.get("multi")]
        for v in multi:
            # All: the allValue as it is, which matches every value.
            assert v["includeAll"] and v["allValue"] == ".*", (name, v["name"])
        for board, title, q in dashboard_queries():
            for v in multi if board == name else ():
                # Every use a whole-value match of the values chosen: (a|b), escaped.
                uses = len(re.findall(r"\$\{" + v["name"] + r"\b", q))
                assert uses == q.count("=~ /^${" + v["name"] + ":regex}$/"), (board, title, v["name"])


def check_variables_read_written_tags():
    scenario_js = (ROOT / "k6/lib/scenario.js").read_text()
    run_js = (ROOT / "k6/lib/run.js").read_text()
    telegraf = (ROOT / "telegraf/telegraf.conf").read_text()
    capacity = (ROOT / "mqttbench/capacity/trial.py").read_text()
    written = {
        "run_id": "exec.vu.metrics.tags.run_id" in scenario_js,
        "scenario": "tags: { scenario: name" in scenario_js,
        "broker": re.search(r"^\[global_tags\]\n(?:.*\n)*?\s*broker = ", telegraf, re.M) is not None,
        # The capacity search's trials: SEARCH_ID, which the scenario puts
        # on every sample.
        "search": "exec.vu.metrics.tags.search" in scenario_js and "SEARCH_ID=" in capacity,
        # Each group's flow, on its counters (the overview lists a run's
        # flows from its mqtt_connects).
        "flow": "c.tags = { flow: f.name }" in run_js,
    }
    # History's: the tags of each run's summary point, which its report writes.
    summary = re.search(r"tags = \{(.*?)\n    \}", (ROOT / "mqttbench/report/history.py").read_text(), re.S).group(1)
    for name, d in load_dashboards().items():
        for v in d["templating"]["list"]:
            for tag in re.findall(r'tag: "(\w+)"', v["query"]):
                if '"mqtt_bench_run"' in v["query"]:
                    assert f'"{tag}":' in summary, (name, v["name"], tag)
                else:
                    assert written.get(tag), (name, v["name"], tag)


def check_flux_annotations():
    for name, d in load_dashboards().items():
        for a in d["annotations"]["list"]:
            assert set(a) <= {"name", "datasource", "enable", "hide", "iconColor", "target", "filter", "builtIn"}
            assert set(a["target"]) == {"refId", "query"}, (name, a["name"])


def check_flux_annotations_map_to_events():
    # Each annotation query ends in one table of _time, text and tags and no
    # _value: a frame of those three fields, which the annotation reads by
    # name. (With _value the table would be a time series, its other columns
    # labels, and without a string field there would be no event at all.)
    end = re.compile(
        r"\n  \|> group\(\)\n(?:  \|> sort\(columns: \[\"_time\"\]\)\n)?"
        r"  \|> map\(fn: \(r\) => \(\{_time: r\._time, text: [^\n]+, tags: [^\n]+\}\)\)$"
    )
    for name, d in load_dashboards().items():
        for a in d["annotations"]["list"]:
            assert end.search(a["target"]["query"]), (name, a["name"])


def check_dashboard_provider():
    p = provider()
    keys = {"name", "orgId", "folder", "folderUid", "type", "disableDeletion", "updateIntervalSeconds"}
    assert set(p) <= keys | {"allowUiUpdates", "options"}, set(p)
    assert set(p["options"]) <= {"path", "foldersFromFilesStructure"}
    assert p["type"] == "file" and p["options"]["path"].startswith("/")
    assert not (p["options"].get("foldersFromFilesStructure") and ("folder" in p or "folderUid" in p))


def check_compose_mounts():
    service = grafana_service()
    m = mounts(service)
    assert m.get("./grafana/provisioning") == "/etc/grafana/provisioning", m
    assert m.get("./grafana/dashboards") == provider()["options"]["path"], m
    home = compose_env(service, "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    assert home and home.startswith(provider()["options"]["path"] + "/"), home
    assert (GRAFANA / "dashboards" / home.rsplit("/", 1)[1]).exists(), home
    secrets_dir = TOKEN_FILE.rsplit("/", 1)[0]
    assert secrets_dir in m.values(), f"{secrets_dir} is not mounted into grafana: {m}"


def check_admin_password_file():
    service = grafana_service()
    assert compose_env(service, "GF_SECURITY_ADMIN_PASSWORD__FILE", "").startswith("/run/secrets/")
    # run.sh exits 1 when both GF_X and GF_X__FILE are set.
    assert compose_env(service, "GF_SECURITY_ADMIN_PASSWORD") is None
    assert not re.search(r"^    env_file:", service, re.M), "env_file could set GF_SECURITY_ADMIN_PASSWORD too"


def check_browser_check_reads_grafana_dom():
    spec = importlib.util.spec_from_file_location("check_dashboards", ROOT / "tests/compose/check_dashboards.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    # The data-testid values Grafana 12 renders (data-testid-prefixed
    # selectors are attributes, the others aria-labels).
    assert check.PANEL == "data-testid Panel header "
    assert check.ERROR == "data-testid Panel status error"
    assert check.LEGEND == "data-testid VizLegend series "
    assert check.LOADING == "Panel loading bar" and f'[aria-label="{check.LOADING}"]' in check.READ_PANELS
    assert f'[data-testid="{check.ERROR}"]' in check.READ_PANELS
    assert f'[data-testid^="{check.PANEL}"]' in check.READ_PANELS
    # /d/<uid>?...&kiosk: a valueless kiosk parameter is true, the full kiosk mode.
    args = argparse.Namespace(run_id="r", broker="b", scenario="s", from_="now-15m", to="now")
    url = check.dashboard_url(check.Grafana("http://g:3000"), "u", args)
    assert url.startswith("http://g:3000/d/u?") and url.endswith("&kiosk") and "var-run_id=r" in url


def check_healthcheck_tool():
    service = grafana_service()
    test = json.loads(re.search(r"^\s+test: (\[.*\])$", service, re.M).group(1))
    image = re.search(r"^GRAFANA_IMAGE=(\S+)$", (ROOT / ".env").read_text(), re.M).group(1)
    assert image.startswith(("grafana/grafana-oss:", "grafana/grafana:")), image
    # curl in both variants; wget (busybox) only in the default Alpine one.
    tools = {"curl"} if image.endswith("-ubuntu") else {"curl", "wget"}
    assert test[0] == "CMD" and test[1] in tools, (image, test)
    assert "http://127.0.0.1:3000/api/health" in test


G = "grafana/grafana"
FACTS = [
    (
        "panel_types_are_core_panels",
        f"{G}@acfb6826 public/app/plugins/panel/timeseries/plugin.json (id timeseries); "
        f"{G} public/app/plugins/panel/stat/plugin.json (id stat); "
        f"{G}@096616e6 public/app/plugins/panel/table/plugin.json (id table)",
        check_panel_types,
    ),
    (
        "rows_are_expanded_rows_repeated_by_a_variable",
        f"{G}@1585a6e9 public/app/features/dashboard-scene/serialization/transformSaveModelToScene.ts "
        "(createSceneObjectsForPanels: an expanded row owns the panels after it up to the next row; "
        f"createRowFromPanelModel: row.repeat -> RowRepeaterBehavior); {G}@11641fb6 "
        "public/app/features/dashboard-scene/scene/layout-default/RowRepeaterBehavior.ts (performRepeat: one row per "
        f"value of getMultiVariableValues, a single-value variable's one value); {G}@a149a5cc "
        "public/app/features/dashboard-scene/utils/utils.ts (getMultiVariableValues)",
        check_rows,
    ),
    (
        "stat_options_match_panelcfg",
        f"{G}@57f8a8f3 public/app/plugins/panel/stat/panelcfg.cue (SingleStatBaseOptions, graphMode, colorMode, "
        f"justifyMode, textMode); {G}@00a25e37 packages/grafana-schema/src/common/common.gen.ts (ReduceDataOptions, "
        "BigValueColorMode, BigValueGraphMode, BigValueTextMode)",
        check_stat_options,
    ),
    (
        "timeseries_options_are_defaults",
        f"{G}@00a25e37 packages/grafana-schema/src/common/common.gen.ts (OptionsWithLegend, OptionsWithTooltip)",
        check_timeseries_options,
    ),
    (
        "units_are_value_formats",
        f"{G}@002fa1b0 packages/grafana-data/src/valueFormats/categories.ts (short, percent, percentunit, ms, "
        "bytes, Bps)",
        check_units,
    ),
    (
        "field_config_is_graph_field_config",
        f"{G}@00a25e37 packages/grafana-schema/src/common/common.gen.ts (LineInterpolation linear, smooth, "
        f"stepAfter, stepBefore; LineConfig.lineInterpolation in GraphFieldConfig; AxisPlacement auto, top, right, "
        "bottom, left, hidden; AxisConfig.axisPlacement, axisLabel); packages/grafana-data/src/types/fieldConfig.ts "
        "(FieldConfig.noValue, 'Alternative to empty string', which PanelDataErrorView shows for No data); "
        f"{G}@0853a877 "
        "packages/grafana-data/src/types/thresholds.ts (ThresholdsConfig mode absolute, steps sorted, the first "
        f"from -Infinity); {G}@06925c5a packages/grafana-data/src/types/fieldColor.ts (FieldColorModeId thresholds); "
        f"{G}@003d4a9d packages/grafana-data/src/types/dataFrame.ts (FieldConfig.links: DataLink[]); {G}@0225b1ae "
        f"packages/grafana-data/src/types/dataLink.ts (DataLink title, url); {G}@9dfc16bb "
        "public/app/features/templating/dataMacros.ts (dataMacro: ${__data.fields...} of the link's row)",
        check_field_config,
    ),
    (
        "series_are_named_by_field_alone",
        f"{G} pkg/tsdb/influxdb/flux/builder.go, the stored version with hasUsualStartStop (labels are the group "
        "key; with _time and _value the only other columns the value is named by _field, _start and _stop "
        f"dropped; else each column a field, `_value` with every label); {G}@90c18cd0 "
        "pkg/tsdb/influxdb/flux/testdata/aggregate.golden.jsonc; run against InfluxDB by "
        "tests/dashboards/test_dashboard_legends.py",
        check_series_named_by_field,
    ),
    (
        "schema_version_is_migrated_without_change",
        f"{G}@01ec8e3a apps/dashboard/pkg/migration/schemaversion/migrations.go (MIN_VERSION 9, LATEST_VERSION 42); "
        "README.md (minimum 13); v40.go, v41.go (PR #100554, Feb 2025, in 12.0), v42.go (PR #110517, Sep 2025: "
        "12.2 or 12.3), v43.go",
        check_schema_version,
    ),
    (
        "refresh_is_not_below_min_refresh_interval",
        f"{G} conf/defaults.ini [dashboards] min_refresh_interval = 5s",
        check_refresh_interval,
    ),
    (
        "influxdb_datasource_fields_are_provisionable",
        f"{G} pkg/services/provisioning/datasources/types.go (configsV1 yaml keys); {G}@1eb8b2e0 "
        "public/app/plugins/datasource/influxdb/types.ts (InfluxOptions, InfluxSecureJsonData.token); "
        f"{G}@5eb2f73e pkg/tsdb/influxdb/models/datasource_info.go; docs datasources/influxdb provisioning example "
        "(version: Flux, organization, defaultBucket, secureJsonData.token); Flux needs access proxy "
        "(datasource.ts BROWSER_MODE_DISABLED_MESSAGE)",
        check_datasource_fields,
    ),
    (
        "token_is_expanded_from_secret_file",
        f"{G}@86d4e43d pkg/services/provisioning/values/values.go (StringMapValue -> interpolateValue -> "
        f"setting.ExpandVar); {G}@c265af27 pkg/setting/expanders.go (fileExpander: os.ReadFile, TrimSpace); "
        "docs setup-grafana/configure-grafana 'Variable expansion' (file provider)",
        check_token_from_file,
    ),
    (
        "file_secret_survives_expand_env",
        f"{G}@86d4e43d pkg/services/provisioning/values/values.go (interpolateValue: ExpandVar, then os.ExpandEnv; "
        "'$$' is a literal '$')",
        check_file_secret_survives_expand_env,
    ),
    (
        "dashboards_reference_datasource_by_uid",
        f"{G} docs administration/provisioning ('uid: Sets a custom UID to reference this data source')",
        check_datasource_by_uid,
    ),
    (
        "flux_uses_only_grafana_macros",
        f"{G}@0c516318 pkg/tsdb/influxdb/flux/macros.go (fluxVariableFilterExp; v.timeRangeStart, "
        "v.timeRangeStop, v.windowPeriod, v.bucket, v.defaultBucket, v.organization replaced as text)",
        check_flux_macros,
    ),
    (
        "query_variables_use_accepted_shape",
        f"{G}@acfb6826 public/app/plugins/datasource/influxdb/variables.ts (typeof request.targets[0] === "
        f"'string'); {G}@1137a659 components/editor/variable/VariableQueryEditor.tsx (getVariableQuery: legacy "
        f"string or {{refId, query, maxDataPoints}}); {G}@00457ccc packages/grafana-data/src/types/templateVars.ts "
        "(TextBoxVariableModel: type 'textbox', query, current)",
        check_template_variables,
    ),
    (
        "multi_value_variables_match_as_regex",
        "grafana/scenes@59f4d843 packages/scenes/src/variables/interpolation/formatRegistry.ts (regex: each value "
        "escaped, several as (<value>|<value>)); grafana/scenes@54f7b920 "
        "packages/scenes/src/variables/variants/MultiValueVariable.ts (CustomAllValue.formatter: a custom allValue "
        "as it is for every format but text, percentencode and queryparam)",
        check_multi_value_variables_match_as_regex,
    ),
    (
        "variables_read_tags_the_project_writes",
        "k6/lib/scenario.js (options.tags scenario, broker; exec.vu.metrics.tags.run_id); k6/lib/run.js (a "
        "group's tags: flow); telegraf/telegraf.conf "
        "[global_tags] broker; mqttbench/capacity/trial.py (SEARCH_ID, tagged as search by k6/lib/scenario.js); "
        "mqttbench/report/history.py (the tags of a run's summary point, History's variables); run "
        "against InfluxDB by "
        "tests/compose/test_compose_and_dashboards.py",
        check_variables_read_written_tags,
    ),
    (
        "flux_annotations_are_standard_queries",
        f"{G}@350aad52 public/app/plugins/datasource/influxdb/datasource.ts (Flux: annotations = "
        "{ QueryEditor: FluxQueryEditor }, the annotation's target is a query)",
        check_flux_annotations,
    ),
    (
        "flux_annotation_columns_map_to_events",
        f"{G}@011d7202 public/app/features/annotations/executeAnnotationQuery.ts (processor = "
        "{...standardAnnotationSupport, ...datasource.annotations}: Flux sets only QueryEditor); "
        f"{G}@0d043495 public/app/features/annotations/standardAnnotationSupport.ts (getAnnotationsFromData: frames "
        "merged into one; time = field 'time' or the first time field, text = field 'text' or the first string "
        "field, tags = field 'tags' split on ','; no time or no text: no events); "
        f"{G}@f533c414 pkg/tsdb/influxdb/flux/builder.go (Init: a table with _value and a time column is a time "
        "series, its other non-underscore columns labels; else each column a field of its name); "
        f"{G}@17288e82 docs/sources/datasources/influxdb/annotations/index.md (Flux annotations: a _time column "
        "and at least one text column)",
        check_flux_annotations_map_to_events,
    ),
    (
        "dashboard_provider_fields_are_documented",
        f"{G}@9e172c7a docs/sources/administration/provisioning/index.md (providers: name, orgId, folder, "
        "folderUid, type, disableDeletion, updateIntervalSeconds, allowUiUpdates, options.path, "
        "options.foldersFromFilesStructure without folder/folderUid)",
        check_dashboard_provider,
    ),
    (
        "compose_mounts_what_provisioning_reads",
        f"{G}@78515af6 Dockerfile (GF_PATHS_PROVISIONING=/etc/grafana/provisioning); {G}@0718918 "
        "docs setup-grafana/configure-grafana/_index.md (GF_<SectionName>_<KeyName>; [dashboards] "
        "default_home_dashboard_path)",
        check_compose_mounts,
    ),
    (
        "admin_password_is_read_from_file",
        f"{G}@7a86cb53 packaging/docker/run.sh (GF_*__FILE exported without __FILE; both set: exit 1); "
        "docs setup-grafana/configure-docker",
        check_admin_password_file,
    ),
    (
        "browser_check_reads_grafana_12_dom",
        f"{G}@9483bef2 packages/grafana-e2e-selectors/src/selectors/components.ts (Panels.Panel.title "
        "'data-testid Panel header <title>', Panel.status 'data-testid Panel status <status>' (10.2.0), "
        "Panel.loadingBar 'Panel loading bar' (10.0.0), VizLegend.seriesName 'data-testid VizLegend series <name>' "
        f"(10.3.0); data-testid-prefixed ones are attributes); {G} "
        "packages/grafana-ui/src/components/PanelChrome/PanelChrome.tsx (the panel's container div carries "
        "Panel.title(title); LoadingBar ariaLabel 'Panel loading bar'), PanelStatus.tsx (its button carries "
        f"Panel.status('error')); {G}@28503c4f public/app/core/navigation/kiosk.ts (kiosk true or '1': full)",
        check_browser_check_reads_grafana_dom,
    ),
    (
        "healthcheck_tool_is_in_image",
        f"{G}@78515af6 Dockerfile (BASE_IMAGE=alpine; apk add ca-certificates bash curl tzdata musl-utils; "
        "ubuntu: apt-get install ca-certificates curl tzdata musl; the Alpine stage itself runs wget); docs "
        "setup-grafana/configure-docker (default images are Alpine, -ubuntu tags Ubuntu)",
        check_healthcheck_tool,
    ),
]


@pytest.mark.parametrize("what,citation,check", FACTS, ids=[f[0] for f in FACTS])
def test_grafana_12_2_1(what, citation, check):
    try:
        check()
    except AssertionError as e:
        raise AssertionError(f"{what} (per {citation}): {e}") from e


def test_every_fact_is_cited_and_distinct():
    assert len({f[0] for f in FACTS}) == len(FACTS)
    assert all(f[1] and f[0].islower() for f in FACTS)
