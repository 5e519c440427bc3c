"""Fixtures for the diagram tests: a headless Chromium that the tests start and always stop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.diagrams.chromium import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    try:
        yield b
    finally:
        b.close()
