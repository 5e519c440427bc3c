"""The classic consumer group protocol as a small-step transition system."""
