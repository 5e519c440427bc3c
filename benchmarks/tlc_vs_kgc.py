"""Benchmark: TLC (one worker) and ``kgc check`` on the same fault-free configuration, alternating.

TLC runs ``benchmarks/tla/KgcClassicGroup.tla``, the transcription of kgc's fault-free model, on
the TLC model of the configuration; kgc runs ``kgc check --json --workers 1`` on it (one process,
as TLC runs one worker). Both reach the same
distinct states (the script fails when they do not). Each round runs both, TLC first in odd
rounds and kgc first in even ones, so that load from other processes falls on both alike. The
CPU seconds are user + sys of each child process (``getrusage(RUSAGE_CHILDREN)``): the JVM's
every thread (worker, GC, JIT) and start-up, kgc's interpreter and start-up. kgc also evaluates
all of its properties on every state; TLC checks no invariant here.

Prints one JSON line per run and a summary line (medians, the ratio of kgc's distinct states per
CPU second to TLC's, the load average before and after, the commit measured, the TLC source).

    .venv/bin/python benchmarks/tlc_vs_kgc.py --tlc-jar benchmarks/tla/.tlc/tla2tools.jar
    .venv/bin/python benchmarks/tlc_vs_kgc.py --tlc-jar JAR --rounds 5 consumers=2 max_generation=2

FIELD=VALUE arguments override kgc's fault-free default (3 consumers, 1 static, 3 partitions,
generations <= 3, faults none, max_perturbations 0). Exit 0: done, counts equal; 1: the counts
differ or a run failed; 150: bad input (one line on stderr). ``--kgc-engine python`` measures
kgc's pure-Python engine (the default, ``auto``, is the native core when it is built).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "tla"))

import kgc_tla  # noqa: E402

from kgc.explorer.search import ENGINES, Explorer  # noqa: E402
from kgc.model.config import Config, ConfigError  # noqa: E402

INPUT_ERROR_EXIT = 150
ROOT = Path(__file__).resolve().parents[1]
_KGC = "import sys; from kgc.cli import main; sys.exit(main(sys.argv[1:]))"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_kgc(config: Config, engine: str) -> dict[str, Any]:
    # safety only: TLC checks no property here, and kgc's liveness pass would double its time
    command = [sys.executable, "-c", _KGC, "check", "--json", "--no-progress", "--no-liveness", "--workers", "1"]
    command += kgc_tla.kgc_arguments(config)
    cpu = _children_cpu()
    env = {**os.environ, "KGC_ENGINE": engine}
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT, env=env)
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"kgc check exited {done.returncode}: {done.stderr.strip()[-500:]}")
    stats = json.loads(done.stdout)["stats"]
    return {
        "tool": "kgc",
        "distinct_states": stats["distinct_states"],
        "cpu_s": round(cpu, 2),
        "search_wall_s": stats["seconds"],
        "states_per_cpu_s": round(stats["distinct_states"] / cpu),
    }


def run_tlc(jar: Path, cfg: Path) -> dict[str, Any]:
    result = kgc_tla.run_tlc(jar, cfg)
    return {
        "tool": "tlc",
        "distinct_states": result.distinct_states,
        "cpu_s": round(result.cpu_seconds, 2),
        "wall_s": round(result.wall_seconds, 2),
        "states_per_cpu_s": round(result.distinct_states / result.cpu_seconds),
    }


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    return done.stdout.strip() + ("+changes" if dirty.stdout.strip() else "") if done.returncode == 0 else "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tlc_vs_kgc", description=__doc__.splitlines()[0])
    parser.add_argument("--tlc-jar", required=True, type=Path, metavar="PATH", help="tla2tools.jar")
    parser.add_argument("--rounds", type=int, default=3, metavar="N", help="rounds of one TLC and one kgc run (3)")
    parser.add_argument(
        "--kgc-engine", choices=ENGINES, default="auto", help="kgc's search engine (KGC_ENGINE; default auto)"
    )
    parser.add_argument("overrides", nargs="*", metavar="FIELD=VALUE")
    args = parser.parse_args(argv)
    try:
        if not args.tlc_jar.is_file():
            raise ValueError(f"--tlc-jar {args.tlc_jar}: no such file (benchmarks/tla/build_tlc.sh builds one)")
        if args.rounds < 1:
            raise ValueError(f"--rounds must be at least 1, got {args.rounds}")
        pairs = [arg.split("=", 1) for arg in args.overrides]
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError("configuration arguments are FIELD=VALUE")
        config = Config.from_mapping({"faults": "none", "max_perturbations": 0, **dict(pairs)})
        kgc_tla.check_transcribed(config)
        engine = Explorer(config, engine=args.kgc_engine).engine_for_run()
    except (ValueError, ConfigError) as exc:
        print(f"tlc_vs_kgc: {exc}", file=sys.stderr)
        return INPUT_ERROR_EXIT
    source = args.tlc_jar.resolve().parent / "SOURCE"
    runs: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="kgc-tlc-bench-") as tmp:
        cfg = Path(tmp) / "kgc.model.cfg"
        cfg.write_text(kgc_tla.cfg_text(config))
        for round_no in range(1, args.rounds + 1):
            order = ("tlc", "kgc") if round_no % 2 else ("kgc", "tlc")
            for tool in order:
                try:
                    run = run_tlc(args.tlc_jar, cfg) if tool == "tlc" else run_kgc(config, engine)
                except (RuntimeError, kgc_tla.TlcError) as exc:
                    print(f"tlc_vs_kgc: round {round_no}: {exc}", file=sys.stderr)
                    return 1
                if tool == "kgc":
                    run["engine"] = engine
                run["round"] = round_no
                run["loadavg_1m"] = os.getloadavg()[0]
                runs.append(run)
                print(json.dumps(run), flush=True)
    load_after = os.getloadavg()

    def median(tool: str, field: str) -> float:
        return float(statistics.median(r[field] for r in runs if r["tool"] == tool))

    counts = {r["distinct_states"] for r in runs}
    summary = {
        "summary": True,
        "config": {k: v for k, v in config.describe().items() if k in dict(pairs)} or "fault-free default",
        "distinct_states": sorted(counts),
        "counts_equal": len(counts) == 1,
        "rounds": args.rounds,
        "tlc_cpu_s_median": median("tlc", "cpu_s"),
        "kgc_cpu_s_median": median("kgc", "cpu_s"),
        "tlc_states_per_cpu_s_median": median("tlc", "states_per_cpu_s"),
        "kgc_states_per_cpu_s_median": median("kgc", "states_per_cpu_s"),
        "kgc_over_tlc": round(median("kgc", "states_per_cpu_s") / median("tlc", "states_per_cpu_s"), 2),
        "loadavg_before": load_before,
        "loadavg_after": load_after,
        "kgc_engine": engine,
        "kgc_commit": _commit(),
        "tlc_source": source.read_text().strip() if source.is_file() else "unknown",
    }
    print(json.dumps(summary), flush=True)
    return 0 if len(counts) == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
