"""The README is read in five minutes and the rest lives in docs/: the README
stays short, no paragraph of it or of the docs it links runs over 10 lines,
every page of docs/ is linked from it, every relative link resolves, and the
scenarios' parameter table (docs/scenarios.md) is rendered from the one
table of parameters in code (k6/lib/params.js) and lists every scenario."""

import re
import subprocess

import pytest

from conftest import ROOT
from mqttbench.generated import scenario_params

README = ROOT / "README.md"
# Pages written by a benchmark script, not by hand (mqttbench/generator_bench/page.py,
# python -m mqttbench generator-bench instances, scripts/compare.sh --docs): their shape is the script's.
GENERATED = {"benchmarks.md", "benchmarks-instances.md", "brokers-compared.md"}


def pages():
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def prose(path):
    """(first line number, line count) of each paragraph: lines outside code
    blocks, tables and headings, a list item starting a paragraph of its own."""
    out, start, n, fence = [], 0, 0, False
    for i, line in enumerate([*path.read_text().splitlines(), ""], 1):
        item = re.match(r"\s*[-*] ", line)
        if line.startswith("```"):
            fence = not fence
        if fence or line.startswith(("```", "|", "#")) or not line.strip() or item:
            if n:
                out.append((start, n))
            start, n = (i, 1) if item and not fence else (0, 0)
            continue
        start, n = (start or i), n + 1
    return out


def test_readme_is_short():
    assert len(README.read_text().splitlines()) <= 250


@pytest.mark.parametrize("path", [p for p in pages() if p.name not in GENERATED], ids=lambda p: p.name)
def test_no_paragraph_runs_over_ten_lines(path):
    long = [f"line {start}: {n} lines" for start, n in prose(path) if n > 10]
    assert not long, f"{path.relative_to(ROOT)}: split these paragraphs: {long}"


def test_prose_counts_paragraphs_not_tables_or_code(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# T\n\none\ntwo\n\n| a |\n| b |\n\n```sh\nx\ny\n```\n- item\n  more\n- next\n")
    assert prose(page) == [(3, 2), (13, 2), (15, 1)]


def test_every_docs_page_is_linked_from_the_readme():
    text = README.read_text()
    unlinked = [p.name for p in (ROOT / "docs").glob("*.md") if f"(docs/{p.name}" not in text]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("path", pages(), ids=lambda p: p.name)
def test_relative_links_resolve(path):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.is_file():
            headings = re.findall(r"^#+ (.+)$", dest.read_text(), re.M)
            if anchor not in {slug(h) for h in headings}:
                broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)}: links to nothing: {broken}"


def test_parameter_table_is_rendered_from_params_js():
    r = subprocess.run(
        ["python3", "-m", "mqttbench.generated.scenario_params", "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def test_parameter_table_lists_every_parameter_with_its_default():
    doc = (ROOT / "docs/scenarios.md").read_text()
    names = [name for name, _, _ in scenario_params.table((ROOT / "k6/lib/params.js").read_text())]
    assert len(names) > 30 and "QOS" in names and "STRICT_ORDER" in names
    for name in names:
        assert f"| `{name}` |" in doc, name
    assert "| `QOS` | the scenario's, else `1` |" in doc
    assert "| `MAX_INSTANCES` | `32` |" in doc
    assert "| `STEPS` | none |" in doc


@pytest.mark.parametrize("change", ["a new parameter", "a parameter removed"])
def test_a_parameter_and_its_description_go_together(change):
    source = (ROOT / "k6/lib/params.js").read_text()
    if change == "a new parameter":
        source = source.replace(
            "const TABLE = [\n", "const TABLE = [\n  ['NEW_ONE', 'new_one', () => env.number('NEW_ONE', 3)],\n"
        )
        named = "NEW_ONE"
    else:
        source = re.sub(r"^  \['STRICT_ORDER'.*\n", "", source, flags=re.M)
        named = "STRICT_ORDER"
    with pytest.raises(ValueError, match=named):
        scenario_params.markdown(source)


def test_the_scenario_table_lists_every_scenario():
    doc = (ROOT / "docs/scenarios.md").read_text()
    table = doc.split("## The scenarios", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| (.+?) \|", table, re.M))
    names = {n for row in listed for n in re.findall(r"`([^`]+)`", row)}
    missing = sorted(p.stem for p in (ROOT / "k6/scenarios").glob("*.js") if p.stem not in names)
    assert not missing, f"scenarios missing from docs/scenarios.md: {missing}"
