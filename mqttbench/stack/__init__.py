"""The stack a run measures with: a broker, InfluxDB, Telegraf and
node_exporter, natively (native.py) or under compose (compose.py), behind
one interface (base.py), so that what runs on it never asks which.
open_stack() picks one."""

from mqttbench.stack.base import Influx, Service, Stack, StackError
from mqttbench.stack.compose import ComposeStack
from mqttbench.stack.native import NativeStack

__all__ = ["Influx", "Service", "Stack", "StackError", "open_stack"]


def open_stack(kind, broker=None, environ=None):
    """The stack of that kind ("native" or "compose") for broker."""
    return (ComposeStack if kind == "compose" else NativeStack)(broker, environ)
