"""The extension's public API is what a scenario author uses, and index.d.ts
describes exactly that: every value it declares is exported by k6/x/mqtt,
and every export is declared. What k6/lib calls internally lives in
k6/x/mqtt/internal, which index.d.ts does not describe."""

import json
import re

from conftest import ROOT
from k6_runs import run_k6

SCRIPT = """
import mqtt from 'k6/x/mqtt';
import internal from 'k6/x/mqtt/internal';
export const options = { vus: 1, iterations: 1 };
export default function () {}
export function handleSummary() {
  return { stdout: JSON.stringify({ public: Object.keys(mqtt), internal: Object.keys(internal) }) };
}
"""


def declared():
    """The runtime values index.d.ts declares (not its types and interfaces)."""
    text = (ROOT / "k6/extension/index.d.ts").read_text()
    return set(re.findall(r"^export declare (?:function|const|let|var|class|enum) (\w+)", text, re.M))


def exports(k6_bin, tmp_path):
    script = tmp_path / "exports.js"
    script.write_text(SCRIPT)
    p, _ = run_k6(k6_bin, script, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)


def test_index_d_ts_declares_exactly_the_public_exports_and_none_of_the_internal_ones(k6_bin, tmp_path):
    got = exports(k6_bin, tmp_path)
    public, internal = set(got["public"]), set(got["internal"])
    assert declared() == public, declared() ^ public
    assert not declared() & internal
    # What the issue named plumbing is internal.
    assert {"addStep", "markCompleted", "checkSamples", "claimResult", "segment", "share"} <= internal
    assert {"setPlan", "summary", "rateShortfalls", "nothingReceived"} <= internal
