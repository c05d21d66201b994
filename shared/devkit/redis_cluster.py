"""Start a private Redis Cluster for tests and the benchmark: three masters with a replica each,
``redis-server`` processes on free ports, made into a cluster with ``redis-cli --cluster
create``.

Each node gets its own data directory, client port and cluster bus port (``cluster-port``, so
the bus port is free too rather than assumed at port + 10000). `kill` crashes a node
(SIGKILL) and `wait_failover` waits until its replica has taken its slots over, for the
failover tests. ``url`` names the cluster as the services take it (``redis+cluster://``).
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
import redis

from devkit.redis_server import find_redis_server, free_port


@dataclass
class Node:
    port: int
    bus_port: int
    data_dir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


# long: a test cluster's whole life: launch, readiness, faults (kill, restart, failover), teardown
class RedisCluster:
    """``masters`` masters with ``replicas`` replicas each, on 127.0.0.1."""

    def __init__(
        self,
        *,
        masters: int = 3,
        replicas: int = 1,
        appendonly: bool = False,
        node_timeout_ms: int = 1000,
        startup_timeout: float = 30.0,
    ) -> None:
        found = find_redis_server()
        cli = shutil.which("redis-cli")
        if found is None or cli is None:
            raise FileNotFoundError("redis-server and redis-cli are needed for a Redis Cluster")
        self.executable, self.cli = found, cli
        self.masters, self.replicas = masters, replicas
        self.appendonly = appendonly
        self.node_timeout_ms = node_timeout_ms
        self.startup_timeout = startup_timeout
        self.root = Path(tempfile.mkdtemp(prefix="renature-cluster-"))
        self.nodes: list[Node] = []

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> RedisCluster:
        try:
            for number in range(self.masters * (1 + self.replicas)):
                node = Node(self._fresh_port(), self._fresh_port(), self.root / f"node-{number}")
                node.data_dir.mkdir()
                self.nodes.append(node)
                self._launch(node)
            for node in self.nodes:
                self._wait_started(node)
            create = [self.cli, "--cluster", "create", *(n.address for n in self.nodes)]
            create += ["--cluster-replicas", str(self.replicas), "--cluster-yes"]
            done = subprocess.run(create, capture_output=True, timeout=60, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed: {done.stdout[-500:]!r}")
            self.wait_ready()
        except BaseException:
            self.cleanup()
            raise
        return self

    def _launch(self, node: Node, *, die_with_parent: bool = True) -> None:
        command = [
            self.executable,
            "--port", str(node.port),
            "--cluster-port", str(node.bus_port),
            "--bind", "127.0.0.1",
            "--dir", str(node.data_dir),
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--logfile", "redis.log",
        ]  # fmt: skip
        node.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=node.data_dir,
            start_new_session=True,
            # Not for a restart from a helper thread: the signal follows the starting thread.
            preexec_fn=_die_with_parent if die_with_parent else None,
        )

    def _fresh_port(self) -> int:
        """A free port none of this cluster's nodes was given: a node binds its ports only once
        it runs, so a port given to one a moment ago is still free for `free_port`."""
        given = {port for node in self.nodes for port in (node.port, node.bus_port)}
        while (port := free_port()) in given:
            continue
        return port

    def _wait_started(self, node: Node, attempts: int = 3) -> None:
        """Until ``node`` answers PING; started again on other ports where one of its ports
        was taken before it could bind it (another test's server picked it in between)."""
        for attempt in range(attempts):
            try:
                self._wait_ping(node)
                return
            except RuntimeError:
                if attempt + 1 == attempts or "Address already in use" not in self._log(node):
                    raise
            node.port, node.bus_port = self._fresh_port(), self._fresh_port()
            self._launch(node)

    def _wait_ping(self, node: Node) -> None:
        deadline = time.monotonic() + self.startup_timeout
        client = node.client()
        try:
            while time.monotonic() < deadline:
                if not node.running:
                    raise RuntimeError(f"redis-server on {node.port} exited: {self._log(node)}")
                try:
                    if client.ping():
                        return
                except redis.RedisError:
                    time.sleep(0.05)
        finally:
            client.close()
        raise RuntimeError(f"redis-server on {node.port} did not answer")

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until every running node says ``cluster_state:ok`` and sees every slot served, and
        every replica is in sync with its master (``WAIT`` counts only replicas online)."""
        deadline = time.monotonic() + (timeout or self.startup_timeout)
        while time.monotonic() < deadline:
            running = [node for node in self.nodes if node.running]
            if all(self._node_ok(node) for node in running) and all(
                self._replica_synced(node) for node in running
            ):
                return
            time.sleep(0.1)
        raise RuntimeError("the cluster did not become ready")

    def _replica_synced(self, node: Node) -> bool:
        """A master, or a replica whose link to its master is up."""
        client = node.client()
        try:
            info = client.info("replication")
            return info.get("role") == "master" or info.get("master_link_status") == "up"
        except redis.RedisError:
            return False
        finally:
            client.close()

    def flush(self) -> None:
        """Empty every master (the replicas follow)."""
        for node in self.nodes:
            if not node.running:
                continue
            client = node.client()
            try:
                if client.info("replication").get("role") == "master":
                    client.flushall()
            finally:
                client.close()

    def _node_ok(self, node: Node) -> bool:
        client = node.client()
        try:
            info = client.execute_command("CLUSTER", "INFO")  # type: ignore[no-untyped-call]
            text = info.decode() if isinstance(info, bytes) else str(info)
            return "cluster_state:ok" in text and "cluster_slots_ok:16384" in text
        except redis.RedisError:
            return False
        finally:
            client.close()

    def cleanup(self) -> None:
        for node in self.nodes:
            self._stop(node, kill=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    # -- what tests use ----------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The cluster as ``REDIS_URL`` names it (any node; the client finds the others)."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}/0"

    def urls(self) -> str:
        return ",".join(n.address for n in self.nodes)

    def pids(self) -> list[int]:
        return [n.process.pid for n in self.nodes if n.process is not None and n.running]

    def master_of(self, key: str) -> Node:
        """The node that serves ``key``'s hash slot now."""
        for node in self.nodes:
            if not node.running:
                continue
            client = node.client()
            try:
                slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))  # type: ignore[no-untyped-call]
                slots = client.execute_command("CLUSTER", "SLOTS")  # type: ignore[no-untyped-call]
                for start, end, master, *_ in slots:
                    if start <= slot <= end:
                        port = int(master[1])
                        return next(n for n in self.nodes if n.port == port)
            except redis.RedisError:
                continue
            finally:
                client.close()
        raise RuntimeError(f"no node serves {key!r}")

    def kill(self, node: Node) -> None:
        """Crash a node (SIGKILL): no shutdown, nothing flushed."""
        self._stop(node, kill=True)

    def restart(self, node: Node) -> None:
        """Start a stopped node again on its port and data: a master that was failed over
        rejoins as a replica of the node that took its slots."""
        self._launch(node, die_with_parent=False)
        self._wait_ping(node)

    def wait_failover(self, dead: Node, timeout: float = 30.0) -> None:
        """Until a replica of the dead master serves its slots and the cluster is ok again."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = [n for n in self.nodes if n.running]
            if alive and all(self._node_ok(n) for n in alive):
                client = alive[0].client()
                try:
                    slots = client.execute_command("CLUSTER", "SLOTS")  # type: ignore[no-untyped-call]
                finally:
                    client.close()
                if all(int(entry[2][1]) != dead.port for entry in slots):
                    return
            time.sleep(0.1)
        raise RuntimeError("no replica took over within the timeout")

    def _stop(self, node: Node, *, kill: bool) -> None:
        process, node.process = node.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    @staticmethod
    def _log(node: Node) -> str:
        log = node.data_dir / "redis.log"
        return log.read_text(errors="replace")[-500:] if log.exists() else "(no log)"


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM when the process that started it dies, so a
    test run killed before its teardown (a timeout, SIGKILL) leaves no cluster behind."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is not None:
        ctypes.CDLL(name, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# -- pytest fixtures: import ``redis_cluster_fixture`` and ``cluster_redis_fixture`` into a test
# module to use ``redis_cluster`` and ``cluster_redis`` there ------------------------------------


@pytest.fixture(scope="session", name="redis_cluster")
def redis_cluster_fixture() -> Iterator[RedisCluster]:
    """One private cluster for the whole session (starting one takes a few seconds)."""
    with RedisCluster() as cluster:
        yield cluster


@pytest.fixture(name="cluster_redis")
async def cluster_redis_fixture(redis_cluster: RedisCluster) -> AsyncIterator[Any]:
    """A `RedisCluster` client on the emptied cluster (every master flushed first)."""
    from eventstore.redis_client import redis_client

    redis_cluster.wait_ready()
    redis_cluster.flush()
    client = redis_client(redis_cluster.url)
    # Open some connections to every master up front: redis-py's async cluster client can hand
    # a connection that is still connecting to a second task when many open at once (an
    # AttributeError on its writer), which the store's concurrency tests would meet.
    await client.initialize()
    await asyncio.gather(*(client.ping(target_nodes=client.ALL_NODES) for _ in range(16)))
    try:
        yield client
    finally:
        await client.aclose()
