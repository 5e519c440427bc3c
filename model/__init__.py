"""The classic consumer group protocol as a small-step transition system."""

from model._compiled import choose

choose()
