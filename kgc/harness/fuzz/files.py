"""The fuzz machine's files: the failure report and the scenario file that replays the run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kgc.harness.fuzz.machine_state import MachineState
from kgc.harness.fuzz.scenario import render, replay_summary


class Files(MachineState):
    """Writes the scenario file of a failing run and says where."""

    def _report(self, message: str, step: int, expected: dict[str, Any] | None) -> str:
        """The failure message: the disagreement, where the scenario file was written, whether it
        reproduces the failure, and the file itself."""
        o = self.OPTIONS
        description = f"Found by the Hypothesis machine against the {self.target.name} target ({o.profile}): {message}"
        name = f"{o.name}-counterexample"
        build = self.target.replay
        shared = frozenset(self.shared_deadlines)
        document = self.recorder.document(name, description, build, step, expected, shared)
        text = render(document)
        where = self._write(name, text)
        replayed = replay_summary(document, build) if build is not None else "no replay target to check it on"
        mutant = f" --mutant {o.mutant}" if o.mutant else ""
        return (
            f"{message}\n\nA scenario file that replays this run ({where}; "
            f"kgc replay FILE --profile {o.profile}{mutant}): {replayed}\n{text}"
        )

    def _write(self, name: str, text: str) -> str:
        """Write the scenario file; says where (or why it could not)."""
        directory = Path(self.OPTIONS.out_dir or os.environ.get("KGC_FUZZ_OUT") or "fuzz-counterexamples")
        path = directory / f"{name}.json"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        except OSError as exc:
            return f"not written: {exc.strerror}"
        return f"written to {path}"
