"""Branch coverage of Kafka 4.0.2's classic-group code by the model-based test (issue 28, item 4).

The model-based test (``kgc.oracle.mbt``) runs on a JVM started with the JaCoCo agent
(``org.jacoco:org.jacoco.agent``, fetched from Maven Central by ``scripts/setup.sh``), which records
the branches of Kafka's group coordinator classes that ran; when the JVM exits, JaCoCo's command
line (``org.jacoco:org.jacoco.cli``) turns the execution data into an XML report against the very
class files the JVM loaded (taken from ``java/kafka-oracle/target/kafka-oracle.jar``).

What counts (the *scope*, ``kgc/data/kafka-oracle-branches.json``): the methods of
``GroupMetadataManager`` whose name says *classic* (JoinGroup, SyncGroup, Heartbeat, LeaveGroup of
classic groups, their timers, the member and pending-member expiry), and every method of
``ClassicGroup`` and ``ClassicGroupMember``, each lambda counted with the method it is written in;
minus the methods the data file puts outside the model's scope, each with its reason (a classic
group turned into a consumer group, offsets, group deletion, describe). Every branch of an in-scope
method that never ran is listed with its source line; the data file says why for each method that
has any (outside the model's scope, or a gap), and a missed branch of a method it does not explain
is reported as *unexplained*.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc.paths import ROOT

JACOCO_VERSION = "0.8.12"
JACOCO_DIR = ROOT / "java" / "kafka-oracle" / "target" / "jacoco"
AGENT = JACOCO_DIR / f"org.jacoco.agent-{JACOCO_VERSION}-runtime.jar"
CLI = JACOCO_DIR / f"org.jacoco.cli-{JACOCO_VERSION}-nodeps.jar"
SCOPE_FILE = ROOT / "kgc" / "data" / "kafka-oracle-branches.json"

#: The class files analysed, inside the oracle's jar (Kafka's classes, unchanged by shading).
CLASS_PATTERNS = (
    re.compile(r"^org/apache/kafka/coordinator/group/GroupMetadataManager(\$.*)?\.class$"),
    re.compile(r"^org/apache/kafka/coordinator/group/classic/ClassicGroup(Member)?(\$.*)?\.class$"),
)

_LAMBDA = re.compile(r"^lambda\$(.+)\$\d+$")


def unavailable_reason() -> str | None:
    """Why branch coverage cannot be recorded here (the JaCoCo jars missing), or None."""
    for jar, artifact in ((AGENT, "org.jacoco.agent:runtime"), (CLI, "org.jacoco.cli:nodeps")):
        if not jar.is_file():
            return f"{jar} missing (org.jacoco:{artifact}:{JACOCO_VERSION}; run scripts/setup.sh)"
    return None


def agent_option(exec_file: Path) -> str:
    """The ``-javaagent`` option recording Kafka's group coordinator classes into ``exec_file``."""
    return f"-javaagent:{AGENT}=destfile={exec_file},includes=org.apache.kafka.coordinator.group.*"


@dataclass(frozen=True)
class MethodBranches:
    cls: str  # simple class name
    method: str  # the method a lambda is written in, else the method itself
    missed: int
    covered: int
    missed_lines: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{self.cls}.{self.method}"


@dataclass
class BranchReport:
    methods: list[MethodBranches]
    scope: dict[str, Any]
    in_scope: list[MethodBranches] = field(default_factory=list)
    out_of_scope: list[MethodBranches] = field(default_factory=list)
    unexplained: list[MethodBranches] = field(default_factory=list)

    @property
    def covered(self) -> int:
        return sum(m.covered for m in self.in_scope)

    @property
    def total(self) -> int:
        return sum(m.covered + m.missed for m in self.in_scope)

    def as_json(self) -> dict[str, Any]:
        explained = {e["method"]: e for e in self.scope.get("explained", [])}
        return {
            "branches_in_scope": self.total,
            "covered_in_scope": self.covered,
            "coverage_in_scope": round(self.covered / self.total, 4) if self.total else 0,
            "methods_in_scope": len(self.in_scope),
            "branches_out_of_scope": sum(m.covered + m.missed for m in self.out_of_scope),
            "missed": [
                {
                    "method": m.name,
                    "missed": m.missed,
                    "of": m.missed + m.covered,
                    "lines": list(m.missed_lines),
                    "kind": explained[m.name]["kind"] if m.name in explained else "unexplained",
                    "reason": explained[m.name]["reason"] if m.name in explained else "",
                }
                for m in self.in_scope
                if m.missed
            ],
            "unexplained": [m.name for m in self.unexplained],
        }


def load_scope(path: Path = SCOPE_FILE) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    if doc.get("format") != "kgc-oracle-branches":
        raise ValueError(f"{path}: not a kgc-oracle-branches file")
    return doc


def in_scope(m: MethodBranches, scope: dict[str, Any]) -> bool:
    out = {e["method"] for e in scope["out_of_scope"]}
    if m.name in out:
        return False
    if m.cls == "GroupMetadataManager":
        return "classic" in m.method.lower()
    return m.cls in ("ClassicGroup", "ClassicGroupMember")


def classify(methods: Iterable[MethodBranches], scope: dict[str, Any]) -> BranchReport:
    """Sort the measured methods into in scope and out of scope, and find the missed branches of
    in-scope methods the data file does not explain."""
    report = BranchReport(list(methods), scope)
    explained = {e["method"] for e in scope.get("explained", [])}
    for m in report.methods:
        if m.covered + m.missed == 0:
            continue
        if in_scope(m, scope):
            report.in_scope.append(m)
            if m.missed and m.name not in explained:
                report.unexplained.append(m)
        elif m.cls == "GroupMetadataManager" and "classic" not in m.method.lower():
            continue  # not classic-group code at all
        else:
            report.out_of_scope.append(m)
    return report


def parse_report(xml_text: str) -> list[MethodBranches]:
    """The branch counters of every method in a JaCoCo XML report, lambdas merged into the method
    they are written in; the lines of a method are those from its first line to the next method's."""
    root = ET.fromstring(xml_text)
    out: dict[tuple[str, str], list[int]] = {}
    lines_of: dict[tuple[str, str], list[int]] = {}
    for package in root.iter("package"):
        missed_lines: dict[str, list[int]] = {}
        for sourcefile in package.findall("sourcefile"):
            missed_lines[sourcefile.get("name", "")] = [
                int(line.get("nr", 0)) for line in sourcefile.findall("line") if int(line.get("mb", 0)) > 0
            ]
        for cls in package.findall("class"):
            simple = cls.get("name", "").rsplit("/", 1)[-1].split("$", 1)[0]
            source = cls.get("sourcefilename", "")
            starts = sorted((int(m.get("line") or 0), m.get("name", "")) for m in cls.findall("method"))
            for m in cls.findall("method"):
                counters = [c for c in m.findall("counter") if c.get("type") == "BRANCH"]
                if not counters:
                    continue
                name = m.get("name", "")
                lambda_of = _LAMBDA.match(name)
                owner = lambda_of.group(1) if lambda_of else name
                first = int(m.get("line") or 0)
                following = [line for line, _n in starts if line > first]
                last = following[0] if following else 10**9
                key = (simple, owner)
                total = out.setdefault(key, [0, 0])
                total[0] += int(counters[0].get("missed", 0))
                total[1] += int(counters[0].get("covered", 0))
                if int(counters[0].get("missed", 0)):
                    lines_of.setdefault(key, []).extend(
                        line for line in missed_lines.get(source, []) if first <= line < last
                    )
    return [
        MethodBranches(cls, method, missed, covered, tuple(sorted(set(lines_of.get((cls, method), [])))))
        for (cls, method), (missed, covered) in sorted(out.items())
    ]


def xml_report(exec_file: Path, jar: Path, workdir: Path) -> str:
    """JaCoCo's XML report of ``exec_file`` against the coordinator classes inside ``jar``."""
    classes = workdir / "classes"
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if any(p.match(name) for p in CLASS_PATTERNS):
                z.extract(name, classes)
    xml_file = workdir / "report.xml"
    command = ["java", "-jar", str(CLI), "report", str(exec_file), "--classfiles", str(classes), "--xml", str(xml_file)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"jacoco report failed: {proc.stderr.strip().splitlines()[-1:]}")
    return xml_file.read_text()


def measure(configs: list[Any], workdir: Path | None = None) -> tuple[BranchReport, list[dict[str, Any]]]:
    """Run the model-based test for each configuration on one JVM with the coverage agent, then
    report the branches of the classic-group code it reached. Returns the report and each run's
    figures (``Report.as_json``)."""
    from kgc.oracle import mbt
    from kgc.oracle.process import JAR, OracleProcess, swap_shared

    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)
    with tempfile.TemporaryDirectory(prefix="kgc-jacoco-") as tmp:
        work = workdir or Path(tmp)
        exec_file = work / "mbt.exec"
        exec_file.unlink(missing_ok=True)
        process = OracleProcess(java_options=(agent_option(exec_file),))
        previous = swap_shared(process)
        runs = []
        try:
            for config in configs:
                runs.append(mbt.run(config, None).as_json())
        finally:
            process.close()  # the JVM exits: the agent writes its data
            swap_shared(previous)
        methods = parse_report(xml_report(exec_file, JAR, work))
    return classify(methods, load_scope()), runs
