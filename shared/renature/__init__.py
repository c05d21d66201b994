"""Renature rules core: pure, deterministic, no I/O."""
