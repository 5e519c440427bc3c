"""``{kgc-oracle-branches}``: the scope and the reasons of the branch coverage of Kafka's
classic-group code by ``kgc mbt``, rendered from ``kgc/data/kafka-oracle-branches.json``
(``kgc.oracle.branches``), so that the page says what the data file says."""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from kgc_reference import paragraph, table
from sphinx.application import Sphinx

from kgc.oracle.branches import SCOPE_FILE, load_scope


class OracleBranchesDirective(Directive):
    """``{kgc-oracle-branches}`` with ``:part:`` ``out_of_scope`` (the methods left out), or one kind
    of the missed lines' entries: ``outside``, ``unreachable`` or ``gap``."""

    option_spec = {"part": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        self.state.document.settings.record_dependencies.add(str(SCOPE_FILE))
        doc = load_scope()
        part = self.options.get("part", "explained")
        if part == "out_of_scope":
            rows: list[list[Any]] = [[e["method"], e["reason"]] for e in doc["out_of_scope"]]
            return [table(["method", "why outside the model's scope"], rows)]
        if part in ("outside", "unreachable", "gap"):
            rows = [[e["method"], e["line"], e["missed"], e["reason"]] for e in doc["explained"] if e["kind"] == part]
            return [table(["method", "line", "branches", "why never reached"], rows)]
        raise self.error(f"unknown part {part!r}: out_of_scope, outside, unreachable or gap")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("kgc-oracle-branches", OracleBranchesDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


__all__ = ["OracleBranchesDirective", "paragraph", "setup"]
