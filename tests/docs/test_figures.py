"""Every measured figure the project keeps is shown in the docs, from the file a benchmark wrote.

Each ``benchmarks/results/*.json`` must be a record ``benchmarks/record.py`` wrote (the script, its
arguments, the machine, the date and what the script printed), and some page of the docs must render
it (the ``kgc-benchmark`` directive or the ``kgc-figure`` role): a result no page shows is a figure
nobody can check, and a figure typed into a page cannot be traced to a run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"

USES = re.compile(r"```\{kgc-benchmark\}\s+([a-z0-9_-]+)|\{kgc-figure\}`([a-z0-9_-]+):")


def not_records(results: Path) -> list[str]:
    """The result files that are not ``kgc-benchmark-record`` documents naming an existing script."""
    bad = []
    for path in sorted(results.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        script = doc.get("script", "") if isinstance(doc, dict) else ""
        if not (isinstance(doc, dict) and doc.get("format") == "kgc-benchmark-record" and doc.get("runs")):
            bad.append(f"{path.name}: not written by benchmarks/record.py")
        elif not (results.parent.parent / script).is_file():
            bad.append(f"{path.name}: its script {script} does not exist")
    return bad


def unrendered(results: Path, docs: Path) -> list[str]:
    """The result files no page of ``docs`` renders."""
    used = {a or b for page in docs.rglob("*.md") for a, b in USES.findall(page.read_text(encoding="utf-8"))}
    return sorted(p.stem for p in results.glob("*.json") if p.stem not in used)


def test_every_result_is_a_record_of_a_benchmark_script() -> None:
    assert not_records(RESULTS) == []


def test_every_result_is_rendered_by_a_page() -> None:
    assert unrendered(RESULTS, DOCS) == []


def test_the_checks_catch_a_pasted_result_and_an_orphan(tmp_path: Path) -> None:
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (tmp_path / "benchmarks" / "speed.py").write_text("print('{}')\n")
    record = {"format": "kgc-benchmark-record", "script": "benchmarks/speed.py", "runs": [{"s": 1}]}
    (results / "speed.json").write_text(json.dumps(record))
    (results / "pasted.json").write_text(json.dumps({"seconds": 3}))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("```{kgc-benchmark} speed\n:fields: s\n```\n")
    assert not_records(results) == ["pasted.json: not written by benchmarks/record.py"]
    assert unrendered(results, docs) == ["pasted"]
    (docs / "page.md").write_text("The run took {kgc-figure}`pasted:0:seconds` s.\n")
    assert unrendered(results, docs) == ["speed"]
