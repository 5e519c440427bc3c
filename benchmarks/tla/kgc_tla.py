"""kgc configurations as TLC models of ``KgcClassicGroup.tla``, and running TLC on them.

``KgcClassicGroup.tla`` transcribes kgc's fault-free model (``max_perturbations = 0``, atomic
requests, no mutant). ``cfg_text(config)`` writes the TLC model of
such a kgc configuration; ``read_cfg(path)`` reads one back into the kgc configuration it stands
for (the committed ``*.cfg`` files are its output, and the tests check that they round-trip).
``run_tlc`` runs TLC with one worker and returns its counts and the CPU seconds of the JVM.

Used by ``benchmarks/tlc_vs_kgc.py`` and ``tests/explorer/test_tla.py``; TLC itself is built by
``benchmarks/tla/build_tlc.sh`` (never committed).
"""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kgc.model.config import Config, ConfigError
from kgc.model.profiles import JAVA_4_0, SCALA_3X
from kgc.properties import temporal

HERE = Path(__file__).resolve().parent
SPEC = HERE / "KgcClassicGroup.tla"
DEFAULT_JAR = HERE / ".tlc" / "tla2tools.jar"
"""Where ``build_tlc.sh`` puts the jar (git-ignored)."""

_BASE = Config.from_mapping({"faults": "none", "max_perturbations": 0})
_DELAY_NOT_EXTENSIBLE = 300000
"""An initial delay equal to the rebalance timeout: an InitialDelayedJoin cannot be re-armed."""


class NotTranscribed(ValueError):
    """The kgc configuration lies outside what the TLA+ transcription covers."""


def check_transcribed(config: Config) -> None:
    """Raise ``NotTranscribed`` naming the first field the transcription does not cover."""
    if config.max_perturbations != 0:
        raise NotTranscribed("the TLA+ transcription is of the fault-free model: max_perturbations must be 0")
    if not config.atomic_requests:
        raise NotTranscribed("the TLA+ transcription handles requests atomically: atomic_requests must be true")
    if config.mutant:
        raise NotTranscribed("the TLA+ transcription is of the protocol itself: no mutant")


def _tla(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


def constants(config: Config) -> dict[str, str]:
    """The TLA+ constants of a kgc configuration, as TLC config values."""
    check_transcribed(config)
    return {
        "Consumers": _tla(config.consumers),
        "Partitions": _tla(config.partitions),
        "MaxGeneration": _tla(config.max_generation),
        "StaticConsumers": _tla(config.static_consumers),
        "Assignor": _tla(config.assignor),
        "InitialDelayZero": _tla(config.initial_delay_zero),
        "InitialDelayExtensible": _tla(config.initial_delay_extensible),
        "AutoCommit": _tla(config.auto_commit),
        "OffsetFetch": _tla(config.offset_fetch),
        "JavaProfile": _tla(config.profile is JAVA_4_0),
        "RequireKnownMemberId": _tla(config.require_known_member_id),
    }


def kgc_arguments(config: Config) -> list[str]:
    """``kgc check`` arguments for the same configuration (every field the spec reads)."""
    check_transcribed(config)
    return [
        "--consumers", str(config.consumers),
        "--static-consumers", str(config.static_consumers),
        "--partitions", str(config.partitions),
        "--max-generation", str(config.max_generation),
        "--faults", "none",
        "--max-perturbations", "0",
        "--assignor", config.assignor,
        "--initial-rebalance-delay-ms", str(config.initial_rebalance_delay_ms),
        "--profile", config.profile.name,
        "--set", f"rebalance_timeout_ms={config.rebalance_timeout_ms}",
        "--set", f"auto_commit={str(config.auto_commit).lower()}",
        "--set", f"offset_fetch={str(config.offset_fetch).lower()}",
        "--set", f"require_known_member_id={str(config.require_known_member_id).lower()}",
    ]  # fmt: skip


def cfg_text(config: Config) -> str:
    """The TLC model (``.cfg``) of a kgc configuration."""
    lines = [
        "\\* TLC model of KgcClassicGroup.tla; written by benchmarks/tla/kgc_tla.py (cfg_text).",
        "\\* The same configuration in kgc:",
        "\\*   kgc check " + " ".join(kgc_arguments(config)),
        "CONSTANTS",
    ]
    lines += [f"    {name} = {value}" for name, value in constants(config).items()]
    lines += ["INIT Init", "NEXT Next", ""]
    return "\n".join(lines)


_CONSTANT = re.compile(r"^\s*([A-Za-z]+)\s*=\s*(\S+)\s*$")


def read_cfg(path: Path) -> Config:
    """The kgc configuration a ``.cfg`` written by ``cfg_text`` stands for."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        match = _CONSTANT.match(line.split("\\*", 1)[0])
        if match:
            found[match.group(1)] = match.group(2)
    expected = set(constants(_BASE))
    if set(found) != expected:
        missing = sorted(expected - set(found)) or sorted(set(found) - expected)
        raise NotTranscribed(f"{path}: constants do not match KgcClassicGroup.tla's ({', '.join(missing)})")

    def flag(name: str) -> bool:
        if found[name] not in ("TRUE", "FALSE"):
            raise NotTranscribed(f"{path}: {name} must be TRUE or FALSE")
        return found[name] == "TRUE"

    if flag("InitialDelayZero"):
        delay, timeout = 0, _BASE.rebalance_timeout_ms
    elif flag("InitialDelayExtensible"):
        delay, timeout = _BASE.initial_rebalance_delay_ms, _BASE.rebalance_timeout_ms
    else:
        delay, timeout = _DELAY_NOT_EXTENSIBLE, _DELAY_NOT_EXTENSIBLE
    try:
        return Config.from_mapping(
            {
                "consumers": found["Consumers"],
                "partitions": found["Partitions"],
                "max_generation": found["MaxGeneration"],
                "static_consumers": found["StaticConsumers"],
                "assignor": found["Assignor"].strip('"'),
                "initial_rebalance_delay_ms": delay,
                "rebalance_timeout_ms": timeout,
                "auto_commit": flag("AutoCommit"),
                "offset_fetch": flag("OffsetFetch"),
                "profile": JAVA_4_0.name if flag("JavaProfile") else SCALA_3X.name,
                "require_known_member_id": flag("RequireKnownMemberId"),
            },
            base=_BASE,
        )
    except ConfigError as exc:
        raise NotTranscribed(f"{path}: {exc}") from None


@dataclass(frozen=True)
class TlcResult:
    distinct_states: int
    generated: int
    depth: int
    cpu_seconds: float
    """user + sys of the JVM (every thread: TLC's worker, GC and JIT)."""
    wall_seconds: float


class TlcError(RuntimeError):
    """TLC did not finish a clean exhaustive run; the message holds the end of its output."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_tlc(jar: Path, cfg: Path, spec: Path = SPEC, java: str = "java", timeout: float = 3600) -> TlcResult:
    """Run TLC with one worker on ``spec`` under ``cfg`` (deadlock not checked: states beyond the
    generation bound have no successor) and parse its closing counts."""
    with tempfile.TemporaryDirectory(prefix="kgc-tlc-") as meta:
        # The spec and its model are copied into the run's own folder and named relative to it:
        # the TLC that scripts/setup.sh installs (2.15, 2020) looks a -config file up beside the
        # spec, and any file TLC writes (states, a trace spec) stays in that folder.
        shutil.copyfile(spec, Path(meta) / spec.name)
        shutil.copyfile(cfg, Path(meta) / "model.cfg")
        command = [
            java, "-XX:+UseParallelGC", "-Xmx512m", "-cp", str(jar.resolve()), "tlc2.TLC",
            "-workers", "1", "-deadlock", "-nowarning",
            "-metadir", str(Path(meta) / "states"), "-config", "model.cfg", spec.name,
        ]  # fmt: skip
        cpu, wall = _children_cpu(), time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=meta, check=False)
        cpu, wall = _children_cpu() - cpu, time.monotonic() - wall
    out = done.stdout + done.stderr
    counts = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found, 0 states left on queue", out)
    depth = re.search(r"depth of the complete state graph search is ([\d,]+)", out)
    if done.returncode != 0 or counts is None or depth is None or "No error has been found" not in out:
        tail = "\n".join(out.strip().splitlines()[-15:])
        raise TlcError(f"TLC exited {done.returncode} without a clean exhaustive run:\n{tail}")
    return TlcResult(
        distinct_states=int(counts.group(2).replace(",", "")),
        generated=int(counts.group(1).replace(",", "")),
        depth=int(depth.group(1).replace(",", "")),
        cpu_seconds=cpu,
        wall_seconds=wall,
    )


LIVE_SPEC = HERE / "KgcClassicGroupLive.tla"
"""kgc's fairness classes and liveness properties over the transcription."""

#: kgc's liveness properties (``kgc/properties/temporal.py``) and the state predicates of
#: KgcClassicGroupLive.tla stating them: (trigger, goal) of ``P ~> Q``, or (None, goal) of ``[]<> Q``
#: (a per-consumer predicate takes the consumer's index).
TEMPORAL_OPERATORS: dict[str, tuple[str | None, str]] = {
    "rebalance_completes": ("Rebalancing", "RebalanceDone"),
    "join_answered": ("JoinInFlight", "JoinAnswered"),
    "sync_answered": ("SyncInFlight", "SyncAnswered"),
    "consumer_eventually_stable": (None, "ConsumerEventuallyStable"),
    "partitions_reowned": (None, "PartitionsReowned"),
    "pending_resolved": ("PendingOf", "PendingResolved"),
    "rebalancing_stops": (None, "NotRebalancing"),
    "group_settles": (None, "Settled"),
}
FAIRNESS_SPECS = {"none": "SpecNone", "weak": "SpecWeak", "strong": "SpecStrong"}

_INSTANCE = re.compile(r"^([a-z_]+)(?:\[c(\d+)\])?$")


def temporal_formula(instance: str) -> str:
    """The TLA+ formula of a kgc liveness instance: ``join_answered[c2]`` is
    ``Behaviour => (JoinInFlight(1) ~> JoinAnswered(1))``."""
    match = _INSTANCE.match(instance)
    if match is None or match.group(1) not in TEMPORAL_OPERATORS:
        raise NotTranscribed(f"no TLA+ formula for the liveness property {instance!r}")
    trigger, goal = TEMPORAL_OPERATORS[match.group(1)]
    arg = "" if match.group(2) is None else f"({int(match.group(2)) - 1})"
    if temporal.by_name(match.group(1)).form == temporal.EVENTUALLY_ALWAYS:
        return f"Behaviour => <>[]({goal}{arg})"
    if trigger is None:
        return f"Behaviour => []<>({goal}{arg})"
    return f"Behaviour => (({trigger}{arg}) ~> ({goal}{arg}))"


@dataclass(frozen=True)
class TlcTemporal:
    holds: bool
    """No property was violated (TLC's "No error has been found"); else TLC found a lasso."""
    distinct_states: int
    output: str


def run_tlc_temporal(
    jar: Path,
    config: Config,
    fairness: str,
    instances: list[str],
    live_spec: Path = LIVE_SPEC,
    java: str = "java",
    timeout: float = 600,
) -> TlcTemporal:
    """Check the liveness ``instances`` of ``config`` under kgc's ``fairness`` level with TLC (one
    worker). TLC stops at the first violated property, so name one instance to learn its verdict."""
    if fairness not in FAIRNESS_SPECS:
        raise ValueError(f"fairness must be one of {', '.join(FAIRNESS_SPECS)}, got {fairness!r}")
    formulas = [temporal_formula(i) for i in instances]
    module = ["---- MODULE MC ----", "EXTENDS KgcClassicGroupLive"]
    module += [f"P{n} == {f}" for n, f in enumerate(formulas)]
    module.append("====")
    cfg = ["CONSTANTS", *(f"    {k} = {v}" for k, v in constants(config).items())]
    cfg += [f"SPECIFICATION {FAIRNESS_SPECS[fairness]}", "INVARIANT SerialsBounded"]
    cfg += [f"PROPERTY P{n}" for n in range(len(formulas))]
    with tempfile.TemporaryDirectory(prefix="kgc-tlc-") as meta:
        shutil.copyfile(SPEC, Path(meta) / SPEC.name)
        shutil.copyfile(live_spec, Path(meta) / LIVE_SPEC.name)
        (Path(meta) / "MC.tla").write_text("\n".join(module) + "\n")
        (Path(meta) / "MC.cfg").write_text("\n".join(cfg) + "\n")
        command = [
            java, "-XX:+UseParallelGC", "-Xmx512m", "-cp", str(jar.resolve()), "tlc2.TLC",
            "-workers", "1", "-deadlock", "-nowarning",
            "-metadir", str(Path(meta) / "states"), "-config", "MC.cfg", "MC.tla",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=meta, check=False)
    out = done.stdout + done.stderr
    counts = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out)
    clean = "No error has been found" in out and done.returncode == 0
    violated = "Temporal properties were violated" in out
    if counts is None or not (clean or violated):
        tail = "\n".join(out.strip().splitlines()[-15:])
        raise TlcError(f"TLC exited {done.returncode} without a liveness verdict:\n{tail}")
    return TlcTemporal(holds=clean, distinct_states=int(counts.group(2).replace(",", "")), output=out)
