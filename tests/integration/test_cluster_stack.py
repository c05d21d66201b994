"""The whole stack on a real Redis Cluster (three masters, a replica each, `devkit.redis_cluster`):
``renature serve all`` with ``REDIS_URL=redis+cluster://...`` starts every service (rules,
projectors, clock, retention, a gateway of two worker processes) on the cluster; a whole bot
game of every hosted game is played through the gateway's HTTP API, audited by the gateway and
by ``renature audit`` from the cluster, and packed by the retention service once it is over.
The replies travel on shard channels (``SSUBSCRIBE``/``SPUBLISH``), never broadcast to every
node; the liveness probe judges the services on the cluster too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from devkit.redis_cluster import (  # noqa: F401 (the fixture redis_cluster)
    RedisCluster,
    redis_cluster_fixture,
)
from devkit.redis_server import free_port
from devkit.waiting import eventually
from eventstore import KeyLayout
from eventstore.archive import packed_key
from gameplatform import game_names, get_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.runtime.bus import REPLY_CHANNELS, SHARD_REPLY_CHANNELS
from support.hosting import hosted

pytestmark = pytest.mark.redis

CLI = [sys.executable, "-c", "from gameserver.cli import main; main()"]
BOTS = ["greedy", "random"]
LAYOUT = KeyLayout()


class ServedStack:
    """``serve all`` running on the cluster: its gateway's URL and the cluster."""

    def __init__(self, url: str, cluster: RedisCluster, env: dict[str, str]) -> None:
        self.url = url
        self.cluster = cluster
        self.env = env

    def on_masters(self, *command: str) -> list[Any]:
        """``command``'s answer from every master, concatenated (a list answer each)."""
        found: list[Any] = []
        for node in self.cluster.nodes:
            if not node.running:
                continue
            client = node.client()
            try:
                if client.info("replication").get("role") == "master":
                    found += client.execute_command(*command)  # type: ignore[no-untyped-call]
            finally:
                client.close()
        return found

    def exists(self, key: str) -> bool:
        client = self.cluster.master_of(key).client()
        try:
            return bool(client.exists(key))
        finally:
            client.close()


@pytest.fixture(scope="module")
def served(
    redis_cluster: RedisCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedStack]:
    redis_cluster.wait_ready()
    redis_cluster.flush()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "RENATURE_"))}
    env |= {
        "REDIS_URL": redis_cluster.url,
        "PYTHONUNBUFFERED": "1",
        "RENATURE_LOG_LEVEL": "WARNING",
        "RENATURE_DURABILITY": "replica",  # every acknowledged write on a replica (WAIT 1)
        "RENATURE_ALLOW_CHOSEN_SEEDS": "1",
        "RENATURE_GATEWAY_WORKERS": "2",  # each worker has a reply channel of its own
        "RENATURE_RATE_LIMITS": "off",
        "RENATURE_INTERVAL_S": "0.5",  # retention passes
        "RENATURE_FINISHED_GRACE_S": "0",  # a finished game is packed at the next pass
    }
    port = free_port()
    workdir = tmp_path_factory.mktemp("serve-all")
    out = workdir / "serve-all.out"
    with out.open("w") as stdout, (workdir / "serve-all.err").open("w") as stderr:
        # Files, not pipes: a worker process that outlived its parent would hold a pipe open.
        process = subprocess.Popen(
            [*CLI, "serve", "all", "--port", str(port)],
            cwd=workdir,
            env=env,
            stdout=stdout,
            stderr=stderr,
            text=True,
        )
    try:
        deadline = time.monotonic() + 240  # two busy cores: six services, two workers
        while "Press Ctrl+C" not in out.read_text():
            assert process.poll() is None, (out.read_text(), _tail(workdir / "serve-all.err"))
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.2)
        assert f"export REDIS_URL={redis_cluster.url}" in out.read_text().splitlines()
        yield ServedStack(f"http://127.0.0.1:{port}", redis_cluster, env)
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
    assert code == 0


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:]


async def play(stack: ServedStack, name: str, seed: str) -> str:
    """A whole bot game over HTTP, each bot seeing only its seat's state; its game id."""
    game = get_game(name)
    agents = [game.make_bot(bot, game.bot_seed(seed, seat)) for seat, bot in enumerate(BOTS)]
    async with GatewayClient(stack.url, game=name, timeout=30.0) as client:
        game_id = await client.create_game(2, seed=seed)
        tokens = [await client.join(game_id, seat, bot) for seat, bot in enumerate(BOTS)]
        await client.start(game_id, tokens[0])
        for number in range(2000):
            state = await client.state(game_id, tokens[0])
            while not game.is_over(state) and game.to_move(state) is None:
                state = await client.state(game_id, tokens[0])  # the service's own command
            if game.is_over(state):
                return game_id
            seat = game.to_move(state)
            assert seat is not None
            command = agents[seat].choose(await client.state(game_id, tokens[seat]), seat)
            await client.send(game_id, tokens[seat], command, f"b{number}")
    raise AssertionError(f"{name}: no end after 2000 moves")


@pytest.mark.parametrize("name", hosted(game_names()))
async def test_serve_all_on_the_cluster_plays_audits_and_packs_every_game(
    served: ServedStack, name: str
) -> None:
    game_id = await play(served, name, f"cluster-stack-{name}")
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
        audit = (await http.get(f"/games/{game_id}/audit")).json()
    assert (audit["ok"], audit["finished"]) == (True, True), audit
    _, _, expected = get_game(name).simulate(f"cluster-stack-{name}", BOTS)
    assert audit["scores"] == msgspec.to_builtins(expected)["scores"]

    # The retention service follows the feeds on the cluster and packs the finished game.
    await eventually(
        lambda: served.exists(packed_key(LAYOUT, game_id)), "the game packed", timeout=60
    )
    done = subprocess.run(
        [*CLI, "audit", game_id, "--redis-url", served.cluster.url, "--json"],
        env=served.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert (report["ok"], report["game_id"], report["scores"]) == (True, game_id, audit["scores"])


async def test_replies_travel_on_shard_channels_and_the_services_are_alive(
    served: ServedStack,
) -> None:
    """Every reply channel (a gateway worker's, subscribed at its first command) is a shard
    channel, subscribed on the master of its slot: none is a plain channel, whose replies
    every node of the cluster would carry."""
    async with GatewayClient(served.url) as client:
        await client.create_game(2)  # a command through a gateway worker and its reply

    def shard_channels() -> list[bytes]:
        return served.on_masters("PUBSUB", "SHARDCHANNELS", f"{REPLY_CHANNELS}*")

    await eventually(lambda: bool(shard_channels()), "a worker's reply channel", timeout=30)
    assert all(c.decode().startswith(SHARD_REPLY_CHANNELS) for c in shard_channels())
    assert served.on_masters("PUBSUB", "CHANNELS", f"{REPLY_CHANNELS}*") == []
    for service in ("rules", "models", "clock", "retention"):
        done = subprocess.run(
            [sys.executable, "-m", "gameserver.runtime.probe", "live", service],
            env=served.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (service, done.stdout, done.stderr)
        assert "alive" in done.stdout
