"""Fuzzing every verb's inputs: whatever a user hands kgc ends with a documented exit code, at most
one line on stderr (exactly one for bad input), no traceback, no half-written file, and within a
time bound.

Each verb is run in this process (``kgc.cli.main``) on inputs Hypothesis builds two ways:
*structure-aware* (a valid file of the verb's format with a few fields replaced by other JSON
values — wrong types, NaN, huge numbers, deep nesting —, deleted or added) and *raw bytes*
(arbitrary bytes, and crafted ones: not UTF-8, 100,000 nested brackets, a number of 10,000
digits). Explorations are bounded by ``--max-states`` so a valid input finishes quickly.
``INPUTS_TRIED`` counts what was tried; the README reports it.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import signal
import socket
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgc.cli import exits, main

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = json.loads((ROOT / "scenarios" / "store_race.json").read_text())
KNOWN = json.loads((ROOT / "known-divergences" / "tansu-0.6.0.json").read_text())
CONFIG = {"consumers": 2, "partitions": 2, "max_generation": 2, "faults": ["crash"], "max_perturbations": 1}
TIME_BOUND_S = 60
"""No single run may take longer (a hang fails the test)."""
BOUNDED = ["--max-states", "300", "--no-progress"]
SCALE = float(os.environ.get("KGC_BAD_INPUT_SCALE", "1"))
"""Multiplies every example count (``KGC_BAD_INPUT_SCALE=10`` for a longer hunt)."""
QUIET = {"deadline": None, "suppress_health_check": list(HealthCheck), "database": None}
STRUCTURED = settings(max_examples=int(30 * SCALE), **QUIET)  # type: ignore[arg-type]
RAW = settings(max_examples=int(15 * SCALE), **QUIET)  # type: ignore[arg-type]

INPUTS_TRIED: dict[str, int] = {}
EXIT_CODES: dict[int, int] = {}


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang()


@contextlib.contextmanager
def time_bound(seconds: int) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_verb(verb: str, argv: list[str], out_dir: Path | None = None) -> tuple[int, str, str]:
    """``kgc ARGV`` in process; asserts the contract every run must keep."""
    INPUTS_TRIED[verb] = INPUTS_TRIED.get(verb, 0) + 1
    out, err = io.StringIO(), io.StringIO()
    try:
        with time_bound(TIME_BOUND_S), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except Hang:
        pytest.fail(f"kgc {' '.join(argv)} did not finish within {TIME_BOUND_S} s")
    stderr = err.getvalue()
    EXIT_CODES[code] = EXIT_CODES.get(code, 0) + 1
    allowed = exits.BY_VERB[verb]
    assert code in allowed, f"kgc {' '.join(argv)} exited {code}, not one of {allowed}: {stderr}"
    assert "Traceback" not in stderr and "Traceback" not in out.getvalue(), stderr
    assert stderr.count("\n") <= 1, f"more than one line on stderr: {stderr!r}"
    if code == exits.BAD_INPUT:
        assert stderr.startswith("kgc: error: ") and stderr.count("\n") == 1, stderr
    if out_dir is not None:
        leftovers = [p.name for p in out_dir.iterdir() if p.name.startswith(".")]
        assert not leftovers, f"half-written files left behind: {leftovers}"
    return code, out.getvalue(), stderr


# ---------------------------------------------------------------------- input strategies

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 6, 7, 10_000_000, 2**63, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "c1", "c99#0", "JoinGroup", "Stable", "NONE", "nan", "x" * 300]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)


def _slots(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a document: dict keys and list indexes, as paths."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*path, k)
            yield from _slots(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*path, i)
            yield from _slots(v, (*path, i))


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    """``base`` with one to three places replaced by another value, deleted, or given a new key."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        slots = list(_slots(doc))
        if not slots:
            break
        path = draw(st.sampled_from(slots))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "replace":
            parent[key] = draw(JSON_VALUES)
        elif action == "delete":
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(JSON_VALUES)
        else:
            parent.insert(key, draw(JSON_VALUES))
    return doc


CRAFTED = [
    b"\xff\xfe\x00garbage",
    b"[" * 100_000,
    b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    b"1" * 10_000,
    b"NaN",
    b'{"consumers": Infinity}',
    b"",
    b"\x00",
    b"consumers = nan\n",
    b'{"a": 1, "a": 2}',
]
RAW_BYTES = st.one_of(st.sampled_from(CRAFTED), st.binary(max_size=300))


def as_bytes(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True).encode()


@pytest.fixture(scope="module")
def trace_doc() -> dict[str, Any]:
    """A real counterexample (leader_not_reelected, two steps) as ``kgc check --out`` writes it."""
    with tempfile.TemporaryDirectory() as tmp:
        code, _, _ = run_verb(
            "check",
            [
                "check",
                "--consumers",
                "2",
                "--partitions",
                "1",
                "--max-generation",
                "1",
                "--mutant",
                "leader_not_reelected",
                "--max-depth",
                "3",
                "--no-progress",
                "--out",
                tmp,
            ],
        )
        assert code == exits.VIOLATION
        doc: dict[str, Any] = json.loads((Path(tmp) / "leader_is_member.json").read_text())
    return doc


def write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------------- one test per file kind


def _check_config(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        cfg = write(tmp, f"cfg.{suffix}", data)
        out = tmp / "out"
        out.mkdir()
        run_verb("check", ["check", "--config", str(cfg), *BOUNDED, "--out", str(out)], out)
        run_verb("report", ["report", "--config", str(cfg), *BOUNDED, "-o", str(out / "r.html")], out)
        run_verb("diagram", ["diagram", "graph", "--config", str(cfg), "--limit", "40", "-o", str(out / "g.dot")], out)
        run_verb("mutants", ["mutants", "--config", str(cfg), "--mutant", "leader_not_reelected", *BOUNDED], out)
        diff = ["diff", "--config", str(cfg), "--profile", "scala-3.x", "--profile", "java-4.0", *BOUNDED]
        run_verb("diff", [*diff, "--out", str(out)], out)
        run_verb("explore", ["explore", "--config", str(cfg), "--html", str(out / "e.html")], out)
        run_verb("bugs", ["bugs", "--config", str(cfg), "--max-states", "300", "--no-liveness"], out)


@STRUCTURED
@given(doc=mutated(CONFIG))
def test_configuration_files_structured(doc: Any) -> None:
    _check_config(as_bytes(doc), "json")


@RAW
@given(data=RAW_BYTES, suffix=st.sampled_from(["json", "toml"]))
def test_configuration_files_raw(data: bytes, suffix: str) -> None:
    _check_config(data, suffix)


OPTION_VALUES = st.sampled_from(
    [
        *("nan", "inf", "-inf", "-1", "0", "1e309", "abc", "0.001", "", "1e-300", "3", "banana", "500M", "1.5G"),
        *("2X", "1M", "none", "None", "65536", "99999999999999999999", "0x10", "1_000"),
    ]
)


OPTIONS = st.sampled_from(["--time-limit", "--max-states", "--max-depth", "--max-memory", "--consumers", "--set"])


@RAW
@given(option=OPTIONS, value=OPTION_VALUES)
def test_numeric_options(option: str, value: str) -> None:
    value = f"consumers={value}" if option == "--set" else value
    run_verb("check", ["check", "--consumers", "1", "--max-generation", "1", *BOUNDED, option, value])


#: Every other verb that explores, each in a configuration small enough for the fuzz's time bound,
#: with the options it takes (the bounds every exploring verb shares, and its own).
VERB_RUNS: dict[str, tuple[list[str], list[str]]] = {
    "report": (["report", "--consumers", "1", "--no-progress", "--no-liveness"], ["--time-limit", "--max-memory"]),
    "diagram": (["diagram", "states", "--consumers", "1", "--no-progress"], ["--time-limit", "--max-states"]),
    "mutants": (
        ["mutants", "--consumers", "1", "--mutant", "leader_not_reelected", "--no-progress"],
        ["--time-limit", "--max-memory", "--max-states"],
    ),
    "bugs": (["bugs", "--consumers", "1", "--no-liveness"], ["--time-limit", "--max-memory", "--max-states"]),
    "diff": (
        ["diff", "--consumers", "1", "--mutant", "commit_unfenced", "--no-progress"],
        ["--time-limit", "--max-memory", "--max-depth"],
    ),
    "explore": (["explore", "--consumers", "1"], ["--port", "--html", "--consumers", "--depth", "--max-states"]),
}


@RAW
@given(verb=st.sampled_from(sorted(VERB_RUNS)), data=st.data(), value=OPTION_VALUES)
def test_the_options_of_every_exploring_verb(verb: str, data: st.DataObject, value: str) -> None:
    """The bounds and each verb's own options, given bad numbers (and ``none``, which lifts a
    default bound): one line and 150, or a run within the bound — never a hang or a traceback.
    ``explore`` is only ever asked for its file (``--html``), never to serve."""
    argv, options = VERB_RUNS[verb]
    option = data.draw(st.sampled_from(options))
    with tempfile.TemporaryDirectory() as t:
        out = Path(t)
        extra = (
            ["-o", str(out / "r.html")] if verb == "report" else ["-o", str(out / "g.dot")] if verb == "diagram" else []
        )
        if verb == "explore":
            target = str(out / f"{value}.html") if option == "--html" else str(out / "e.html")
            extra = ["--html", target]
            if option == "--html":
                run_verb(verb, [*argv, *extra], out)
                return
        bound = [] if verb == "explore" or option == "--max-states" else ["--max-states", "300"]
        run_verb(verb, [*argv, *bound, *extra, option, value], out)


def _check_trace(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        trace = write(tmp, "t.json", data)
        out = tmp / "out"
        out.mkdir()
        (out / "chart.svg").write_text("previous chart")
        code, _, _ = run_verb("diagram", ["diagram", "trace", str(trace), "-o", str(out / "chart.svg")], out)
        if code != exits.OK:
            assert (out / "chart.svg").read_text() == "previous chart"
        for extra in _trace_verbs(trace, out):
            run_verb(extra[0], extra, out)


def _trace_verbs(trace: Path, out: Path) -> list[list[str]]:
    """Other verbs reading a trace (filled in as they exist)."""
    from kgc.cli import VERB_MODULES

    verbs = []
    if "kgc.cli.cmd_scenario" in VERB_MODULES:
        verbs.append(["scenario", "from-trace", str(trace), "--out", str(out / "s.json")])
    if "kgc.cli.cmd_explore" in VERB_MODULES:  # the self-contained page: the explorer without a server
        verbs.append(["explore", str(trace), "--html", str(out / "e.html")])
    return verbs


@STRUCTURED
@given(data=st.data())
def test_trace_files_structured(trace_doc: dict[str, Any], data: st.DataObject) -> None:
    _check_trace(as_bytes(data.draw(mutated(trace_doc))))


@RAW
@given(data=RAW_BYTES)
def test_trace_files_raw(data: bytes) -> None:
    _check_trace(data)


def test_trace_cross_checks(trace_doc: dict[str, Any], tmp_path: Path) -> None:
    """The inputs of the issue's report: a huge consumer count, a count that disagrees with the
    configuration or the steps, an unknown action."""
    cases: list[tuple[Callable[[dict[str, Any]], None], str]] = [
        (lambda d: d.update(consumers=10_000_000), "consumers: must be between 1 and 6"),
        (lambda d: d.update(consumers=1), "trace's configuration has 2"),
        (lambda d: d["config"].update(consumers=3), "trace's configuration has 3"),
        (lambda d: d["steps"][0].update(action="teleport"), "unknown value 'teleport'"),
        (lambda d: d["steps"][0]["consumers"].pop(), "1 consumers, but the trace has 2"),
        (lambda d: d["steps"][-1]["group"].update(state="Sleeping"), "unknown value 'Sleeping'"),
    ]
    for change, needle in cases:
        doc = copy.deepcopy(trace_doc)
        change(doc)
        path = write(tmp_path, "t.json", as_bytes(doc))
        code, _, err = run_verb("diagram", ["diagram", "trace", str(path), "-o", str(tmp_path / "c.svg")], tmp_path)
        assert code == exits.BAD_INPUT and needle in err, (needle, err)


def _check_scenarios(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        path = write(tmp, "s.json", data)
        run_verb("replay", ["replay", str(path)])
        run_verb("replay", ["replay", str(path), "--target", "model"])
        run_verb("serve", ["serve", "--scenarios", str(path)])


SCENARIO_CLIENTS = copy.deepcopy(SCENARIO)
SCENARIO_CLIENTS["scenarios"][0]["client_checks"] = ["exclusive_ownership", "commit_fencing"]
"""A scenario judged on its consumers too (``client_checks``; kgc scenario from-trace writes them)."""


@STRUCTURED
@given(doc=st.one_of(mutated(SCENARIO), mutated(SCENARIO_CLIENTS)))
def test_scenario_files_structured(doc: Any) -> None:
    _check_scenarios(as_bytes(doc))


@RAW
@given(data=RAW_BYTES)
def test_scenario_files_raw(data: bytes) -> None:
    _check_scenarios(data)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _check_known(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        path = write(tmp, "k.json", data)
        argv = ["conformance", "--bootstrap", f"127.0.0.1:{_closed_port()}", "--no-scenarios", "--budget", "0"]
        argv.append("--allow-empty")  # a valid file reaches the (closed) broker: 153
        run_verb("conformance", [*argv, "--known", str(path), "--out", str(tmp / "o")])


@settings(max_examples=int(12 * SCALE), **QUIET)  # type: ignore[arg-type]
@given(doc=mutated(KNOWN))
def test_known_divergence_files_structured(doc: Any) -> None:
    _check_known(as_bytes(doc))


@settings(max_examples=int(8 * SCALE), **QUIET)  # type: ignore[arg-type]
@given(data=RAW_BYTES)
def test_known_divergence_files_raw(data: bytes) -> None:
    _check_known(data)


# ---------------------------------------------------------------------- kgc serve and kgc clients

CLIENT_KNOWN = json.loads((ROOT / "known-divergences" / "clients.json").read_text())
CLIENT_RUN = {
    "format": "kgc-clients-run",
    "version": 1,
    "library": "kafka-python",
    "mutant": None,
    "options": {
        "session_timeout_ms": 2000,
        "heartbeat_interval_ms": 300,
        "max_poll_interval_ms": 3000,
        "partitions": 3,
        "assignment": "eager",
        "static_members": 1,
    },
    "steps": [
        {"op": "start", "auto_commit": False, "commit": "none"},
        {"op": "start", "auto_commit": False, "commit": "none", "group_instance_id": "instance-1"},
        {"op": "set", "client": "c1", "poll_ms": 200, "process_ms": 30, "commit": "sync"},
        {"op": "fault", "kind": "delay_sync", "client": None},
        {"op": "stall", "client": "c1", "ms": 300},
        {"op": "commit", "client": "c1", "mode": "async"},
        {"op": "wait", "ms": 300},
        {"op": "kill", "client": "c1"},
    ],
    "violations": [],
}


@contextlib.contextmanager
def no_broker() -> Iterator[None]:
    """A valid ``kgc clients`` input would start tansu and real consumers: with the broker's
    binary pointed nowhere it ends at once with 153 instead (the input was accepted)."""
    previous = os.environ.get("KGC_TANSU_BIN")
    os.environ["KGC_TANSU_BIN"] = "/nonexistent/tansu"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["KGC_TANSU_BIN"]
        else:
            os.environ["KGC_TANSU_BIN"] = previous


def _check_client_files(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as t, no_broker():
        tmp = Path(t)
        path = write(tmp, "f.json", data)
        run_verb("clients", ["clients", "--replay", str(path)])
        run_verb("clients", ["clients", "--known", str(path), "--out", str(tmp / "o")])


def test_the_unmutated_client_files_are_accepted() -> None:
    """The fuzzing's starting points are valid (a refusal of every input would pass the fuzz tests
    above): the run file, with a static member, goes as far as starting the broker (153)."""
    with tempfile.TemporaryDirectory() as t, no_broker():
        path = write(Path(t), "run.json", as_bytes(CLIENT_RUN))
        code, _, stderr = run_verb("clients", ["clients", "--replay", str(path)])
    assert code == exits.SYSTEM, stderr


@settings(max_examples=int(12 * SCALE), **QUIET)  # type: ignore[arg-type]
@given(doc=st.one_of(mutated(CLIENT_RUN), mutated(CLIENT_KNOWN)))
def test_client_files_structured(doc: Any) -> None:
    _check_client_files(as_bytes(doc))


@settings(max_examples=int(8 * SCALE), **QUIET)  # type: ignore[arg-type]
@given(data=RAW_BYTES)
def test_client_files_raw(data: bytes) -> None:
    _check_client_files(data)


WIRE_VALUES = st.one_of(
    OPTION_VALUES,
    st.sampled_from(["70000", "65535", "x:1", "127.0.0.1:0", "[::1]:9", "/no/such/dir/t.jsonl", "1" * 50, "-0"]),
    st.text(max_size=20),
)
SERVE_OPTIONS = st.sampled_from(
    ["--port", "--duration", "--initial-rebalance-delay-ms", "--upstream", "--trace", "--profile", "--mutant"]
    + ["--fault"]
)
FAULT_SPECS = st.builds(
    lambda parts: ",".join(parts),
    st.lists(
        st.builds(
            lambda k, v: f"{k}={v}",
            st.sampled_from(["kind", "api", "client", "member", "ms", "error", "times", "nope"]),
            st.one_of(
                st.sampled_from(["hold", "delay", "drop", "close", "error", "Heartbeat", "NOT_COORDINATOR", "5"]),
                OPTION_VALUES,
            ),
        ),
        max_size=4,
    ),
)


@settings(max_examples=int(20 * SCALE), **QUIET)  # type: ignore[arg-type]
@given(option=SERVE_OPTIONS, value=WIRE_VALUES, fault=FAULT_SPECS)
def test_serve_options(option: str, value: str, fault: str) -> None:
    """Every bad option fails before the server binds; a valid set serves 50 ms and stops. A
    ``--duration`` the fuzz gives is kept short (a long one is a request to serve, not a hang)."""
    if option == "--duration":
        try:
            if float(value) > 2:
                value = "2"
        except ValueError:
            pass
    argv = ["serve", *(["--duration", "0.05"] if option != "--duration" else []), option, value]
    with tempfile.TemporaryDirectory() as t:
        if option == "--trace" and not value.startswith("/"):
            value = str(Path(t) / value) if value else value
            argv[-1] = value
        run_verb("serve", argv)
        run_verb("serve", ["serve", "--duration", "0.05", "--fault", fault])


CLIENT_OPTIONS = st.sampled_from(
    ["--budget", "--steps", "--seed", "--static", "--out", "--known", "--mutant", "--client"]
)


@settings(max_examples=int(15 * SCALE), **QUIET)  # type: ignore[arg-type]
@given(option=CLIENT_OPTIONS, value=WIRE_VALUES)
def test_clients_options(option: str, value: str) -> None:
    with tempfile.TemporaryDirectory() as t, no_broker():
        out = [] if option == "--out" else ["--out", str(Path(t) / "o")]
        run_verb("clients", ["clients", *out, option, value])


# ---------------------------------------------------------------------- timing files, logs, checkpoints

#: Kafka's defaults (examples/timing/defaults.toml, as JSON: every table, ranges among the values): a mutated
#: document that still parses is answered in seconds, also when the mutation drops a table; ranges.json's
#: wide ranges made dead_consumer_reowned alone take two minutes a document. What is fuzzed is the reading
#: of the file, not z3.
TIMING = tomllib.loads((ROOT / "examples" / "timing" / "defaults.toml").read_text())


def _check_timing(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        path = write(tmp, f"timing.{suffix}", data)
        out = tmp / "out"
        argv = ["timing", str(path), "--question", "poll_timeout_leave", "--timeline-lines", "0"]
        run_verb("timing", [*argv, "--out", str(out)], out if out.exists() else None)
        run_verb("report", ["report", "--consumers", "1", *BOUNDED, "--timing", str(path), "-o", str(tmp / "r.html")])


@STRUCTURED
@given(doc=mutated(TIMING))
def test_timing_files_structured(doc: Any) -> None:
    _check_timing(as_bytes(doc), "json")


@RAW
@given(data=RAW_BYTES, suffix=st.sampled_from(["json", "toml"]))
def test_timing_files_raw(data: bytes, suffix: str) -> None:
    _check_timing(data, suffix)


LOG_LINES = (ROOT / "tests" / "logs" / "excerpts" / "jaeger-1774.log").read_bytes().splitlines(keepends=True)[:40]
LOG_BYTES = st.one_of(
    RAW_BYTES,
    st.lists(st.sampled_from(LOG_LINES), max_size=30).map(b"".join),
    st.builds(lambda lines, junk: b"".join(lines) + junk, st.lists(st.sampled_from(LOG_LINES), max_size=10), RAW_BYTES),
)


@RAW
@given(data=LOG_BYTES, gz=st.booleans())
def test_log_files(data: bytes, gz: bool) -> None:
    """A log's content is never bad input, but a log in which nothing was validated is (150), and
    ``--out`` is whole or absent."""
    import gzip

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        logs = tmp / "logs"
        logs.mkdir()
        path = write(logs, "server.log.gz" if gz else "server.log", gzip.compress(data) if gz else data)
        out = tmp / "out"
        code, _, _ = run_verb("logs", ["logs", str(path)])
        code_dir, _, _ = run_verb("logs", ["logs", str(logs), "--out", str(out)], None)
        assert code == code_dir
        if code == exits.OK or code == exits.FAILED:
            assert json.loads((out / "summary.json").read_text())["groups"] > 0
        assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


@pytest.fixture(scope="module")
def checkpoint_dir() -> Iterator[Path]:
    """A real checkpoint of a small search (interrupted at its first pause)."""
    from kgc.explorer import native, search

    if not native.AVAILABLE:
        pytest.fail("the native core is not built (scripts/setup.sh builds it)")
    with tempfile.TemporaryDirectory() as t:
        directory = Path(t) / "ck"
        stop_init = search._Stop.__init__

        def interrupted(self: Any) -> None:
            stop_init(self)
            self.interrupted = True

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(search._Stop, "__init__", interrupted)
            code, _, _ = run_verb("check", ["check", *CHECKPOINTED, "--checkpoint", str(directory)])
        assert code == exits.INTERRUPTED and (directory / "checkpoint.kgc").exists()
        yield directory


CHECKPOINTED = ["--consumers", "2", "--partitions", "1", "--max-generation", "2", "--max-perturbations", "1"]
CHECKPOINTED += ["--no-progress", "--no-liveness"]


@RAW
@given(data=st.data())
def test_checkpoint_files(checkpoint_dir: Path, data: st.DataObject) -> None:
    """A damaged checkpoint (bytes flipped, cut, appended, or replaced by anything) is refused in
    one line before any state is explored; the parents file is left as it was."""
    with tempfile.TemporaryDirectory() as t:
        directory = Path(t) / "ck"
        import shutil

        shutil.copytree(checkpoint_dir, directory)
        file = directory / "checkpoint.kgc"
        good = file.read_bytes()
        how = data.draw(st.sampled_from(["flip", "cut", "append", "raw", "parents"]))
        if how == "flip":
            damaged = bytearray(good)
            at = data.draw(st.integers(0, len(good) - 1))
            damaged[at] ^= data.draw(st.integers(1, 255))
            file.write_bytes(bytes(damaged))
        elif how == "cut":
            file.write_bytes(good[: data.draw(st.integers(0, len(good) - 1))])
        elif how == "append":
            file.write_bytes(good + data.draw(st.binary(min_size=1, max_size=20)))
        elif how == "raw":
            file.write_bytes(data.draw(RAW_BYTES))
        else:
            parents = directory / "parents.bin"
            damaged = bytearray(parents.read_bytes())
            damaged[data.draw(st.integers(0, len(damaged) - 1))] ^= 0x01
            parents.write_bytes(bytes(damaged))
        parents_before = (directory / "parents.bin").read_bytes()
        code, out, err = run_verb("check", ["check", *CHECKPOINTED, "--resume", str(directory)])
        assert code == exits.BAD_INPUT and "distinct states" not in out, (how, err)
        assert (directory / "parents.bin").read_bytes() == parents_before


# ---------------------------------------------------------------------- a FIFO or a device for every file input


def _file_inputs(tmp: Path, path: Path) -> list[tuple[str, list[str]]]:
    """Every verb's every file input, given ``path``."""
    out = str(tmp / "out")
    return [
        ("check", ["check", "--config", str(path), *BOUNDED]),
        ("report", ["report", "--config", str(path), *BOUNDED, "-o", str(tmp / "r.html")]),
        ("report", ["report", "--consumers", "1", *BOUNDED, "--timing", str(path), "-o", str(tmp / "r.html")]),
        ("diagram", ["diagram", "graph", "--config", str(path), "-o", str(tmp / "g.dot")]),
        ("diagram", ["diagram", "trace", str(path), "-o", str(tmp / "c.svg")]),
        ("mutants", ["mutants", "--config", str(path), *BOUNDED]),
        ("diff", ["diff", "--config", str(path), "--profile", "scala-3.x", "--profile", "java-4.0", *BOUNDED]),
        ("replay", ["replay", str(path)]),
        ("scenario", ["scenario", "from-trace", str(path)]),
        ("serve", ["serve", "--duration", "0.05", "--scenarios", str(path)]),
        ("conformance", ["conformance", "--broker", "tansu", "--scenarios", str(path), "--out", out]),
        ("conformance", ["conformance", "--broker", "tansu", "--known", str(path), "--out", out]),
        ("clients", ["clients", "--replay", str(path)]),
        ("clients", ["clients", "--known", str(path), "--out", out]),
        ("logs", ["logs", str(path)]),
        ("timing", ["timing", str(path)]),
    ]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory-of-fifo"])
def test_a_fifo_or_a_device_is_refused_by_every_verb(tmp_path: Path, kind: str) -> None:
    """Named as any input, a FIFO (whose open blocks) or ``/dev/zero`` (which never ends) is refused
    in one line without being read; so is a directory holding one where a verb reads
    directories."""
    for suffix in ("json", "toml"):
        if kind == "fifo":
            path = tmp_path / f"input.{suffix}"
            os.mkfifo(path)
        elif kind == "dev-zero":
            path = tmp_path / f"input.{suffix}"
            os.symlink("/dev/zero", path)
        else:
            path = tmp_path / "dir"
            path.mkdir()
            os.mkfifo(path / f"input.{suffix}")
        with no_broker():
            for verb, argv in _file_inputs(tmp_path, path):
                # Directories: logs reads every file; the scenario verbs read the *.json files only.
                if kind == "directory-of-fifo" and not (verb == "logs" or (suffix == "json" and verb != "clients")):
                    continue
                if kind == "directory-of-fifo" and verb not in ("logs", "replay", "conformance", "serve"):
                    continue
                code, _, err = run_verb(verb, argv)
                assert code == exits.BAD_INPUT, (argv, err)
        if path.is_dir():
            import shutil

            shutil.rmtree(path)
        else:
            path.unlink()


def test_a_checkpoint_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "ck"
    directory.mkdir()
    os.mkfifo(directory / "checkpoint.kgc")
    code, _, err = run_verb("check", ["check", *CHECKPOINTED, "--resume", str(directory)])
    assert code == exits.BAD_INPUT and "is a FIFO (named pipe), not a checkpoint file" in err, err


def test_unwritable_outputs_are_one_line(tmp_path: Path) -> None:
    """An output below a regular file (unwritable even for root) is refused before any work."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = [
        ("check", ["check", "--consumers", "1", "--no-progress", "--out", str(blocker / "d")]),
        ("report", ["report", "--consumers", "1", "--no-progress", "-o", str(blocker / "r.html")]),
        ("mutants", ["mutants", "--consumers", "1", "--no-progress", "--out", str(blocker / "d")]),
        ("bugs", ["bugs", "--bug", "KAFKA-16148", "--out", str(blocker / "d")]),
        ("diagram", ["diagram", "graph", "--consumers", "1", "-o", str(blocker / "g.svg")]),
        ("serve", ["serve", "--duration", "0.05", "--trace", str(blocker / "t.jsonl")]),
        ("clients", ["clients", "--out", str(blocker / "d")]),
    ]
    for verb, argv in cases:
        code, out, err = run_verb(verb, argv)
        assert code == exits.BAD_INPUT and str(blocker) in err, err


@pytest.mark.parametrize("kind", ["fifo", "link-to-device"])
def test_an_output_that_is_a_fifo_or_a_device_is_never_replaced(
    tmp_path: Path, kind: str, trace_doc: dict[str, Any]
) -> None:
    """Every file output of every verb, named as a FIFO or as a link to a character device: refused
    in one line before any work, and left as it was. (An atomic write renames over the name: run
    as root, ``--trace /dev/full`` replaced the machine's device node with a plain file.)"""
    path_of: dict[str, Path] = {}

    def target(suffix: str) -> str:
        path = tmp_path / f"{kind}-{len(path_of)}.{suffix}"
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/null")
        path_of[str(path)] = path
        return str(path)

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(trace_doc))
    one = ["--consumers", "1", "--partitions", "1", "--max-generation", "1"]
    cases = [
        ("check", ["check", *one, *BOUNDED, "--junit", target("xml")]),
        ("report", ["report", *one, *BOUNDED, "-o", target("html")]),
        ("diagram", ["diagram", "graph", *one, "-o", target("svg")]),
        ("diagram", ["diagram", "states", *one, "-o", target("dot")]),
        ("diagram", ["diagram", "trace", str(trace), "-o", target("svg")]),
        ("explore", ["explore", *one, "--html", target("html")]),
        ("scenario", ["scenario", "from-trace", str(trace), "--out", target("json")]),
        ("serve", ["serve", "--duration", "0.05", "--trace", target("jsonl")]),
        (
            "conformance",
            ["conformance", "--bootstrap", "127.0.0.1:1", "--no-scenarios", "--write-known", target("json")],
        ),
    ]
    for verb, argv in cases:
        code, _, err = run_verb(verb, argv)
        assert code == exits.BAD_INPUT and "kgc writes a new regular file there only" in err, (argv, err)
    for path in path_of.values():
        assert path.is_fifo() if kind == "fifo" else path.is_symlink(), f"{path} was replaced"


def test_every_verb_exits_150_on_a_usage_error() -> None:
    from kgc.cli import VERB_MODULES

    for module in VERB_MODULES:
        verb = module.rsplit("_", 1)[1]
        code, _, err = run_verb(verb, [verb, "--no-such-option"])
        assert code == exits.BAD_INPUT and ("unrecognized arguments" in err or "required" in err), err


@pytest.fixture(scope="module", autouse=True)
def _report_inputs_tried() -> Iterator[None]:
    """Print how many inputs were tried when the module ends (the README quotes it; ``-s``)."""
    yield
    total = sum(INPUTS_TRIED.values())
    print(f"\nbad-input fuzz: {total} runs: " + ", ".join(f"{k} {v}" for k, v in sorted(INPUTS_TRIED.items())))
    print("exit codes: " + ", ".join(f"{k}: {v}" for k, v in sorted(EXIT_CODES.items())))


#: The options of the verbs that drive an outside process (Kafka's coordinator in a JVM for
#: ``mbt``; a broker and client sequences for ``conformance``), each with values no option of its
#: kind accepts: they must be refused in one line before anything is started.
DRIVING_VERBS: dict[str, tuple[list[str], list[str]]] = {
    "mbt": (
        ["mbt"],
        [
            "--max-states",
            "--consumers",
            "--partitions",
            "--max-generation",
            "--max-perturbations",
            "--initial-rebalance-delay-ms",
            "--static-consumers",
        ],
    ),
    "conformance": (
        ["conformance", "--bootstrap", "127.0.0.1:1", "--no-scenarios"],
        ["--budget", "--time-limit", "--clients", "--max-wait", "--settle", "--request-timeout", "--hold"],
    ),
}
REFUSED_VALUES = st.sampled_from(["nan", "-inf", "abc", "", "1.5.2", "-7", "0x1G", "1e400", "½"])


@RAW
@given(verb=st.sampled_from(sorted(DRIVING_VERBS)), data=st.data(), value=REFUSED_VALUES)
def test_the_options_of_the_verbs_that_start_processes(verb: str, data: st.DataObject, value: str) -> None:
    """A bad number given to ``mbt`` or ``conformance`` is refused in one line (exit 150) before a
    JVM, a broker or a client is started."""
    argv, options = DRIVING_VERBS[verb]
    option = data.draw(st.sampled_from(options))
    with tempfile.TemporaryDirectory() as t:
        code, _, stderr = run_verb(verb, [*argv, "--out", str(Path(t) / "out"), option, value], Path(t))
    assert code == exits.BAD_INPUT, f"kgc {verb} {option} {value!r} exited {code}: {stderr}"


def test_conformance_refuses_a_budget_no_run_could_spend() -> None:
    """Each generated sequence takes real seconds on a broker: a budget beyond a million is refused."""
    with tempfile.TemporaryDirectory() as t:
        argv = ["conformance", "--bootstrap", "127.0.0.1:1", "--no-scenarios", "--out", str(Path(t) / "o")]
        code, _, stderr = run_verb("conformance", [*argv, "--budget", "9" * 400], Path(t))
    assert code == exits.BAD_INPUT and "must be 0 to 1,000,000" in stderr
