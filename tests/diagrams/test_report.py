"""The design-review page's action table (``kgc.diagrams.report``): every step kind says who takes it."""

from __future__ import annotations

import re

from kgc.diagrams.exploration import explore
from kgc.diagrams.report import ReportInput, _kind_group, build_report
from kgc.explorer.search import Bounds
from kgc.model.actions import ALL_KINDS, REMOVE_GROUP, STANDALONE_COMMIT
from kgc.model.config import Config
from kgc.properties.protocol import ALL
from tests.diagrams.traces import SMALL


def test_every_action_kind_says_who_takes_it() -> None:
    """The table's "who" column is never blank: the standalone committer's OffsetCommit
    (``Config.standalone_committer``, KAFKA-14201) is a request the coordinator handles from a client
    outside the group, and the removal of a Dead group (``Config.dead_group_window``) the coordinator's
    own step. (Both were blank before: the function knew neither kind.)"""
    assert {kind: _kind_group(kind) for kind in ALL_KINDS if not _kind_group(kind)} == {}
    assert _kind_group(STANDALONE_COMMIT) == "coordinator (request from outside the group)"
    assert _kind_group(REMOVE_GROUP) == "coordinator (removes a Dead group)"


def test_the_standalone_committers_row_names_the_coordinator() -> None:
    config = Config.from_mapping({**SMALL, "standalone_committer": True})
    result, obs = explore(config, ALL, "bfs", Bounds(max_depth=2))
    assert obs.actions.get(STANDALONE_COMMIT, 0) > 0
    html = build_report(ReportInput(result, obs, Bounds(max_depth=2)))
    row = re.search(r"<tr[^>]*data-action='standalone_commit'>.*?</tr>", html)
    assert row is not None
    assert "<td>coordinator (request from outside the group)</td>" in row.group(0) and "fired" in row.group(0)
