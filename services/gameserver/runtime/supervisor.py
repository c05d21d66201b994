"""Run one service, or the whole stack as separate OS processes (``renature serve all``).

Each service runs in its own process, as it would in production (one container each): the
rules service, the two projectors and the gateway share nothing but Redis. ``run_all`` starts
them as ``python -m gameserver.runtime.supervisor <service>`` children configured through the
environment (``REDIS_URL`` and the ``RENATURE_*`` variables of `settings`), forwards SIGINT and
SIGTERM to them and stops everything when one of them dies, so a half-running stack never
lingers.

Without ``REDIS_URL`` it starts a private ``redis-server`` with the append-only file on, its
data under ``./var/redis`` of the current directory, so games survive a restart of the stack,
and a password generated once into ``./var/redis.password`` (the services read it from there:
``RENATURE_REDIS_PASSWORD_FILE``), so nothing else on the machine can use it. Such a stack
signs its game records too: unless ``RENATURE_SIGNING_KEY_FILE`` names a key, an Ed25519 key is
generated once into ``./var/signing-key.pem`` (mode 0600) and handed to the rules service by
that variable (its path only: the key itself is never printed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from gameserver.runtime import collector, shares
from gameserver.runtime.logging import get_logger
from gameserver.runtime.redis_auth import without_credentials
from gameserver.runtime.settings import Settings, SettingsError

log = get_logger("renature.supervisor")

PROJECTORS = ("models", "board", "score")
"""The projector services: ``models`` the board and score projections folded together in one
consumer (`projectors.together`), ``board`` and ``score`` each alone."""
SERVICES = ("rules", *PROJECTORS, "clock", "retention", "gateway")
"""Every service one process can run."""
STACK = ("rules", "models", "clock", "retention", "gateway")
"""What ``serve all`` starts: each read model once, the board and score in one process."""
NO_REDIS_MESSAGE = (
    "REDIS_URL is not set and redis-server is not installed, so there is no Redis to run on. "
    "Either install Redis (e.g. `apt-get install redis-server` or `brew install redis`) and "
    "run again (a private server is then started with its data in ./var/redis), or point "
    "REDIS_URL (or --redis-url) at a Redis you run, e.g. `docker run -p 6379:6379 redis:7` "
    "and REDIS_URL=redis://127.0.0.1:6379/0."
)


class SupervisorError(RuntimeError):
    """The stack cannot be started (no Redis, a port taken, a service that died)."""


# -- one service -----------------------------------------------------------------------------


def run_service(
    name: str,
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    rebuild: bool = False,
    rebuild_only: bool = False,
) -> None:
    """Run one service in this process until it is told to stop (blocking)."""
    collector.tune()
    if name == "rules":
        from gameserver.rules import rules_service

        rules_service.run(settings)
    elif name in PROJECTORS:
        from gameserver.projectors import PROJECTIONS, projector_runner

        projection = PROJECTIONS[name]()
        if rebuild_only:
            projector_runner.rebuild_only(settings, projection)
        else:
            projector_runner.run(settings, projection, rebuild=rebuild)
    elif name == "clock":
        from gameserver.clock import clock_service

        clock_service.run(settings)
    elif name == "retention":
        from gameserver.retention import retention_service

        retention_service.run(settings)
    elif name == "gateway":
        run_gateway(settings, host=host, port=port)
    else:
        raise SupervisorError(f"unknown service {name!r}; services: {', '.join(SERVICES)}")


def run_gateway(settings: Settings, *, host: str, port: int) -> None:
    """Serve the HTTP gateway with uvicorn (logs stay JSON: uvicorn's own config is off):
    uvloop, httptools, ``RENATURE_GATEWAY_WORKERS`` processes (`gateway.server`)."""
    try:
        from gameserver.gateway.server import serve
    except ImportError as error:  # the gateway is built separately; say so clearly
        raise SupervisorError(f"the gateway is not available: {error}") from error
    serve(settings, host=host, port=port)


# -- a private Redis -------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_taken(host: str, port: int) -> bool:
    """Whether something listens on (or holds) ``host:port`` now. SO_REUSEADDR as the servers
    set it, so a port left in TIME_WAIT by a stopped stack counts as free."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def check_ports(host: str, port: int, redis_port: int | None) -> None:
    """Refuse busy ports before anything starts (and before any URL is printed)."""
    if port_taken(host, port):
        raise SupervisorError(
            f"Port {port} on {host} is in use by another program, so the gateway cannot listen "
            f"there. Stop that program or choose another port: `renature serve all --port "
            f"PORT` (`make run PORT=...`)."
        )
    if redis_port is not None and port_taken("127.0.0.1", redis_port):
        raise SupervisorError(
            f"Port {redis_port} is in use, so the private redis-server cannot listen there (and "
            f"this stack never runs against a Redis it did not start). Choose another with "
            f"--redis-port (`make run REDIS_PORT=...`), leave it out for a free port, or set "
            f"REDIS_URL to use a Redis you run."
        )


@dataclass
class PrivateRedis:
    """A ``redis-server`` with AOF on, owned by the supervisor and stopped with it. It wants a
    password (``requirepass``, handed over on its standard input, never its command line),
    generated once and kept in ``password_file`` (readable by its owner only)."""

    data_dir: Path
    port: int
    executable: str
    durability: str = "always"
    """The services' durability mode: Redis fsyncs every write unless it is ``everysec``."""
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its address, without the password (`password_file` holds that)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def password_file(self) -> Path:
        return self.data_dir.parent / "redis.password"

    def password(self) -> str:
        """The password of the server, made (64 hex digits, mode 0600) the first time."""
        path = self.password_file
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                f.write(secrets.token_hex(32) + "\n")
        return path.read_text(encoding="utf-8").strip()

    @property
    def signing_key_file(self) -> Path:
        return self.data_dir.parent / "signing-key.pem"

    def signing_key_id(self) -> str:
        """The id of the stack's signing key, made (mode 0600) the first time."""
        from gameserver.runtime import signing

        try:
            return signing.key_id(signing.key_file(self.signing_key_file).public_key())
        except (OSError, ValueError) as error:
            raise SupervisorError(
                f"{self.signing_key_file} holds no usable signing key ({error}); move it away "
                "to have a new one made, or name a key with RENATURE_SIGNING_KEY_FILE"
            ) from None

    def client_env(self) -> dict[str, str]:
        """What a client of this server needs in its environment (`redis_auth`)."""
        return {"REDIS_URL": self.url, "RENATURE_REDIS_PASSWORD_FILE": str(self.password_file)}

    def start(self, timeout: float = 10.0) -> None:
        import redis

        self.data_dir.mkdir(parents=True, exist_ok=True)
        password = self.password()
        command = [self.executable, "-", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--dir", str(self.data_dir), "--logfile", "redis.log", "--save", ""]
        # The fsync policy the durability mode needs: always, unless everysec is chosen.
        fsync = "everysec" if self.durability == "everysec" else "always"
        command += ["--appendonly", "yes", "--appendfsync", fsync]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,  # its configuration: the password stays off the command line
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Its own session: a Ctrl+C in the terminal reaches the services, not Redis, which
            # is stopped last, once nothing uses it any more.
            start_new_session=True,
        )
        assert self.process.stdin is not None
        self.process.stdin.write(f"requirepass {password}\n".encode())
        self.process.stdin.close()
        client = redis.Redis(host="127.0.0.1", port=self.port, password=password, socket_timeout=1)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise SupervisorError(
                        f"redis-server exited at once (port {self.port} taken?); "
                        f"see {self.data_dir / 'redis.log'}"
                    )
                try:
                    pid = int(client.info("server")["process_id"])
                except redis.RedisError:
                    time.sleep(0.05)
                    continue
                if pid != self.process.pid:  # another Redis answers on this port: not ours
                    self.stop()
                    raise SupervisorError(
                        f"port {self.port} is served by another Redis (pid {pid}); this stack "
                        "only runs against a Redis it started, or the one REDIS_URL names"
                    )
                return
        finally:
            client.close()
        self.stop()
        raise SupervisorError(f"redis-server did not answer within {timeout:g} s")

    def stop(self) -> None:
        """SIGTERM: Redis flushes the append-only file and exits cleanly."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def private_redis(
    port: int | None, durability: str = "always", data_dir: Path | None = None
) -> PrivateRedis:
    """A private server to start, or `SupervisorError` saying how to get Redis."""
    executable = shutil.which("redis-server")
    if executable is None:
        raise SupervisorError(NO_REDIS_MESSAGE)
    return PrivateRedis(
        data_dir=data_dir or Path.cwd() / "var" / "redis",
        port=port or free_port(),
        executable=executable,
        durability=durability,
    )


# -- the whole stack -------------------------------------------------------------------------


@dataclass
class Stack:
    """The child processes of ``serve all`` and the private Redis, if any."""

    redis_url: str
    host: str
    port: int
    redis: PrivateRedis | None = None
    environment: dict[str, str] = field(default_factory=dict)
    """Variables the children get besides this process's environment (command-line flags, and
    what `shares.shared_environment` adds for several instances)."""
    children: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    signing_key_given: bool = False
    """The settings name a signing key (`Signing.signing_key_file`): the stack makes none."""
    instances: int = 1
    """Instances of the rules service and the projectors, and gateway workers (`shares`)."""
    signing_key_id: str | None = None
    """The id of the key generated for the private stack (None: a key was given, or no
    private Redis runs)."""

    @property
    def gateway_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        if self.redis is not None:
            self.redis.start()
        env = {**os.environ, **self.environment, "REDIS_URL": self.redis_url}
        env.pop("RENATURE_CONSUMER", None)  # every process needs its own consumer name
        if self.redis is not None:  # the private server's password, from its file
            for name in ("RENATURE_REDIS_USER", "RENATURE_REDIS_PASSWORD"):
                env.pop(name, None)
            env.update(self.redis.client_env())
            if not self.signing_key_given:  # the stack's own key, made once
                self.signing_key_id = self.redis.signing_key_id()
                env["RENATURE_SIGNING_KEY_FILE"] = str(self.redis.signing_key_file)
        for name in STACK:
            command = [sys.executable, "-m", "gameserver.runtime.supervisor", name]
            if name == "gateway":
                command += ["--host", self.host, "--port", str(self.port)]
            each = shares.instance_environments(name, self.instances)
            for k, share in enumerate(each):
                child = f"{name}-{k}" if len(each) > 1 else name
                # Each child leads a process group of its own (signals are forwarded to it), so
                # that one killed at the end takes its own children along (the gateway's workers).
                self.children[child] = subprocess.Popen(
                    command, env={**env, **share}, process_group=0
                )
                log.info("service_started", service=child, pid=self.children[child].pid)

    def signal_children(self, signum: int) -> None:
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signum)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM every child, wait, SIGKILL stragglers, then stop the private Redis."""
        self.signal_children(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for name, child in self.children.items():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("service_killed", service=name, pid=child.pid)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if self.redis is not None:
            self.redis.stop()
        log.info("stack_stopped")

    def dead(self) -> dict[str, int]:
        """Children that exited, with their exit codes."""
        return {
            name: code
            for name, child in self.children.items()
            if (code := child.poll()) is not None
        }


READY_TIMEOUT_S = 180.0
"""How long ``serve all`` waits for the gateway to accept connections while every service
runs: a gateway of several workers on a few busy cores takes a minute or more to start."""


def wait_for_port(host: str, port: int, stack: Stack, timeout: float = READY_TIMEOUT_S) -> bool:
    """Wait until the gateway accepts connections; False when a service died or time ran
    out first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stack.dead():
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def cli_environment(redis_url: str, server: PrivateRedis | None) -> list[str]:
    """The lines that give the CLI this stack's Redis: never a password (the private one's
    stays in its file; a password in a given ``REDIS_URL`` is masked)."""
    if server is None:
        return [f"export REDIS_URL={without_credentials(redis_url)}"]
    env = server.client_env()
    return [f"export {name}={value}" for name, value in env.items()]


def durability_line(mode: str) -> str:
    """What an acknowledged move survives under ``mode`` (docs/event-store.md)."""
    if mode == "everysec":
        return (
            "Durability: everysec (fast; an OS crash or power cut may lose the last ~1 s of "
            "acknowledged moves). Production runs RENATURE_DURABILITY=always."
        )
    return f"Durability: {mode} (no acknowledged move is lost, power cuts included)."


def announce_stack(
    stack: Stack,
    settings: Settings,
    server: PrivateRedis | None,
    announce: Callable[[str], None],
) -> None:
    """Where the running stack is: Redis, its durability, the pages, whether seeds may be
    chosen, and how the CLI reaches it."""
    if server is not None:
        announce(f"Redis (private, AOF on): {server.url}  data: {server.data_dir}")
    announce(durability_line(settings.store.durability))
    if (n := stack.instances) > 1:
        announce(f"Instances: {n} rules, {n} models (each on its share), {n} gateway workers.")
    announce(f"Play: {stack.gateway_url}/  (lobby, table and dispute viewer in a browser)")
    announce(f"Gateway: {stack.gateway_url}")
    announce(f"API docs: {stack.gateway_url}/docs")
    if settings.gateway.allow_chosen_seeds:
        announce(
            "Chosen seeds: ON (RENATURE_ALLOW_CHOSEN_SEEDS=1): POST /games takes a seed, and "
            "whoever chooses it knows every hand (games say chosen_seed). Development only."
        )
    else:
        announce("Chosen seeds: off (every game is dealt from a secret random seed).")
    if stack.signing_key_id is not None and server is not None:
        announce(
            f"Signed records: key {stack.signing_key_id} (private key in "
            f"{server.signing_key_file}; public keys at /.well-known/renature-keys.json)."
        )
    announce("For the CLI (renature audit, explain, replay) in another shell:")
    for line in cli_environment(stack.redis_url, server):
        announce(line)


def run_all(
    redis_url: str | None,
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    redis_port: int | None = None,
    environment: dict[str, str] | None = None,
    instances: int = 1,
    announce: Callable[[str], None] = print,
) -> int:
    """Start Redis (unless ``redis_url`` names one) and every service; block until a signal or
    a crash. ``settings`` are this process's (the children read theirs from the environment,
    with ``environment`` added: `Settings.variables`).

    Returns the exit status: 0 after SIGINT/SIGTERM, 1 when a service died on its own.
    """
    check_ports(host, port, redis_port if redis_url is None else None)
    given = dict(environment or {})  # a share set by hand refused here, before anything starts
    env = {**given, **shares.shared_environment(instances, {**os.environ, **given})}
    server = private_redis(redis_port, settings.store.durability) if redis_url is None else None
    url = server.url if server is not None else str(redis_url)
    signed = bool(settings.signing.signing_key_file)
    stack = Stack(url, host, port, server, env, signing_key_given=signed, instances=instances)
    stopping: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        stack.start()
        if not wait_for_port(host, port, stack):
            announce(f"The stack did not come up ({stack.dead() or 'no gateway'}); stopping.")
            return 1
        announce_stack(stack, settings, server, announce)
        announce("Press Ctrl+C to stop.")
        while not stopping:
            if dead := stack.dead():
                log.error("service_died", exit_codes=dead)
                announce(f"A service stopped unexpectedly ({dead}); stopping the stack.")
                return 1
            time.sleep(0.2)
        return 0
    finally:
        stack.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# -- ``python -m gameserver.runtime.supervisor <service>`` (the children of ``serve all``) ----


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gameserver.runtime.supervisor")
    parser.add_argument("service", choices=SERVICES)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as error:  # a bad variable: say which, without a traceback
        parser.exit(2, f"{args.service}: {error}\n")
    run_service(args.service, settings, host=args.host, port=args.port, rebuild=args.rebuild)


if __name__ == "__main__":
    main()
