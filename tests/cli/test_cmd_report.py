"""kgc report end to end: the page is self-contained and shows what was checked and how."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgc.cli import cmd_report, main
from kgc.diagrams.exploration import explore
from kgc.diagrams.report import ReportInput, build_report
from kgc.explorer.search import Bounds
from kgc.model.config import Config
from kgc.model.fairness import STALLED_REMOVAL_BASIS as STALLED
from kgc.properties.protocol import ALL
from tests.diagrams.traces import SMALL, nobody_stable_with_partitions

ARGS = ["--consumers", "2", "--partitions", "2", "--max-generation", "1", "--max-perturbations", "1", "--no-progress"]


def self_contained(html: str) -> None:
    assert "<script" not in html.lower()
    assert "<link" not in html.lower() and "@import" not in html and "@font-face" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", html)
    # The only absolute URLs are XML namespace names, which are never fetched.
    for url in re.findall(r"https?://[^\s\"'<>]+", html):
        assert url.startswith(("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink")), url


def test_report_with_a_violation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked = cmd_report.for_config
    monkeypatch.setattr(cmd_report, "for_config", lambda config: (*checked(config), nobody_stable_with_partitions))
    out = tmp_path / "report.html"
    assert main(["report", *ARGS, "-o", str(out)]) == 12
    html = out.read_text()
    self_contained(html)
    for p in (*ALL, nobody_stable_with_partitions):
        assert f'data-property="{p.name}"' in html and p.description.replace("'", "&#x27;") in html
    # the badge, the verdict and the table of contents link to the counterexample, which is explained
    assert '<a class="badge violated" href="#cex-nobody_stable_with_partitions">violated → counterexample</a>' in html
    assert '<a class="verdict violation" href="#cex-nobody_stable_with_partitions">' in html
    assert '<nav class="toc" id="toc">' in html and '<a href="#counterexamples">Counterexamples (1)</a>' in html
    assert "<dl class='why'>" in html and "<dt>expected</dt>" in html
    assert "2 partitions" in html and "<th>max_perturbations</th>" in html and "distinct states" in html
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc"') == 1
    assert 'id="state-machine-diagram"' in html and "edge&#45;CompletingRebalance&#45;Stable" in html
    assert 'id="cex-nobody_stable_with_partitions"' in html and "<tr class='breaks'><td>5</td>" in html
    assert "id='request-matrix'" in html and "data-api='SyncGroup' data-state='CompletingRebalance'" in html
    assert "not exercised" in html  # e.g. every request in Dead
    assert "<code>store_complete</code>" in html


def test_report_without_violations_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", *ARGS, "-o", str(out)]) == 0
    html = out.read_text()
    self_contained(html)
    assert "every safety property holds" in html and "None: every safety property holds" in html


def test_never_fired_actions_are_prominent_warnings() -> None:
    config = Config.from_mapping(SMALL)
    result, obs = explore(config, ALL, "bfs", Bounds(max_depth=2))
    html = build_report(ReportInput(result, obs, Bounds(max_depth=2)))
    warnings = html[html.index('id="warnings"') : html.index("</section>", html.index('id="warnings"'))]
    assert "The exploration is incomplete (stopped by max-depth)" in warnings
    assert "Action store_complete never fired although this configuration enables it." in warnings
    assert "<tr class='warn' data-action='store_complete'>" in html and "NEVER FIRED" in html
    # Actions the configuration rules out are not warnings.
    assert "Action send_fetch never fired" not in warnings and "offset_fetch is off" in html


def test_the_self_containment_check_can_fail() -> None:
    for bad in ('<img src="https://example.org/x.png">', "<script>1</script>", "a { background: url(//x/y) }"):
        with pytest.raises(AssertionError):
            self_contained(bad)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["report", "-o", "r.pdf"], "use a file name ending in .html"),
        (["report", "--consumers", "9", "-o", "r.html"], "consumers must be between 1 and 6"),
        (["report"], "required"),
    ],
)
def test_bad_input(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 150
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def test_report_with_a_livelock_lasso_exits_13(tmp_path: Path) -> None:
    out = tmp_path / "live.html"
    argv = ["report", "--consumers", "2", "--partitions", "2", "--max-generation", "2", "--max-perturbations", "0"]
    assert main([*argv, "--fairness", "none", "--no-progress", "-o", str(out)]) == 13
    page = out.read_text()
    assert '<section id="liveness">' in page and "Fairness: <b>none</b>" in page
    assert 'data-liveness="rebalance_completes"' in page and 'id="lasso-rebalance_completes"' in page
    assert 'class="cycle" data-loop-start="1"' in page and "<tr class='cycle'>" in page
    assert "liveness propert" in page and "violated (none fairness)" in page
    # a property whose premise the configuration switches off is a note, said once, not a warning
    assert "pending_resolved does not apply: pending member ids exist only when" in page
    assert "pending_resolved[c1]" not in page.split('id="warnings"')[-1].split("</section>")[0]
    assert "WF(handle)" not in page  # requests are atomic: that assumption does not apply
    assert main([*argv, "--no-progress", "-o", str(out)]) == 0
    page = out.read_text()
    holds = "every liveness property holds for generations ≤ 2 without perturbations under weak fairness " + STALLED
    assert holds in page and "WF(store_callback)" in page


def test_report_with_a_real_bug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--bug ID adds the Real bugs section: the bug, its fix, the property that catches it, the
    counterexample's length and its chart; the page stays self-contained and the verdict is the
    protocol's."""
    out = tmp_path / "report.html"
    assert main(["report", *ARGS, "--no-liveness", "--bug", "KAFKA-16148", "-o", str(out)]) == 0
    assert "real bug KAFKA-16148: caught by parked_only_in_phase in 2 steps" in capsys.readouterr().out
    html = out.read_text()
    self_contained(html)
    assert '<section id="real-bugs"><h2>Real bugs</h2>' in html and "<code>apache/kafka#15446</code>" in html
    assert 'id="bug-KAFKA-16148"' in html and "caught by parked_only_in_phase in 2 steps" in html
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="kgc-msc"') == 1


def test_report_without_bugs_has_no_real_bugs_section(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", *ARGS, "--no-liveness", "-o", str(out)]) == 0
    assert 'id="real-bugs"' not in out.read_text()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--bug", "KAFKA-0"], "--bug: "),
        (["--bug", "KAFKA-16861"], "not put back"),
        (["--bug", "KAFKA-16148", "--mutant", "sync_none_in_preparing"], "drop --mutant"),
    ],
)
def test_bad_bug_is_one_line_and_150(
    tmp_path: Path, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert main(["report", *ARGS, *argv, "-o", str(out)]) == 150
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and not out.exists()
