"""python -m mqttbench stack: the stack a run measures with.

  up [--broker NAME]        start it (natively, NAME: brokers/NAME with a [native] table)
  ensure [--broker NAME]    up, unless it runs already (refused when it runs another broker)
  down                      stop what up started (data kept in $MQTTBENCH_STATE)
  status [SERVICE]          exit 3 when SERVICE (with none named: any) is not running
  restart|stop|start SERVICE  one service, with the settings up recorded

--compose: the compose stack (docker compose --profile NAME) instead of the
native one. Natively, SERVICE is influxd, node_exporter, broker or telegraf."""

import argparse
import sys

from mqttbench.outcome import end
from mqttbench.stack import StackError, open_stack


def parser():
    ap = argparse.ArgumentParser(
        prog="scripts/stack.sh",
        usage="%(prog)s [--compose] up|ensure [--broker NAME] | down | status [SERVICE] | restart|stop|start SERVICE",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", choices=["up", "ensure", "down", "status", "restart", "stop", "start"])
    ap.add_argument("service", nargs="?", help="one service (status, restart, stop, start)")
    ap.add_argument("--broker", help="the broker (default: BROKER, else mosquitto)")
    ap.add_argument("--compose", action="store_true", help="the compose stack, not the native one")
    return ap


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    needs_service = args.command in ("restart", "stop", "start")
    if needs_service != bool(args.service) and args.command != "status":
        ap.error(f"{args.command} takes {'a SERVICE' if needs_service else 'no SERVICE'}")
    stack = open_stack("compose" if args.compose else "native", args.broker)
    try:
        if args.command == "status":
            rc, services = 0, stack.status(args.service)
            for s in services:
                stale = f" (stale pid file: {s.why})" if s.why else ""
                state = f"running (pid {s.pid})" if s.running else f"stopped{stale}"
                print(f"{s.name:<14} {state}")
                rc = rc if s.running else 3
            if not args.service and (name := stack.running_broker(services)):
                print(f"{'broker name':<14} {name}")
            return rc
        if needs_service:
            stack.service(args.command, args.service)
        else:
            getattr(stack, args.command)()
    except StackError as e:
        return end(e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
