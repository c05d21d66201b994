"""The whole stack as separate OS processes: a private Redis, two rules services, the board and
score projectors and the gateway, each started the way production starts it.

Services are started with ``python -m renature_services.supervisor <service>`` (what
``renature serve <service>`` runs), or, where that module is not available, with the service
modules' own entry points. Each process logs to its own file; a test that fails prints the
tails. The stack is shared by the tests of a module (starting it costs a few seconds).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from redis_server import RedisServer, find_redis_server, free_port
from renature_services import bus

STARTUP_TIMEOUT = 30.0


def service_command(name: str, port: int) -> list[str]:
    """How to start one service as its own process."""
    if importlib.util.find_spec("renature_services.supervisor") is not None:
        command = [sys.executable, "-m", "renature_services.supervisor", name]
        return command + (["--port", str(port)] if name == "gateway" else [])
    if name == "gateway":
        return [sys.executable, "-m", "renature_services.gateway", "--port", str(port)]
    if name == "rules":
        code = (
            "from renature_services.rules_service import run;"
            "from renature_services.settings import Settings;"
            "run(Settings.from_env())"
        )
    else:
        code = (
            "from renature_services.projectors import PROJECTIONS, runner;"
            "from renature_services.settings import Settings;"
            f"runner.run(Settings.from_env(), PROJECTIONS[{name!r}]())"
        )
    return [sys.executable, "-c", code]


@dataclass
class Service:
    """One service process: started, killed and restarted by the tests."""

    name: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> Service:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        return self

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: a crash, nothing is cleaned up or acknowledged."""
        if self.process is not None and self.alive:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not go."""
        if self.process is None or not self.alive:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return f"--- {self.name} ---\n" + "\n".join(text)


@dataclass
class E2EStack:
    redis: RedisServer
    gateway_url: str
    services: dict[str, Service] = field(default_factory=dict)

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis.url)

    def logs(self) -> str:
        return "\n".join(service.tail() for service in self.services.values())

    def wait_projector_ready(self, name: str, timeout: float = STARTUP_TIMEOUT) -> None:
        """Ready once its consumer group exists on the last partition feed (set-up done)."""
        group = {"board": bus.BOARD_GROUP, "score": bus.SCORE_GROUP}[name]
        deadline = time.monotonic() + timeout
        with self.client() as client:
            while time.monotonic() < deadline:
                if not self.services[name].alive:
                    raise RuntimeError(f"{name} died\n{self.logs()}")
                try:
                    groups = client.xinfo_groups("rn:{p15}:feed")
                    if any(_text(g["name"]) == group for g in groups):
                        return
                except redis.ResponseError:
                    pass
                time.sleep(0.1)
        raise RuntimeError(f"{name} did not get ready\n{self.logs()}")

    def wait_gateway_and_rules(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Ready once the gateway answers and a game can be created (rules service up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                response = httpx.post(f"{self.gateway_url}/games", json={"players": 2}, timeout=5)
                if response.status_code == 201:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the gateway or the rules service did not get ready\n{self.logs()}")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@pytest.fixture(scope="module")
def e2e_stack() -> Iterator[E2EStack]:
    if not find_redis_server():
        if os.environ.get("RENATURE_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server is not installed", pytrace=False)
        pytest.skip("the end-to-end tests need redis-server on PATH")
    logs = Path(tempfile.mkdtemp(prefix="renature-e2e-"))
    with RedisServer() as server:
        port = free_port()
        env = {
            **os.environ,
            "REDIS_URL": server.url,
            "RENATURE_LOG_LEVEL": "INFO",
            "RENATURE_RECLAIM_IDLE_MS": "1000",
        }
        env.pop("RENATURE_CONSUMER", None)
        stack = E2EStack(redis=server, gateway_url=f"http://127.0.0.1:{port}")
        names = {"rules-a": "rules", "rules-b": "rules", "board": "board", "score": "score"}
        names["gateway"] = "gateway"
        for key, name in names.items():
            stack.services[key] = Service(
                key, service_command(name, port), env, logs / f"{key}.log"
            ).start()
        try:
            stack.wait_gateway_and_rules()
            stack.wait_projector_ready("board")
            stack.wait_projector_ready("score")
            yield stack
        finally:
            for service in stack.services.values():
                service.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the services' log tails to a failing e2e test."""
    outcome = yield
    report = outcome.get_result()
    stack = getattr(item, "funcargs", {}).get("e2e_stack")
    if report.failed and isinstance(stack, E2EStack):
        report.sections.append(("service logs", stack.logs()))
