"""``kgc conformance --against kafka``: every divergence found on a broker re-run on a real Apache
Kafka broker beside it, so that each finding is confirmed by Kafka itself and not only by kgc.

For each kind, the shortest reproduction (the request sequence up to the divergent step, with the
reference's outcome as its expectation) is replayed on a Kafka broker started with the group
settings that sequence names (``kgc.broker.kafka.KafkaBrokers``), through the same wire client and
scenario runner, and the divergent field of Kafka's answer is read:

* **confirmed** — Kafka answers as kgc predicted: the broker's departure is Kafka's too;
* **kgc's own** — Kafka answers as the broker did: the finding is kgc's artefact (its reference,
  its settings or its timing), not the broker's;
* **Kafka differs from both** — neither: kgc's prediction is wrong *and* the broker departs from Kafka
  (for a broker judged against Kafka 3.6.2's behaviour, this is also where Kafka 4.0's own
  differences from 3.6.2 land);
* **not re-run** — the kind has no request sequence (ApiVersions), or Kafka's run did not reach the
  step (a wire failure), with why.

Kafka runs on its own clock as the broker does, so a finding about timing is re-judged with the
same real-clock margins (``--settle``) as the original run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgc.harness.conformance.differential import BrokerSettings, WireTarget, observable, scenario_from
from kgc.harness.conformance.divergence import DivergenceGroup, compact
from kgc.harness.scenario.compare import ABSENT, matches
from kgc.harness.scenario.format import ScenarioError
from kgc.harness.scenario.runner import run_scenario
from kgc.transport import WireError

CONFIRMED = "confirmed by Kafka"
KGC_OWN = "kgc's own: Kafka answers as the broker"
NEITHER = "Kafka differs from both"
NOT_RUN = "not re-run"


@dataclass(frozen=True)
class Rejudged:
    """What Kafka answered in a kind's shortest reproduction."""

    kind: str
    verdict: str
    kafka: Any = None
    why: str = ""

    def text(self) -> str:
        shown = f" (Kafka: {compact(self.kafka)})" if self.verdict != NOT_RUN else ""
        return f"{self.verdict}{shown}" + (f": {self.why}" if self.why else "")

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "verdict": self.verdict, "kafka": self.kafka, "why": self.why}


def rejudge(
    groups: Sequence[DivergenceGroup], target_for: Callable[[BrokerSettings], WireTarget]
) -> dict[str, Rejudged]:
    """Each group's shortest reproduction run on Kafka, by kind."""
    from kgc.harness.conformance.session import scenario_settings

    out: dict[str, Rejudged] = {}
    for group in groups:
        d = group.shortest
        if not d.scenario or not d.steps or d.step < 0:
            out[group.kind] = Rejudged(group.kind, NOT_RUN, why="no request sequence to re-run")
            continue
        doc = dict(d.scenario)
        expect = list(doc.get("expect", []))
        bare = {k: v for k, v in doc.items() if k != "key_asserts"}
        bare["expect"] = [{} for _ in doc["steps"]]
        try:
            scenario = scenario_from(bare, d.source)
        except ScenarioError as exc:
            out[group.kind] = Rejudged(group.kind, NOT_RUN, why=f"the reproduction does not load: {exc}")
            continue
        target = target_for(scenario_settings(doc, d.source))
        try:
            with target.coordinator(scenario) as coordinator:
                result = run_scenario(scenario, lambda _config: coordinator)
        except WireError as exc:
            out[group.kind] = Rejudged(group.kind, NOT_RUN, why=f"Kafka could not be used: {exc}")
            continue
        if len(result.steps) <= d.step or d.step >= len(expect):
            reason = result.reason or "it stopped early"
            out[group.kind] = Rejudged(group.kind, NOT_RUN, why=f"Kafka's run did not reach step {d.step} ({reason})")
            continue
        seen = observable(result.steps[d.step].actual, scenario.steps, d.step)
        if d.field_name.split(".", 1)[0].split("[", 1)[0] not in seen:
            out[group.kind] = Rejudged(
                group.kind, NOT_RUN, why=f"{d.field_name} is not observed in a plain run of the sequence"
            )
            continue
        kafka = value_at(seen, d.field_name)
        if _same(d.expected, kafka):
            out[group.kind] = Rejudged(group.kind, CONFIRMED, kafka)
        elif _same(d.actual, kafka):
            out[group.kind] = Rejudged(group.kind, KGC_OWN, kafka)
        else:
            out[group.kind] = Rejudged(group.kind, NEITHER, kafka)
    return out


def value_at(observed: Mapping[str, Any], path: str) -> Any:
    """The value of a field path as divergences name them (``response``, ``response.error``,
    ``completions[step=3].error``, ``group.state``) in an observed step, or ``<absent>``."""
    value: Any = observed
    for part in path.split("."):
        name, _, index = part.partition("[")
        if not isinstance(value, Mapping) or name not in value:
            return ABSENT
        value = value[name]
        if index:
            step = int(index.rstrip("]").split("=", 1)[1])
            found = (
                [c for c in value if isinstance(c, Mapping) and c.get("step") == step]
                if isinstance(value, list)
                else []
            )
            if not found:
                return ABSENT
            value = {k: v for k, v in found[0].items() if k not in ("step", "member")}
    return value


def _same(wanted: Any, kafka: Any) -> bool:
    """Whether Kafka's value is the one wanted (an expectation, which may say ``one_of``, or the
    broker's value). A dict is compared on the wanted keys only (an answer's fields kgc names)."""
    if isinstance(wanted, Mapping) and isinstance(kafka, Mapping) and set(wanted) != {"one_of"}:
        return all(k in kafka and _same(v, kafka[k]) for k, v in wanted.items())
    return wanted == kafka or matches(wanted, kafka)
