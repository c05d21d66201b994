"""Benchmarks: ``make bench`` prints figures; nothing here asserts or times a test."""
