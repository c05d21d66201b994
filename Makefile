# Entry points of the project. Only Python 3.11 and make are assumed: uv is installed through
# pip when it is missing, and uv installs everything else into .venv.
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo "$(PYTHON) -m uv")
RUN := $(UV) run --frozen
STAMP := .venv/.synced

.PHONY: install bytecode run browser proxy test test-unit test-integration test-e2e lint fmt settings-docs bench bench-scale chaos clean

$(STAMP): pyproject.toml uv.lock
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet uv
	$(UV) sync --frozen --compile-bytecode
	@touch $(STAMP)

install: $(STAMP)

## Bytecode of the project's own modules, written ahead (only what changed is compiled again).
## A machine that sets PYTHONDONTWRITEBYTECODE (CI's does) otherwise compiles every module it
## imports in every process it starts: 3.3 s of CPU to import the services there, 1.1 s with
## bytecode, and the suite starts hundreds of service processes. The installed packages get
## theirs from `uv sync --compile-bytecode` above.
bytecode: $(STAMP)
	@$(RUN) python -m compileall -q -j 0 shared services bench tests

## Start the whole stack (Redis, rules service, projectors, clock, gateway). A development
## stack: chosen seeds are allowed so that `renature bots play` deals like `renature simulate`.
## `make run PORT=8080 REDIS_PORT=6390` (default: gateway on 8000, Redis on a free port).
PORT ?= 8000
REDIS_PORT ?=
## Redis fsyncs once a second here (durability everysec, faster; the stack says so at start).
run: bytecode
	RENATURE_ALLOW_CHOSEN_SEEDS=$${RENATURE_ALLOW_CHOSEN_SEEDS:-1} \
	RENATURE_DURABILITY=$${RENATURE_DURABILITY:-everysec} $(RUN) renature serve all \
		--port $(PORT) $(if $(REDIS_PORT),--redis-port $(REDIS_PORT))

## Debian's chromium and Node.js for the browser tests (tests/browser), installed when missing and
## apt-get can (as root); never a browser download. Without it the browser tests skip loudly (fail in CI).
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium is not installed: the browser tests will not run (apt-get install chromium)"; }
	@command -v node >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null) \
		|| echo "node is not installed: the JavaScript client's Node tests will not run (apt-get install nodejs)"; }

## Debian's nginx for the front-door test (tests/integration/test_front_door_nginx.py runs the
## shipped infra/nginx/nginx.conf), installed when missing and apt-get can (as root); never a
## download from elsewhere. Without it that test skips loudly (fails in CI).
proxy:
	@{ command -v nginx || test -x /usr/sbin/nginx; } >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] \
		&& command -v apt-get >/dev/null \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null) \
		|| echo "nginx is not installed: the front-door test will not run (apt-get install nginx)"; }

## The whole suite: unit, integration (real Redis), end-to-end and browser tests, then the linters.
## The files run side by side in TEST_WORKERS processes (pytest-xdist; each worker starts its own
## Redis servers on free ports): most tests wait on servers, sockets and the browser, not the CPU.
TEST_WORKERS ?= 4
test: bytecode browser proxy
	$(RUN) pytest -q -n $(TEST_WORKERS) --dist loadfile
	$(MAKE) --no-print-directory lint

test-unit: bytecode
	$(RUN) pytest -q tests/unit

test-integration: bytecode
	$(RUN) pytest -q tests/integration

test-e2e: bytecode
	$(RUN) pytest -q tests/e2e

lint: $(STAMP)
	$(RUN) ruff check .
	$(RUN) ruff format --check shared services tests bench
	$(RUN) mypy shared services/gameserver bench tests

fmt: $(STAMP)
	$(RUN) ruff format shared services tests bench
	$(RUN) ruff check --fix .

## The table of every setting (docs/services.md) and infra/renature.env.example, written from
## the settings' declarations (gameserver.runtime.settings_parts); tests/unit/test_settings.py
## fails while either is stale.
settings-docs: $(STAMP)
	$(RUN) python -m gameserver.runtime.settings_table

## The long chaos run: games played through faults (SIGKILL/SIGSTOP of every service,
## Redis killed, a power cut), then a checker; prints games, acknowledged, lost, forked, model
## mismatches, audit failures, recovery times, the 5xx answers by code with the latest one after
## each Redis restart (none may come later than 1 s after Redis is back) and the keys sent again
## with another body (each refused 422), under the durable mode and under everysec.
## A short run is part of `make test` (tests/chaos/test_chaos.py).
CHAOS_GAMES ?= 6
CHAOS_ROUNDS ?= 3
chaos: bytecode
	$(RUN) python tests/chaos/chaos_harness.py --durability always --games $(CHAOS_GAMES) --rounds $(CHAOS_ROUNDS)
	$(RUN) python tests/chaos/chaos_harness.py --durability everysec --games $(CHAOS_GAMES) --rounds $(CHAOS_ROUNDS)

## Benchmarks: prints figures, asserts nothing
bench: bytecode
	$(RUN) python -m bench

## The scale-out figures, for a machine of 16 cores or more: SCALE_INSTANCES instances of each
## service (each on its share of the partitions) against one, on one Redis and on a Redis
## Cluster, with the targets met or missed (docs/services.md, "Eight instances on 16 cores").
SCALE_INSTANCES ?= 8
SCALE_LOAD ?= 16
SCALE_GAMES ?= 1024
SCALE := all=$(SCALE_INSTANCES),load=$(SCALE_LOAD)
bench-scale: bytecode
	$(RUN) python -m bench --topology $(SCALE) --games $(SCALE_GAMES) --modes http,ws
	$(RUN) python -m bench --topology $(SCALE),redis=cluster --games $(SCALE_GAMES) --modes http,ws

clean:
	rm -rf .venv .pytest_cache .mypy_cache .ruff_cache
