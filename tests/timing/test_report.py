"""``kgc report --timing FILE`` adds the timing verdicts, with each refutation's timeline chart."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgc.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "timing"
SMALL = [
    "--consumers",
    "1",
    "--partitions",
    "1",
    "--max-generation",
    "1",
    "--faults",
    "none",
    "--max-perturbations",
    "0",
    "--no-progress",
]


def test_report_with_timing_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "r.html"
    code = main(["report", *SMALL, "--timing", str(EXAMPLES / "wan-latency.toml"), "-o", str(page)])
    assert code == 0
    html = page.read_text()
    assert '<section id="timing">' in html
    # needless_expiry and stall_evicts (no stall: the same lapse) are refuted; initial_rebalance_held and
    # auto_commit_unprocessed proved
    assert html.count('class="badge violated">REFUTED') == 2 and html.count('class="badge holds">PROVED') == 2
    # The session lapses at 6 s in every run: the poll-timer, rebalance and dead-consumer questions are about no run.
    # So are static_restart_new_timeouts (the restarted process's session lapses too), evicted_while_assigning,
    # the rolling restart's three questions, static_restart_expires (close()'s commit takes 4 s: the old
    # process's heartbeats meanwhile arrive after the new process's JoinGroup in every run) and the staggered
    # joins' two.
    assert html.count('class="badge notfound">VACUOUS') == 12
    assert 'class="kgc-msc kgc-timeline"' in html and "agrees" in html
    assert "not proved: needless_expiry" in capsys.readouterr().out


def test_report_without_timing_has_no_section(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    assert main(["report", *SMALL, "-o", str(page)]) == 0
    assert 'id="timing"' not in page.read_text()


def test_report_bad_timing_file_is_exit_150(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[consumer]\n"heartbeat.interval.ms" = 50000\n')
    assert main(["report", *SMALL, "--timing", str(bad), "-o", str(tmp_path / "r.html")]) == 150
    err = capsys.readouterr().err
    assert "heartbeat.interval.ms" in err and err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()
