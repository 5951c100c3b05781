"""scripts/compare.sh: a comparison in one command, the same scenario (or the
same capacity search) on each broker in turn, with equal limits, then one
report with a column per broker: reports/compare-<id>/compare.md (+ charts,
results.json).

Usage: scripts/compare.sh --broker mosquitto,emqx,nanomq,vernemq [--native|--compose]
                          [--target NAME=URL ...] [--scenario p2p] [--search]
                          [--id ID] [--cpu-target 75] [-e NAME=VALUE ...]
                          [--search options: --qos --p99-ms --trial --budget --start-rate --max-rate --precision]
  --broker B,B...   brokers this stack starts (brokers/B), one after another: natively
                    (scripts/stack.sh; those with [native] in their broker.toml) or
                    under compose (its profile up, the run, then that broker's
                    services stopped; InfluxDB and Grafana stay up; equal
                    limits: BROKER_CPUS/BROKER_MEMORY in .env). Default mode:
                    compose when Docker and every broker's image are here.
  --target N=URL    a broker already running (another host, another config):
                    not started or stopped; unreachable ones are marked.
  --target N=URL,pid=P  (or ,process=NAME) on this host: its process's CPU
                    and RSS measured during its run by Telegraf's procstat
                    (telegraf/native/procstat.conf, as for the stack's own
                    broker), into the native stack's InfluxDB.
  --search          a capacity search per broker (scripts/capacity.sh)
                    instead of one run; --cpu-target and its own options
                    (--qos 1, --p99-ms 50, --trial 30s, --budget 15m, ...) go to it.
  -e NAME=VALUE     scenario parameters, the same for every broker (README:
                    Scenarios); RUN_ID, BROKER and MQTT_URL are set per broker.
  --id ID           the comparison's id (default <scenario>-<time>-<random>);
                    each broker's run is <id>-<name>.
  --impair P,P...   each managed broker under each network profile in turn
                    (scripts/bench.sh --impair; none: no impairment), natively:
                    a column per broker and profile, <broker>-<profile>.
  --run FOLDER      a saved run's folder (reports/<run_id>, from here or elsewhere), twice or
                    more: those runs side by side from what their folders saved; nothing is
                    run and InfluxDB is not asked (--out DIR: where compare-<time>/ goes).
  --docs FILE       also this comparison's section of a docs page (e.g. docs/brokers-compared.md):
                    the date, machine, load average, this command, the brokers' versions and
                    settings and the tables; the section of the same scenario and QoS is
                    replaced, the rest of the page kept (mqttbench/report/comparison/docs_page.py).
Rounds and regressions (docs/comparison.md):
  --rounds N           each column runs N times, alternating (A B A B ...), so that
                       a busy spell of the host weighs on every column alike; each
                       round is a run of its own, <id>-<name>-r<k>; a cell is the
                       median of its rounds, every round's value beside it.
  --baseline NAME      each other column, per metric, against column NAME: the change
                       of the medians, its bootstrap interval and a word (regressed,
                       improved, no change beyond noise) (mqttbench/report/comparison/regress.py).
  --fail-on BOUNDS     e.g. 'p99=+10%,rate=-5%,broker_cpu_per_msg=+10%': exit 4 when a
                       metric regressed with its whole interval beyond its bound
                       (after the report is written). Metrics: rate, p50, p99,
                       broker_cpu_per_msg, rss, conn_rate, loss (in points: loss=+0.1pt).
  --save-baseline FILE the baseline column's rounds (or the only column's), with what
                       judges comparability: scenario, parameters, versions, host.
  --against FILE       a saved baseline as the baseline column; refused when the
                       scenario or a parameter differs, a warning when host or
                       generator do.
A broker that does not start, or cannot be reached, is marked in its column
with the reason, and the others still run. Exit code: 0 every broker ran;
1 some broker was marked (the report is written all the same); 2 bad input;
4 a --fail-on bound was breached (after the report is written)."""

USAGE = __doc__
