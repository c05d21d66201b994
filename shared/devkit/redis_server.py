"""Start a private ``redis-server`` for tests.

Tests never touch a Redis they did not start (or were explicitly pointed at with REDIS_URL):
a shared server would leak state between test runs and, worse, a test's FLUSHALL could wipe a
developer's data. End-to-end tests reuse `RedisServer` to run the stack against a server they
can stop, kill and restart (with ``appendonly=True`` to check durability across a restart).
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import redis

LOWEST_PORT = 10_000
"""Ports below this are left to the machine's own services."""
_ports = random.Random()


def free_port() -> int:
    """A TCP port that was free a moment ago, outside the range the kernel hands to outgoing
    connections: a port from that range (what binding port 0 gives) may be taken by any
    client's connect before the caller binds it (a chaos run's gateway once found its port
    taken by then, and never served). Falls back to the kernel's pick where no port outside
    that range is free."""
    low, high = _outgoing_ports()
    ranges = [(a, b) for a, b in ((LOWEST_PORT, low - 1), (high + 1, 65535)) if b > a]
    for _ in range(200 if ranges else 0):
        start, end = _ports.choice(ranges)
        port = _ports.randint(start, end)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _outgoing_ports() -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (Linux; its default elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def find_redis_server() -> str | None:
    """The ``redis-server`` executable on PATH, if any."""
    return shutil.which("redis-server")


class RedisServer:
    """A ``redis-server`` process on 127.0.0.1 and a free port, with its own data directory.

    The port is chosen on the first `start` and kept across `stop`/`start`, so clients can
    reconnect to a restarted server; the data directory is kept too (an AOF written with
    ``appendonly=True`` survives the restart) and removed when the context manager exits.
    """

    def __init__(
        self,
        *,
        appendonly: bool = False,
        appendfsync: str = "always",
        executable: str | None = None,
        data_dir: str | Path | None = None,
        port: int | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        found = executable or find_redis_server()
        if found is None:
            raise FileNotFoundError("redis-server is not on PATH")
        self.executable = found
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.port = port
        self.startup_timeout = startup_timeout
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="renature-redis-"))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The URL of the server (database 0)."""
        if self.port is None:
            raise RuntimeError("the server has not been started")
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        """The running server's process id (its CPU, a signal)."""
        if self._process is None:
            raise RuntimeError("the server is not running")
        return self._process.pid

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> RedisServer:
        """Start the server and wait until it answers PING; retries once on a port race."""
        if self.running:
            return self
        attempts = 1 if self.port is not None else 3
        for attempt in range(attempts):
            if self.port is None or attempt > 0:
                self.port = free_port()
            if self._launch():
                return self
        raise RuntimeError(f"redis-server did not start; log:\n{self._log_tail()}")

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server: SIGTERM (a clean shutdown) or SIGKILL (a crash) with ``kill``."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def cleanup(self) -> None:
        """Stop the server and remove the data directory if this object created it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    # -- internals ---------------------------------------------------------------------------

    def _command(self) -> list[str]:
        command = [
            self.executable,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--daemonize", "no",
            "--logfile", "redis.log",
        ]  # fmt: skip
        if self.appendonly:
            command += ["--appendfsync", self.appendfsync]
        return command

    def _launch(self) -> bool:
        """Start the process; True once it answers PING, False if it exited (port taken)."""
        assert self.port is not None
        self._process = subprocess.Popen(
            self._command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.data_dir,
        )
        deadline = time.monotonic() + self.startup_timeout
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        try:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    self._process = None
                    return False
                try:
                    if client.ping():
                        return self._is_ours(client)
                except redis.RedisError:
                    time.sleep(0.05)
        finally:
            client.close()
        self.stop(kill=True)
        return False

    def _is_ours(self, client: redis.Redis) -> bool:
        """Whether the server answering on our port is our process, not a port-race winner."""
        info = client.info("server")
        if self._process is not None and int(info.get("process_id", -1)) == self._process.pid:
            return True
        self.stop(kill=True)
        return False

    def _log_tail(self, lines: int = 20) -> str:
        log = self.data_dir / "redis.log"
        if not log.exists():
            return "(no log)"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
