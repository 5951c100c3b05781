"""The suite writes nothing into the checkout: what `git status --ignored`
lists at the end of a session that it did not list at its start (a report
under reports/, a state dir, a cache) fails the session, named. Its runs go
to the session's results folder (MQTTBENCH_RESULTS, conftest.py). A pytest
plugin of conftest.py; checked once, by the process that runs the session
(pytest-xdist's controller, not its workers)."""

import subprocess

from conftest import ROOT

# Paths the suite may leave, each for a reason: the k6 link a user's first
# command makes too (scripts/setup.sh).
ALLOWED = ("bin/",)


def checkout_entries():
    p = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
        cwd=ROOT, text=True, capture_output=True,
    )  # fmt: skip
    return None if p.returncode else {line[3:] for line in p.stdout.splitlines()}


def _controller(config):
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session):
    if _controller(session.config):
        session.config.stash_checkout = checkout_entries()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "stash_checkout", None)
    if not _controller(session.config) or before is None:
        return
    new = sorted(p for p in (checkout_entries() or set()) - before if not p.startswith(ALLOWED))
    # __pycache__ of a run without scripts/test.sh (PYTHONPYCACHEPREFIX) is Python's, not a test's.
    new = [p for p in new if "__pycache__/" not in p]
    if new:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        shown = "\n  ".join(new[:20]) + ("\n  ..." if len(new) > 20 else "")
        reporter.write_line(
            f"error: the tests wrote into the checkout ({len(new)} paths; or they were edited during the run):"
            f"\n  {shown}",
            red=True,
        )
        session.exitstatus = 1
