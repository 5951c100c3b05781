"""The generator benchmark's CPU split (mqttbench/generator_bench/cpu.py):
the share of a process's CPU in its own code and in the kernel, read right
for a process that, like a fan-out publisher, wakes every 10 ms on its own
timer and works for a moment."""

import shutil
import subprocess
import sys
import time

import pytest

from mqttbench.generator_bench.cpu import CpuPhase

# Every 10 ms: 1 ms in its own code (a clock read in the vDSO, no system
# call), then 1 ms in the kernel (1 MB reads of /dev/zero), then asleep.
HALF_AND_HALF = """
import os, time
fd, buf = os.open("/dev/zero", os.O_RDONLY), bytearray(1 << 20)
t = time.perf_counter()
while True:
    end = time.perf_counter() + 0.001
    while time.perf_counter() < end:
        pass
    end = time.perf_counter() + 0.001
    while time.perf_counter() < end:
        os.readv(fd, [buf])
    t += 0.010
    time.sleep(max(0, t - time.perf_counter()))
"""


@pytest.mark.skipif(not shutil.which("perf"), reason="perf is not installed: scripts/setup/debian.sh")
def test_a_process_paced_by_its_own_timer_splits_half_and_half_run_after_run():
    """/proc's utime and stime are split by the scheduler's 4 ms tick, which
    meets a 10 ms wake-up at the same moment of it all run long: this
    process read 4% and then 100% in its own code (a fan-out run's user
    share, 6% and then 18%)."""
    shares = []
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-c", HALF_AND_HALF])
        try:
            time.sleep(0.5)
            phase = CpuPhase(p.pid)
            time.sleep(3)
            split = phase.stop()
        finally:
            p.kill()
            p.wait()
        assert split.cpu > 0.3 and abs(split.user + split.system - split.cpu) < 0.01, split
        shares.append(round(split.user / split.cpu, 2))
    assert all(0.35 <= s <= 0.65 for s in shares), f"{split.split_by}: own code's share run by run {shares}"
