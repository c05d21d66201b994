"""``renature serve all`` starts honestly: a busy gateway or Redis port is refused with a clear
message before any URL is printed (and before anything is started), the whole stack (clock
service included) comes up on the ports asked for, behind a Redis password generated into
var/redis.password, prints the lines the CLI needs (never the password), and stops on SIGINT.
It signs game records with an Ed25519 key made once into var/signing-key.pem (never printed,
the same key after a restart): an exported game proves itself with the published keys."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import redis

from devkit.redis_server import find_redis_server, free_port
from eventstore import KeyLayout
from gameserver.runtime import bus, signing

pytestmark = pytest.mark.redis

SERVE_ALL = [sys.executable, "-c", "from gameserver.cli import main; main()", "serve", "all"]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PYTHONUNBUFFERED"] = "1"
    env["RENATURE_LOG_LEVEL"] = "WARNING"
    return env


@contextmanager
def listening() -> Iterator[int]:
    """A port some other program listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def clock_group(client: redis.Redis, feed: str) -> bool:
    if not client.exists(feed):
        return False
    return any(group["name"] == b"clock" for group in client.xinfo_groups(feed))


def refused(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*SERVE_ALL, *args],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert "Gateway:" not in done.stdout
    assert not (tmp_path / "var").exists()  # nothing was started
    return done


def test_a_busy_gateway_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with listening() as port:
        done = refused(tmp_path, "--port", str(port))
    assert f"Port {port} on 127.0.0.1 is in use" in done.stderr


def test_a_busy_redis_port_is_refused_rather_than_used(tmp_path: Path) -> None:
    with listening() as redis_port:
        done = refused(tmp_path, "--port", str(free_port()), "--redis-port", str(redis_port))
    assert f"Port {redis_port} is in use" in done.stderr
    assert "REDIS_URL" in done.stderr


@contextmanager
def serving(
    tmp_path: Path, port: int, redis_port: int, *flags: str, **env: str
) -> Iterator[list[str]]:
    """``serve all`` in ``tmp_path`` on these ports (with ``flags``), up: what it printed;
    stopped (SIGINT, exit status 0) on leaving."""
    process = subprocess.Popen(
        [*SERVE_ALL, "--port", str(port), "--redis-port", str(redis_port), *flags],
        cwd=tmp_path,
        env={**environment(), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 180  # as long as `serve all` itself waits for its gateway
        while not lines or "Press Ctrl+C" not in lines[-1]:
            assert time.monotonic() < deadline, lines
            line = process.stdout.readline()
            assert line, f"serve all ended: {lines}"
            lines.append(line.strip())
        yield lines
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
    assert code == 0


def test_the_stack_starts_on_the_ports_asked_for_and_stops(tmp_path: Path) -> None:
    assert find_redis_server(), "redis-server is needed"
    port, redis_port = free_port(), free_port()
    with serving(tmp_path, port, redis_port) as lines:
        assert f"Gateway: http://127.0.0.1:{port}" in lines
        assert f"export REDIS_URL=redis://127.0.0.1:{redis_port}/0" in lines
        password_file = tmp_path / "var" / "redis.password"
        assert f"export RENATURE_REDIS_PASSWORD_FILE={password_file}" in lines
        assert password_file.stat().st_mode & 0o777 == 0o600
        password = password_file.read_text().strip()
        assert len(password) == 64
        assert not any(password in line for line in lines)  # never printed
        with pytest.raises(redis.AuthenticationError):  # nobody gets in without it
            redis.Redis(port=redis_port).set("anything", "x")
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        client = redis.Redis(port=redis_port, password=password)
        feed = KeyLayout().feed_key(0)
        deadline = time.monotonic() + 20
        while not clock_group(client, feed):  # every service runs, the clock service too
            assert time.monotonic() < deadline, "the clock service did not start"
            time.sleep(0.1)
        client.close()


def renature(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``renature`` command, run with the environment that ``serve all`` printed."""
    env = {**environment(), "REDIS_URL": "", "PYTHONUNBUFFERED": "1"}
    for line in (tmp_path / "cli.env").read_text().splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        env[name] = value
    command = [sys.executable, "-c", "from gameserver.cli import main; main()", *args]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def signing_key_line(lines: list[str]) -> str:
    (line,) = [line for line in lines if line.startswith("Signed records: key ")]
    return line.split()[3]


def test_the_stack_signs_its_records_with_a_key_made_once(tmp_path: Path) -> None:
    """Without a key given, ``serve all`` makes one into var/signing-key.pem (never printed),
    the rules service seals with it, an export proves itself with the published keys, and a
    restart signs with the same key."""
    assert find_redis_server(), "redis-server is needed"
    port, redis_port = free_port(), free_port()
    with serving(tmp_path, port, redis_port, RENATURE_ALLOW_CHOSEN_SEEDS="1") as lines:
        key_file = tmp_path / "var" / "signing-key.pem"
        assert key_file.stat().st_mode & 0o777 == 0o600
        key = signing.load_private_key(key_file)
        kid = signing.key_id(key.public_key())
        assert signing_key_line(lines) == kid
        secret = key_file.read_text().splitlines()[1]
        assert not any(secret in line for line in lines)  # the key itself is never printed
        (tmp_path / "cli.env").write_text("\n".join(x for x in lines if x.startswith("export ")))
        gateway = f"http://127.0.0.1:{port}"
        played = renature(tmp_path, "bots", "play", "--gateway", gateway, "--players", "2")
        assert played.returncode == 0, played.stderr
        game_id = json.loads(played.stdout)["game_id"]
        password = (tmp_path / "var" / "redis.password").read_text().strip()
        client = redis.Redis(port=redis_port, password=password)
        deadline = time.monotonic() + 20
        while not client.exists(KeyLayout().seal_key(game_id)):  # sealed as the game ended
            assert time.monotonic() < deadline, "the finished game was not sealed"
            time.sleep(0.05)
        client.close()
        keys = httpx.get(f"{gateway}/.well-known/renature-keys.json", timeout=5)
        assert [entry["key_id"] for entry in keys.json()["keys"]] == [kid]
        (tmp_path / "keys.json").write_bytes(keys.content)
        exported = renature(tmp_path, "export", game_id, "--out", "game.jsonl")
        assert exported.returncode == 0, exported.stderr
        audit = renature(tmp_path, "audit", "--events", "game.jsonl", "--key", "keys.json")
        assert audit.returncode == 0, audit.stdout + audit.stderr
        said = " ".join(audit.stdout.split())
        assert f"Signed by the server (key {kid})" in said
        assert "not signed" not in said  # sealed at the end: every event
    with serving(tmp_path, free_port(), free_port()) as again:  # the key file is kept
        assert signing_key_line(again) == kid
    assert signing.load_private_key(key_file).private_bytes_raw() == key.private_bytes_raw()


def test_a_share_set_by_hand_is_refused_beside_instances(tmp_path: Path) -> None:
    done = subprocess.run(
        [*SERVE_ALL, "--port", str(free_port()), "--instances", "2"],
        cwd=tmp_path,
        env={**environment(), "RENATURE_RULES_PARTITIONS": "0-1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert "unset RENATURE_RULES_PARTITIONS" in done.stderr
    assert "Gateway:" not in done.stdout
    assert not (tmp_path / "var").exists()  # nothing was started


def readers(client: redis.Redis, stream: str, group: str) -> frozenset[str]:
    """The consumers of ``group`` that were handed entries of ``stream``."""
    return frozenset(c["name"].decode() for c in client.xinfo_consumers(stream, group))


def games_on_every_partition(gateway: str) -> None:
    """Games created until every game partition (so every feed and command stream) has one."""
    layout, seen = KeyLayout(), set()
    for _ in range(500):
        created = httpx.post(f"{gateway}/games", json={"players": 2}, timeout=10)
        assert created.status_code == 201, created.text
        seen.add(layout.partition_of(created.json()["game_id"]))
        if len(seen) == layout.partitions:
            return
    raise AssertionError(f"games on partitions {sorted(seen)} only")


def test_instances_each_read_their_own_share_and_play_a_game_together(tmp_path: Path) -> None:
    """``--instances 2``: two rules instances on the command streams of even and odd number,
    two projectors on the feeds of even and odd number, two gateway workers; a game played
    through them to its end."""
    assert find_redis_server(), "redis-server is needed"
    port, redis_port = free_port(), free_port()
    env = {"RENATURE_ALLOW_CHOSEN_SEEDS": "1", "RENATURE_RATE_LIMITS": "off"}
    with serving(tmp_path, port, redis_port, "--instances", "2", **env) as lines:
        assert "Instances: 2 rules, 2 models (each on its share), 2 gateway workers." in lines
        (tmp_path / "cli.env").write_text("\n".join(x for x in lines if x.startswith("export ")))
        gateway = f"http://127.0.0.1:{port}"
        played = renature(tmp_path, "bots", "play", "--gateway", gateway, "--players", "2")
        assert played.returncode == 0, played.stderr
        board = httpx.get(f"{gateway}/games/{json.loads(played.stdout)['game_id']}/board")
        assert board.status_code == 200, board.text
        games_on_every_partition(gateway)
        password = (tmp_path / "var" / "redis.password").read_text().strip()
        client = redis.Redis(port=redis_port, password=password)
        layout = KeyLayout()
        streams = [readers(client, layout.command_stream(k), bus.RULES_GROUP) for k in range(4)]
        assert [streams[2], streams[3]] == [streams[0], streams[1]], streams
        assert len(streams[0]) == len(streams[1]) == 1
        assert streams[0] != streams[1]
        deadline = time.monotonic() + 20
        while not all(readers(client, feed, bus.MODELS_GROUP) for feed in layout.feed_keys()):
            assert time.monotonic() < deadline, "a feed was not read"
            time.sleep(0.1)
        feeds = [readers(client, layout.feed_key(k), bus.MODELS_GROUP) for k in range(16)]
        assert {feeds[k] for k in range(0, 16, 2)} == {feeds[0]}, feeds
        assert {feeds[k] for k in range(1, 16, 2)} == {feeds[1]}, feeds
        assert len(feeds[0]) == 1
        assert feeds[0] != feeds[1]
        client.close()
