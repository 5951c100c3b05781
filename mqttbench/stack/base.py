"""The interface every stack implements (native.py, compose.py) and what
its methods return; what runs on a stack asks only this."""

from dataclasses import dataclass

from mqttbench.outcome import Stop, log, warn

__all__ = ["Influx", "Service", "Stack", "StackError", "log", "warn"]


class StackError(Stop):
    """A stack that cannot start or answer; the message names the fix."""

    def __init__(self, message, tail=None):
        super().__init__(message, 1, tail)


@dataclass(frozen=True)
class Service:
    """One service of a stack: pid (or container id) while it runs; why it
    does not when something is wrong (a stale pid file)."""

    name: str
    pid: int | str | None
    why: str = ""

    @property
    def running(self):
        return self.pid is not None


@dataclass(frozen=True)
class Influx:
    """Where a run's series are: InfluxDB's address, organisation, bucket
    and token (None when the stack has none to give)."""

    url: str
    org: str
    bucket: str
    token: str | None


class Stack:
    """up, down, status; the broker it runs; the broker's URL as the host
    sees it; InfluxDB; where k6 sends its metrics."""

    kind = ""

    def __init__(self, broker):
        self.broker = broker

    def up(self):
        raise NotImplementedError

    def down(self):
        raise NotImplementedError

    def status(self, service=None):
        raise NotImplementedError

    def running_broker(self, services=None):
        """The broker this stack runs now, or None when it is down; services:
        what status() answered, when the caller has it already."""
        raise NotImplementedError

    def influx(self):
        raise NotImplementedError

    def broker_url(self, scheme="mqtt"):
        raise NotImplementedError

    def k6_out(self):
        raise NotImplementedError

    def broker_cpus(self):
        """(CPUs, basis): what the broker's CPU % is normalised to, and how it is read."""
        raise NotImplementedError

    def ensure(self):
        """Up unless it runs already; refused when it runs another broker."""
        running = self.running_broker()
        if running is None:
            self.up()
        elif running != self.broker:
            raise StackError(f"the {self.kind} stack runs broker '{running}': scripts/stack.sh down first")
        else:
            log(f"{self.kind} stack already up")

    def _influx(self, url, token):
        return Influx(url, self.env["INFLUXDB_ORG"], self.env["INFLUXDB_BUCKET"], token)
