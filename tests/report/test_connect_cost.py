"""The broker's CPU per new connection (report.connect_cost): the connect
ramp read off the result's timeline, the CPU integrated over it from
samples that each hold the mean since the one before."""

from mqttbench.report.connect_cost import broker_cpu_per_connect, cpu_seconds, ramp
from mqttbench.report.results import Run as ResultRun


class Run(ResultRun):
    """A result whose timeline holds these open connections, a second apart from 10 s."""

    def __init__(self, counts):
        self.data = {"timeline": [{"t": 10_000 + 1000 * i, "connections": n} for i, n in enumerate(counts)]}


def test_the_ramp_ends_the_second_every_connection_is_open():
    assert ramp(Run([100, 200, 300, 300, 300])) == (9_000, 12_000, 300)
    assert ramp(Run([0, 0])) is None and ramp(Run([])) is None


def test_cpu_is_integrated_over_the_ramp_only():
    # 50% of a core from 10 s to 14 s, idle after; samples each 2 s apart.
    samples = [(10_000, 0.0), (12_000, 50.0), (14_000, 50.0), (16_000, 0.0)]
    assert cpu_seconds(samples, 10_000, 14_000) == (2.0, 2_000)
    # Half of a sample's interval inside the ramp counts for half.
    assert cpu_seconds(samples, 11_000, 14_000) == (1.5, 2_000)


def test_a_connection_costs_the_ramps_cpu_over_the_connections_it_opened():
    samples = [(t, 50.0) for t in range(8_000, 20_000, 1_000)]
    c = broker_cpu_per_connect(Run([100, 200, 300, 300]), samples)
    # 3 s at half a core: 1.5 CPU-s for 300 connections.
    assert c["broker_cpu_ms_per_connect"] == 5.0 and c["connect_ramp_s"] == 3.0


def test_a_ramp_shorter_than_two_samples_says_so_instead_of_a_figure():
    samples = [(t, 50.0) for t in range(0, 30_000, 5_000)]
    c = broker_cpu_per_connect(Run([300, 300]), samples)
    assert c["broker_cpu_ms_per_connect"] is None
    assert "shorter than two broker CPU samples (5 s apart)" in c["connect_cost_note"]
    assert broker_cpu_per_connect(Run([300]), [])["connect_cost_note"] == (
        "no broker process CPU samples over the connect ramp"
    )
