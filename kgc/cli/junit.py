"""JUnit XML reports for CI (``--junit FILE``): one test case per property (``kgc check``), per
mutant (``kgc mutants``), per scenario (``kgc replay``), so that a CI system lists each verdict and
annotates each failure.

The format is the one JUnit's Ant task writes and CI systems read (GitHub Actions' test-report
actions, GitLab, Jenkins): ``<testsuites>`` holding one ``<testsuite>`` with ``tests``,
``failures``, ``errors`` and ``skipped`` counts and one ``<testcase name classname time>`` per
case, with a ``<failure message>`` (a violated property, a surviving mutant, a failed scenario), an
``<error message>`` (a run that could not judge) or ``<skipped message>`` (a verdict that does not
apply, or a search that did not complete), and the case's text in ``<system-out>``. The suite's
``<properties>`` carry kgc's version and commit.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from kgc.cli import inputs
from kgc.cli.version import kgc_commit, kgc_version

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"


@dataclass(frozen=True)
class Case:
    """One test case: its name, its class (the verb and what it judges), its outcome, a one-line
    message for a failure, error or skip, its text, and its time in seconds."""

    name: str
    classname: str
    outcome: str = PASSED
    message: str = ""
    text: str = ""
    seconds: float = 0.0


def junit_xml(suite: str, cases: list[Case], seconds: float = 0.0) -> str:
    """The JUnit XML document of one suite."""
    count = {o: sum(1 for c in cases if c.outcome == o) for o in (FAILED, ERROR, SKIPPED)}
    root = ET.Element("testsuites", name="kgc", tests=str(len(cases)), failures=str(count[FAILED]))
    root.set("errors", str(count[ERROR]))
    root.set("time", f"{seconds:.3f}")
    node = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(count[FAILED]),
        errors=str(count[ERROR]),
        skipped=str(count[SKIPPED]),
        time=f"{seconds:.3f}",
    )
    props = ET.SubElement(node, "properties")
    ET.SubElement(props, "property", name="kgc.version", value=kgc_version())
    ET.SubElement(props, "property", name="kgc.commit", value=kgc_commit() or "unknown")
    for case in cases:
        element = ET.SubElement(node, "testcase", name=case.name, classname=case.classname, time=f"{case.seconds:.3f}")
        if case.outcome in (FAILED, ERROR, SKIPPED):
            tag = {FAILED: "failure", ERROR: "error", SKIPPED: "skipped"}[case.outcome]
            child = ET.SubElement(element, tag, message=case.message)
            if case.outcome != SKIPPED and case.text:
                child.text = case.text
        elif case.outcome != PASSED:
            raise ValueError(f"unknown outcome {case.outcome!r}")
        if case.text:
            ET.SubElement(element, "system-out").text = case.text
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, suite: str, cases: list[Case], seconds: float = 0.0) -> None:
    inputs.write_atomically(path, junit_xml(suite, cases, seconds))
