"""The classic consumer group protocol as a small-step transition system."""

from kgc.model._compiled import choose

choose()
