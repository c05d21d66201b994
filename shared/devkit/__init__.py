"""Development tooling shared by the tests, the benchmarks and the chaos harness: private
Redis servers and clusters on free ports, waits with a deadline, and the requirements a test
states (a missing redis-server or chromium skips on a developer's machine, fails in CI)."""
