#!/usr/bin/env bash
# The native stack on loopback: influxd, Telegraf, node_exporter and a
# broker, using the same config files as compose (mqttbench/stack/).
# Usage: scripts/stack.sh up [--broker NAME] | down | status [SERVICE]
#        scripts/stack.sh restart|stop|start SERVICE   (--help: the rest)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
exec python3 -P -m mqttbench.stack "$@"
