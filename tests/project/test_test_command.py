"""The test command's Go half (scripts/go-test.sh, which scripts/test.sh runs
beside pytest and whose exit status fails it): a failing Go test fails it."""

import subprocess

from conftest import ROOT


def test_a_failing_go_test_fails_the_go_half_of_the_test_command():
    # A real failure of `go test`: with a 1 ms timeout each package's test
    # binary panics. It failed CI's run once and still passed as `go vet`'s 0
    # (r36): the Go tests were a function on the left of `||`.
    r = subprocess.run(
        [str(ROOT / "scripts/go-test.sh"), "-run", "TestPollerCountsSharedReads", "-timeout", "1ms"],
        text=True,
        capture_output=True,
        timeout=900,
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert "test timed out after 1ms" in out, out[-3000:]
