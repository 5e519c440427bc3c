"""The exit codes of every ``kgc`` verb: one table, TLC's codes where they apply.

TLC's codes (``tlc2.output.EC.ExitStatus``: 0 success, 12 safety violation, 13 liveness
violation, 150 a malformed specification, 152 a state space too large, 153 a system error, 255
an error) keep their meaning here. kgc adds four of its own, each for one outcome TLC has no code
for: 1 a test of an implementation or a comparison failed, 4 an exploration cut short by a
resource bound, 5 a timing proof about no run at all (vacuous), and the shells' 128+N for a run
stopped by signal N.

A verb never exits with a code outside :data:`TABLE`; 255 means a bug in kgc (the one line names
the exception), never bad input. Each verb's module declares the codes it may end with (``EXITS``);
``BY_VERB`` is made from them.
"""

from __future__ import annotations

OK = 0
"""Every property holds (``check``, ``report``), every scenario passed (``replay``), every mutant
was killed (``mutants``), the file was written (``diagram``, ``scenario``), no difference
(``diff``), no new divergence (``conformance``)."""

FAILED = 1
"""A test failed: a scenario failed (``replay``, ``serve --replay``), a mutant survived
(``mutants``), a new divergence (``conformance``) or finding (``clients``), the two sides behave
differently (``diff``), a path of the model's graph behaves otherwise on Kafka (``mbt``)."""

INCOMPLETE = 4
"""The exploration was cut short by ``--time-limit``, ``--max-states`` or memory (``--max-memory``,
or an allocation that failed, on any verb) before it covered the bounded model, and found no
violation: the verdict is "incomplete", not "ok" (``--allow-incomplete`` turns it into 0). Bounds
that define the model (``max_generation``, the budgets, an explicit ``--max-depth``) never make a
run incomplete. ``timing``: z3 could not decide a question, or a counterexample's concrete replay
was cut short by its bound."""

VACUOUS = 5
"""``timing``: a question no run satisfies the premises of (VACUOUS): it proves nothing, so it is
neither 0 nor a refutation (``--allow-vacuous`` turns it into 0). A refutation (12), an undecided
question (4) or a disagreement (1) outranks it."""

VIOLATION = 12
"""A safety property is violated (TLC's code). ``mutants``: the unmutated protocol violates one."""

LIVENESS = 13
"""A liveness property is violated (TLC's code)."""

BAD_INPUT = 150
"""Malformed input on any verb: an option, a configuration, a scenario, trace or known-divergence
file, a file that is not a regular file (a FIFO, a device), an output that cannot be written, a
damaged checkpoint or one of another search, format or kgc version (``check --resume``), a
checkpoint directory that holds another search's checkpoint (TLC's code for a malformed
specification); a checkpoint that cannot be written mid-run (a full disk, an unwritable directory:
the search stops there, its statistics and "incomplete" verdict printed first). Also input in
which there was nothing to check: ``logs`` that validated no group,
the same log given twice, ``conformance`` with nothing to compare (``--allow-empty`` accepts an
empty run). One line on stderr names the file and field."""

TOO_LARGE = 152
"""A state graph too large to draw (``diagram graph --limit``; TLC's code for a state space too
large)."""

SYSTEM = 153
"""The environment cannot run the job: Spark or Java missing, a Spark master that does not
answer, a broker that cannot be started or reached (TLC's system-error code)."""

INTERRUPTED = 130
"""Stopped by SIGINT (Ctrl-C): 128 + 2, the shells' convention. The statistics so far are
printed."""

TERMINATED = 143
"""Stopped by SIGTERM: 128 + 15."""

INTERNAL = 255
"""A bug in kgc: an unexpected exception (one line on stderr naming it)."""

TABLE: dict[int, str] = {
    OK: "success: every property holds / every scenario passed / the file was written / no difference",
    FAILED: "a test failed: a scenario failed, a mutant survived, a new divergence, the two sides differ",
    INCOMPLETE: "cut short by --time-limit, --max-states, --max-memory or a bound (incomplete)",
    VACUOUS: "a timing question no run satisfies the premises of (VACUOUS: nothing proved)",
    VIOLATION: "a safety property is violated",
    LIVENESS: "a liveness property is violated",
    BAD_INPUT: "malformed input: an option, a file, an unwritable output, a bad checkpoint; nothing to check",
    TOO_LARGE: "a state graph too large to draw",
    SYSTEM: "the environment cannot run the job (Spark, Java, a broker)",
    INTERRUPTED: "stopped by SIGINT; the statistics so far are printed",
    TERMINATED: "stopped by SIGTERM; the statistics so far are printed",
    INTERNAL: "a bug in kgc (one line on stderr)",
}

EVERY: tuple[int, ...] = (INCOMPLETE, BAD_INPUT, INTERRUPTED, TERMINATED)
"""The codes every verb can end with besides its own: INCOMPLETE (an allocation that failed), BAD_INPUT
and a signal (130/143); 255 (a bug) too, which no table lists."""


def codes_of(declared: tuple[int, ...]) -> tuple[int, ...]:
    """A verb's row: the codes its module declares (``EXITS``) and :data:`EVERY`, sorted."""
    return tuple(sorted({*declared, *EVERY}))


def __getattr__(name: str) -> dict[str, tuple[int, ...]]:
    """``BY_VERB``: which codes each verb can end with, each verb's row made from its module's own
    ``EXITS`` (the documentation's exit-code page is rendered from it; the fuzz test checks every run
    against it). Worked out when asked, since it loads every verb's module."""
    if name == "BY_VERB":
        from kgc.cli import _load_verbs

        return {verb: codes_of(module.EXITS) for verb, module in _load_verbs().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
