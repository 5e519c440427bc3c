"""``kgc conformance``: where a Kafka-protocol broker's group coordinator departs from Kafka's.

The scenario library and Hypothesis-generated request sequences are replayed on the reference
implementation (``kgc.reference``, Kafka 3.6.2) and on the broker over the wire (``kgc.transport``);
the first differing field of each is a divergence (``differential``), divergences are grouped by
kind (``divergence``), generated ones shrunk to the shortest sequence (``generate``), and the
report lists new and known kinds with a scenario file reproducing each (``report``).
"""

from kgc.harness.conformance.differential import BrokerSettings, Differential, Outcome, WireTarget
from kgc.harness.conformance.divergence import Divergence, DivergenceGroup, KnownDivergence, KnownFileError, load_known
from kgc.harness.conformance.generate import SearchResult, search
from kgc.harness.conformance.report import Report

__all__ = [
    "BrokerSettings",
    "Differential",
    "Divergence",
    "DivergenceGroup",
    "KnownDivergence",
    "KnownFileError",
    "Outcome",
    "Report",
    "SearchResult",
    "WireTarget",
    "load_known",
    "search",
]
