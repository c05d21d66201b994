"""``make bench``: print the benchmark figures of every layer."""

from bench import core

core.run()
