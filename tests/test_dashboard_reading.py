"""The dashboards as a workshop reads them (issue 34): what a panel draws
after a real p2p run on Mosquitto, or from points as k6 writes them, must
not mislead a reader who knows nothing of how it was computed: no partial
second drawn as a rate, and a variable that filters."""

import test_dashboard_legends as legends
from conftest import bind, load_dashboards
from test_dashboard_legends import series

# The run the legends are checked on: a module fixture, run again here.
p2p_run = legends.p2p_run

# The p2p_run fixture's steps (msg/s).
STEPS = (100, 200)


def panel(title):
    return next(p for d in load_dashboards().values() for p in d["panels"] if p["title"] == title)


def test_rates_are_drawn_in_whole_seconds_of_the_run(stack, p2p_run):
    # The first window began before the run, the last holds its final
    # partial second (and k6's closing push): drawn, they read as a rate
    # the generator never had (a run at 1,000 msg/s drew 1,205 published
    # and a target of 333 in its last window).
    start, run_id = p2p_run
    drawn = series(stack, "TPS in and out (msg/s)", start, run_id)
    drawn |= series(stack, "Achieved vs target rate (msg/s)", start, run_id)
    assert set(drawn) == {"published", "received", "achieved", "target"}
    for name, points in drawn.items():
        values = [v for _, v in points]
        assert values, name
        assert min(STEPS) * 0.95 <= min(values) and max(values) <= max(STEPS) * 1.05, (name, values)


def test_the_scenario_variable_lists_its_runs_and_filters_the_k6_series(stack, p2p_run):
    start, run_id = p2p_run
    variables = [v["name"] for v in load_dashboards()["benchmark-overview.json"]["templating"]["list"]]
    assert variables.index("scenario") < variables.index("run_id")  # chosen first, it lists the runs
    run_ids = next(v["query"] for v in load_dashboards()["benchmark-overview.json"]["templating"]["list"]
                   if v["name"] == "run_id")  # fmt: skip

    def runs(scenario):
        return {r["_value"] for r in stack.flux(bind(run_ids, start, run_id, scenario))}

    assert run_id in runs("p2p") and run_id not in runs("fanout")
    k6_panels = [(p["title"], t["query"]) for d in load_dashboards().values() for p in d["panels"]
                 for t in p.get("targets", []) if "${run_id}" in t["query"]]  # fmt: skip
    assert k6_panels
    for title, q in k6_panels:
        assert "${scenario}" in q, title
        assert not stack.flux(bind(q, start, run_id, "fanout")), title
