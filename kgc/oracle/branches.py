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
minus the methods the data file puts outside the model's scope, each with its reason. Every source
line of an in-scope method with branches never taken needs an entry in the data file: the line,
how many missed branches it explains, and its kind (``outside`` the model's scope, ``unreachable``
by any request sequence, or a named ``gap``). A line without one, or with more branches missed than
it explains, is *unexplained*. The per-branch scope, which the issue's 90 % target counts, is the
in-scope methods' branches less those explained ``outside`` or ``unreachable``.

The coverage run (:func:`measure`) drives the ``kgc mbt`` configurations of
:func:`configurations` and then replays the scenario library on the same JVM.
"""

from __future__ import annotations

import bisect
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
#: Scenarios of requests no model consumer sends (a member id and a group.instance.id the model's
#: consumers never combine, an admin's removal by instance id), so the model cannot judge them and they
#: stay out of the scenario library (tests/harness/scenario/test_every_shipped_file.py); the coverage
#: run replays them on Kafka after the library, and tests/oracle/test_branches.py on the reference too.
ORACLE_SCENARIOS = ROOT / "kgc" / "data" / "kafka-oracle-scenarios.json"

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
    missed_by_line: tuple[tuple[int, int], ...] = ()  # (line, branches never taken there)
    covered_by_line: tuple[tuple[int, int], ...] = ()  # (line, branches taken there)

    @property
    def name(self) -> str:
        return f"{self.cls}.{self.method}"


@dataclass(frozen=True)
class MissedLine:
    """A source line of an in-scope method with branches never taken, and the data file's entry
    for it (None: unexplained, or more branches missed there than the entry explains)."""

    method: str
    line: int
    missed: int
    entry: dict[str, Any] | None

    @property
    def text(self) -> str:
        return f"{self.method}:{self.line} ({self.missed} missed)"


@dataclass
class BranchReport:
    methods: list[MethodBranches]
    scope: dict[str, Any]
    in_scope: list[MethodBranches] = field(default_factory=list)
    out_of_scope: list[MethodBranches] = field(default_factory=list)
    missed_lines: list[MissedLine] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    @property
    def unexplained(self) -> list[MissedLine]:
        return [m for m in self.missed_lines if m.entry is None]

    @property
    def covered(self) -> int:
        return sum(m.covered for m in self.in_scope)

    @property
    def total(self) -> int:
        return sum(m.covered + m.missed for m in self.in_scope)

    def missed_of_kind(self, kind: str) -> int:
        return sum(m.missed for m in self.missed_lines if (m.entry or {}).get("kind", "unexplained") == kind)

    @property
    def branches_in_scope(self) -> int:
        """The branches of the in-scope methods less those explained as outside the model or
        unreachable (the per-branch scope)."""
        return self.total - self.missed_of_kind("outside") - self.missed_of_kind("unreachable")

    def as_json(self) -> dict[str, Any]:
        scope = self.branches_in_scope
        return {
            "branches_of_methods": self.total,
            "coverage_of_methods": round(self.covered / self.total, 4) if self.total else 0,
            "missed_outside_model": self.missed_of_kind("outside"),
            "missed_unreachable": self.missed_of_kind("unreachable"),
            "missed_gap": self.missed_of_kind("gap"),
            "missed_unexplained": self.missed_of_kind("unexplained"),
            "branches_in_scope": scope,
            "covered_in_scope": self.covered,
            "coverage_in_scope": round(self.covered / scope, 4) if scope else 0,
            # Kafka's guards counted too: every branch of the in-scope methods not explained as outside the model.
            "branches_not_outside": self.total - self.missed_of_kind("outside"),
            "coverage_not_outside": round(self.covered / (self.total - self.missed_of_kind("outside")), 4)
            if self.total > self.missed_of_kind("outside")
            else 0,
            "methods_in_scope": len(self.in_scope),
            "branches_out_of_scope": sum(m.covered + m.missed for m in self.out_of_scope),
            "missed": [
                {
                    "method": m.method,
                    "line": m.line,
                    "missed": m.missed,
                    "kind": m.entry["kind"] if m.entry else "unexplained",
                    "reason": m.entry["reason"] if m.entry else "",
                }
                for m in self.missed_lines
            ],
            "unexplained": [m.text for m in self.unexplained],
            "stale": self.stale,
        }


def reached_only_by(report: BranchReport, without: BranchReport) -> list[str]:
    """The lines of in-scope methods where ``report`` took more branches than ``without`` (the same
    code measured on a run lacking one source), as ``Method:line (+n)``: what that source alone reached."""
    other = {(m.name, line): n for m in without.in_scope for line, n in m.covered_by_line}
    return [
        f"{m.name}:{line} (+{n - other.get((m.name, line), 0)})"
        for m in report.in_scope
        for line, n in m.covered_by_line
        if n > other.get((m.name, line), 0)
    ]


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
    """Sort the measured methods into in scope and out of scope, and match every line of an in-scope
    method with branches never taken to the data file's entry for that line (``explained``: method,
    line, the most branches missed there it explains, kind and reason). A line without an entry, or
    with more branches missed than its entry explains, is *unexplained*; an entry whose line lost
    every miss (the branches are now reached) is *stale*."""
    report = BranchReport(list(methods), scope)
    entries = {(e["method"], int(e["line"])): e for e in scope.get("explained", [])}
    missed_now: set[tuple[str, int]] = set()
    for m in report.methods:
        if m.covered + m.missed == 0:
            continue
        if in_scope(m, scope):
            report.in_scope.append(m)
            for line, missed in m.missed_by_line:
                entry = entries.get((m.name, line))
                fits = entry is not None and missed <= int(entry["missed"])
                report.missed_lines.append(MissedLine(m.name, line, missed, entry if fits else None))
                missed_now.add((m.name, line))
            lost = m.missed - sum(missed for _line, missed in m.missed_by_line)
            if lost > 0:  # missed branches the report gave no line for: never explained
                report.missed_lines.append(MissedLine(m.name, 0, lost, None))
        elif m.cls == "GroupMetadataManager" and "classic" not in m.method.lower():
            continue  # not classic-group code at all
        else:
            report.out_of_scope.append(m)
    report.stale = [f"{name}:{line}" for (name, line) in entries if (name, line) not in missed_now]
    return report


def parse_report(xml_text: str) -> list[MethodBranches]:
    """The branch counters of every method in a JaCoCo XML report, lambdas merged into the method
    they are written in. A source line with missed branches belongs to the method (or lambda) whose
    first line is the nearest at or before it, among every method of the classes of that source
    file; so the lines of a method are those from its first line to the next method's, a lambda's
    body taken out of the method that holds it and given back to it under the owner's name."""
    root = ET.fromstring(xml_text)
    out: dict[tuple[str, str], list[int]] = {}
    per_line: dict[tuple[str, str], dict[int, int]] = {}
    covered_per_line: dict[tuple[str, str], dict[int, int]] = {}
    for package in root.iter("package"):
        missed_lines: dict[str, dict[int, int]] = {}
        covered_lines: dict[str, dict[int, int]] = {}
        for sourcefile in package.findall("sourcefile"):
            missed_lines[sourcefile.get("name", "")] = {
                int(line.get("nr", 0)): int(line.get("mb", 0))
                for line in sourcefile.findall("line")
                if int(line.get("mb", 0)) > 0
            }
            covered_lines[sourcefile.get("name", "")] = {
                int(line.get("nr", 0)): int(line.get("cb", 0))
                for line in sourcefile.findall("line")
                if int(line.get("cb", 0)) > 0
            }
        starts: dict[str, list[tuple[int, tuple[str, str]]]] = {}
        for cls in package.findall("class"):
            simple = cls.get("name", "").rsplit("/", 1)[-1].split("$", 1)[0]
            source = cls.get("sourcefilename", "")
            for m in cls.findall("method"):
                name = m.get("name", "")
                lambda_of = _LAMBDA.match(name)
                key = (simple, lambda_of.group(1) if lambda_of else name)
                if int(m.get("line") or 0):
                    starts.setdefault(source, []).append((int(m.get("line") or 0), key))
                counters = [c for c in m.findall("counter") if c.get("type") == "BRANCH"]
                if not counters:
                    continue
                total = out.setdefault(key, [0, 0])
                total[0] += int(counters[0].get("missed", 0))
                total[1] += int(counters[0].get("covered", 0))
        for source, lines in missed_lines.items():
            ordered = sorted(starts.get(source, []))
            firsts = [line for line, _key in ordered]
            for line, missed in lines.items():
                at = bisect.bisect_right(firsts, line) - 1
                if at >= 0:
                    per_line.setdefault(ordered[at][1], {})[line] = missed
            for line, taken in covered_lines.get(source, {}).items():
                at = bisect.bisect_right(firsts, line) - 1
                if at >= 0:
                    covered_per_line.setdefault(ordered[at][1], {})[line] = taken
    return [
        MethodBranches(
            cls,
            method,
            missed,
            covered,
            tuple(sorted(per_line.get((cls, method), {}))) if missed else (),
            tuple(sorted(per_line.get((cls, method), {}).items())) if missed else (),
            tuple(sorted(covered_per_line.get((cls, method), {}).items())) if covered else (),
        )
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


#: The configurations of ``kgc mbt`` the coverage run drives (two consumers, generations <= 1, profile
#: java-4.0), each a variant of :data:`BASE`, with what it adds: the coordinator's faults with dynamic,
#: static and v4+ consumers; then one model option each that the default configuration leaves at its
#: default (no fault, so that the graph stays small).
BASE: dict[str, Any] = {
    "consumers": 2,
    "static_consumers": 0,
    "profile": "java-4.0",
    "max_generation": 1,
    "faults": ["store_failure", "coordinator_unload", "session_expiry"],
}
CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("faults", {}),
    ("faults, one static consumer", {"static_consumers": 1}),
    ("faults, two static consumers", {"static_consumers": 2}),
    ("faults, JoinGroup v4+ (KIP-394)", {"require_known_member_id": True}),
    ("faults, group.max.size 1 (KIP-389)", {"group_max_size": 1}),
    ("protocol election (roundrobin,range | range)", {"faults": [], "protocols": [["roundrobin", "range"], ["range"]]}),
    ("no common protocol (range | roundrobin)", {"faults": [], "protocols": [["range"], ["roundrobin"]]}),
    ("another protocol type (consumer | connect)", {"faults": [], "protocol_types": ["consumer", "connect"]}),
    ("a session timeout below the broker's minimum", {"faults": [], "session_timeouts_ms": [1000]}),
    ("JoinGroup v3 and v4 in one group", {"faults": [], "join_versions": [3, 4]}),
    ("one partition for two consumers", {"faults": [], "partitions": 1}),
    ("OffsetFetch", {"faults": [], "offset_fetch": True}),
    (
        "session expiry, JoinGroup v4+, asynchronous requests",
        {"faults": ["session_expiry"], "require_known_member_id": True, "atomic_requests": False},
    ),
]
#: What the benchmark adds to :data:`CONFIGURATIONS`: crashes and a tie in protocol election (paths
#: stopping where Kafka made another of the model's arbitrary choices).
FULL_ONLY: list[tuple[str, dict[str, Any]]] = [
    ("crashes (a consumer's second incarnation beside the first)", {"faults": ["crash"]}),
    ("a tie in protocol election", {"faults": [], "protocols": [["range", "roundrobin"], ["roundrobin", "range"]]}),
]


def configurations(full: bool = False) -> list[tuple[str, Any]]:
    """The named configurations of the coverage run (``full``: the benchmark's, a superset)."""
    from kgc.model.config import Config

    chosen = CONFIGURATIONS + (FULL_ONLY if full else [])
    return [(name, Config.from_mapping({**BASE, **variant})) for name, variant in chosen]


def measure(
    configs: list[Any], workdir: Path | None = None, scenarios: bool = True
) -> tuple[BranchReport, list[dict[str, Any]], dict[str, Any] | None]:
    """Run the model-based test for each configuration on one JVM with the coverage agent, then
    (``scenarios``) replay the scenario library on it (every scenario of ``scenarios/*.json`` for
    profile java-4.0, Kafka's transcribed tests among them) and :data:`ORACLE_SCENARIOS`, and report the branches of the
    classic-group code reached. Returns the report, each run's figures (``Report.as_json``) and the
    replay's (scenarios, passed), or None without it."""
    from kgc.harness.scenario.format import load_file
    from kgc.harness.scenario.replay import replay
    from kgc.model.profiles import JAVA_4_0
    from kgc.oracle import mbt
    from kgc.oracle.process import JAR, OracleProcess, swap_shared
    from kgc.paths import SCENARIOS

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
        library: dict[str, Any] | None = None
        try:
            for config in configs:
                runs.append(mbt.run(config, None).as_json())
            if scenarios:
                files = [*sorted(SCENARIOS.glob("*.json")), ORACLE_SCENARIOS]
                outcome = replay([load_file(f) for f in files], "kafka", JAVA_4_0)
                passed = sum(1 for r in outcome.results if r.verdict == "passed")
                library = {"scenarios": len(outcome.results), "passed": passed}
        finally:
            process.close()  # the JVM exits: the agent writes its data
            swap_shared(previous)
        methods = parse_report(xml_report(exec_file, JAR, work))
    return classify(methods, load_scope()), runs, library
