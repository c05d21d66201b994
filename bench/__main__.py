"""``make bench``: print the benchmark figures of every layer."""

from bench import core, service

core.run()
service.run()
