"""Playwright for Python driving the machine's Chromium (``/usr/bin/chromium``, or ``KGC_CHROMIUM``:
the browser tests/docs/test_site.py uses too; nothing is downloaded), and screenshot comparison with a
stored baseline (``tests/diagrams/baselines/``) within a tolerance.

A baseline is written only on request (``KGC_UPDATE_BASELINES=1``); a missing one fails the test
with the command that writes it. Two screenshots match when they have the same size and at most
:data:`TOLERANCE` of their pixels differ by more than :data:`CHANNEL` in some colour channel
(antialiasing and a figure's last digit move a few pixels; a layout change moves thousands)."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops

CHROMIUM = os.environ.get("KGC_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--hide-scrollbars"]
BASELINES = Path(__file__).parent / "baselines"
TOLERANCE = 0.0005
CHANNEL = 48
WIDTH = 1280


@dataclass
class Difference:
    size_a: tuple[int, int]
    size_b: tuple[int, int]
    share: float
    """The share of pixels that differ by more than :data:`CHANNEL` (1.0 when the sizes differ)."""

    @property
    def matches(self) -> bool:
        return self.size_a == self.size_b and self.share <= TOLERANCE

    def __str__(self) -> str:
        if self.size_a != self.size_b:
            return f"sizes differ: {self.size_a} vs {self.size_b}"
        return f"{self.share:.3%} of the pixels differ (tolerance {TOLERANCE:.2%})"


def difference(a: bytes, b: bytes) -> Difference:
    """How two PNG screenshots differ."""
    ia = Image.open(io.BytesIO(a)).convert("RGB")
    ib = Image.open(io.BytesIO(b)).convert("RGB")
    if ia.size != ib.size:
        return Difference(ia.size, ib.size, 1.0)
    r, g, b = ImageChops.difference(ia, ib).split()
    largest = ImageChops.lighter(ImageChops.lighter(r, g), b)  # each pixel's largest channel difference
    changed = largest.point(lambda v: 255 if v > CHANNEL else 0).histogram()[255]
    return Difference(ia.size, ib.size, changed / (ia.size[0] * ia.size[1]))


def compare_with_baseline(name: str, png: bytes, keep: Path) -> None:
    """Fail unless ``png`` matches the stored baseline ``name`` (the screenshot is kept in
    ``keep`` for a look either way)."""
    (keep / name).write_bytes(png)
    baseline = BASELINES / name
    if os.environ.get("KGC_UPDATE_BASELINES") == "1":
        BASELINES.mkdir(exist_ok=True)
        baseline.write_bytes(png)
    if not baseline.exists():
        raise AssertionError(f"no baseline {baseline}: write it with KGC_UPDATE_BASELINES=1 and look at it")
    d = difference(baseline.read_bytes(), png)
    assert d.matches, f"{name}: {d} (this run's screenshot: {keep / name})"
