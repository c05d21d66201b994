"""Redis locked down: every service runs as its own ACL user of infra/redis/users.acl.

A private ``redis-server`` is started with the ACL file rendered by infra/redis/render-acl.sh
(random hex passwords, as a deployment's Secret would give them). Then the whole stack runs,
each service as its own user: the rules service, both projectors, the gateway and the retention
service play, project, serve and compact a whole game. And every access a service must not have
is refused with NOPERM: only the rules service reads seeds, only the gateway (and the clock's
system commands) writes the command stream, projectors cannot change streams, nobody without a
password gets in. The gateway cannot touch outcomes: the rules service fences an abandoned join.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import AuthenticationError, NoPermissionError, ResponseError
from typer.testing import CliRunner, Result

from devkit.redis_server import free_port
from eventstore import KeyLayout
from eventstore.archive import ArchiveDir
from gameserver.cli import app as cli
from gameserver.gateway.app import create_app
from gameserver.gateway.idempotency import CLAIM_GRACE_S
from gameserver.projectors import PROJECTIONS, create_projector
from gameserver.retention.retention_service import Retention, stage_of
from gameserver.rules.rules_service import RulesService
from gameserver.runtime import bus, signing
from gameserver.runtime.bus import COMMAND_PARTITIONS, CommandEnvelope
from gameserver.runtime.rules_client import RulesClient
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RetentionPolicy
from renature import commands as c
from support.gateway import gateway_settings, started_game

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "infra" / "redis" / "users.acl"
RENDER = ROOT / "infra" / "redis" / "render-acl.sh"
USERS = (
    "rules",
    "gateway",
    "models",
    "board",
    "score",
    "clock",
    "retention",
    "auditor",
    "admin",
)


@dataclass
class AclRedis:
    port: int
    passwords: dict[str, str]

    def url(self, user: str) -> str:
        return f"redis://{user}:{self.passwords[user]}@127.0.0.1:{self.port}/0"

    def client(self, user: str) -> aioredis.Redis:
        return aioredis.Redis.from_url(self.url(user))


def render(tmp: Path, passwords: dict[str, str]) -> Path:
    """The ACL file as the Redis container renders it at start (the real script)."""
    env = {f"{user.upper()}_PASSWORD": password for user, password in passwords.items()}
    out = tmp / "users.acl"
    subprocess.run(
        ["sh", str(RENDER), str(TEMPLATE), str(out), "--", "true"],
        env={"PATH": "/usr/bin:/bin", **env},
        check=True,
        timeout=10,
    )
    return out


@pytest.fixture(scope="module")
def acl_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclRedis]:
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.fail("redis-server is needed for the ACL tests")
    tmp = tmp_path_factory.mktemp("acl")
    passwords = {user: secrets.token_hex(16) for user in USERS}
    aclfile = render(tmp, passwords)
    port = free_port()
    process = subprocess.Popen(
        [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp), "--aclfile", str(aclfile),
         "--protected-mode", "yes"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        admin = redis.Redis(port=port, username="admin", password=passwords["admin"])
        for _ in range(200):
            try:
                admin.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None:
                    pytest.fail("redis-server refused the ACL file")
                subprocess.run(["sleep", "0.05"], check=True)
        admin.close()
        yield AclRedis(port, passwords)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
async def flushed(acl_redis: AclRedis) -> AclRedis:
    admin = acl_redis.client("admin")
    await admin.flushall()
    await admin.script_flush()
    await admin.aclose()
    return acl_redis


def test_the_rendered_file_holds_no_placeholder_and_refuses_a_missing_password(
    tmp_path: Path,
) -> None:
    passwords = {user: secrets.token_hex(16) for user in USERS}
    text = render(tmp_path, passwords).read_text()
    assert not re.search(r"@[A-Z_]+_PASSWORD@", text)
    for user, password in passwords.items():
        assert f"user {user} on >{password} " in text
    assert "user default off" in text
    del passwords["gateway"]
    with pytest.raises(subprocess.CalledProcessError):
        render(tmp_path, passwords)
    with pytest.raises(subprocess.CalledProcessError):
        render(tmp_path, {**passwords, "gateway": "not hex!"})


async def test_every_service_works_as_its_own_user(
    flushed: AclRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "signing.pem"  # the rules service seals, the others read seals
    key_file.write_bytes(signing.private_pem(signing.new_key()))
    settings = {
        user: Settings.of(redis_url=flushed.url(user), consumer=f"{user}-1") for user in USERS
    }
    settings["rules"] = settings["rules"].with_(signing_key_file=str(key_file))
    projector_clients = {name: flushed.client(name) for name in PROJECTIONS}
    stop = asyncio.Event()
    projectors = [
        create_projector(settings[name], projector_clients[name], projection())
        for name, projection in PROJECTIONS.items()
    ]
    tasks = [asyncio.create_task(p.run(stop, block_ms=100)) for p in projectors]
    app = create_app(
        gateway_settings(flushed.url("gateway"), allow_chosen_seeds=True), command_timeout=10.0
    )
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            RulesService(settings["rules"].with_(allow_chosen_seeds=True)),
            app.router.lifespan_context(app),
            httpx.AsyncClient(base_url="http://gw", transport=transport, timeout=10) as http,
        ):
            game_id = await play_whole_game(http)
            version = (await http.get(f"/games/{game_id}")).json()["version"]
            admin = flushed.client("admin")
            for name in ("board", "score"):  # both read models written (each user its own)
                key = KeyLayout().model_key(name, game_id)
                for _ in range(200):
                    if int(await admin.hget(key, "version") or 0) == version:
                        break
                    await asyncio.sleep(0.05)
                assert int(await admin.hget(key, "version") or 0) == version
            await admin.aclose()
            for path in ("board", "scores"):  # served to the gateway user
                assert (await http.get(f"/games/{game_id}/{path}")).status_code == 200
            audit = await http.get(f"/games/{game_id}/audit")
            assert audit.status_code == 200, audit.text
            assert audit.json()["ok"] is True
            keys = await http.get("/.well-known/renature-keys.json")
            assert keys.status_code == 200, keys.text
            assert [k["key_id"] for k in keys.json()["keys"]] == [
                signing.key_id(signing.load_private_key(key_file).public_key())
            ]
            auditor = flushed.client("auditor")
            seal = await signing.stored_seal(auditor, KeyLayout(), game_id)
            await auditor.aclose()
            assert seal is not None
            assert seal.events == version

            janitor_redis = flushed.client("retention")
            janitor = Retention(
                janitor_redis,
                KeyLayout(),
                RetentionPolicy().with_(finished_grace_s=0),
                consumer="retention-1",
                stage_of=stage_of,
            )
            report = await janitor.run_once()
            await janitor_redis.aclose()
            assert report.games_packed == 1
            assert report.entries_trimmed > 0
            view = await http.get(f"/games/{game_id}/spectator")  # read from the packed game
            assert view.status_code == 200, view.text
            assert view.json()["phase"] == "finished"
            await sealed_again_and_archived(flushed, game_id, key_file, tmp_path, monkeypatch)
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for client in projector_clients.values():
            await client.aclose()


async def sealed_again_and_archived(
    acl: AclRedis, game_id: str, key_file: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``renature seal`` as the rules service's user seals the packed game again; the retention
    service's user archives it with its seal (and deletes the seal key); sealed again in the
    archive."""

    def seal_again() -> Result:
        args = ["seal", game_id, "--signing-key", str(key_file), "--redis-url", acl.url("rules")]
        return CliRunner().invoke(cli, args)

    done = await asyncio.to_thread(seal_again)
    assert done.exit_code == 0, done.output
    assert "in Redis" in done.output
    janitor_redis = acl.client("retention")
    policy = RetentionPolicy().with_(finished_grace_s=0, archive_after_s=0, archive_dir=str(tmp))
    janitor = Retention(
        janitor_redis, KeyLayout(), policy, consumer="retention-1", stage_of=stage_of
    )
    assert (await janitor.run_once()).games_archived == 1
    assert not await janitor_redis.exists(KeyLayout().seal_key(game_id))
    await janitor_redis.aclose()
    assert ArchiveDir(tmp).read_seal(game_id) is not None
    monkeypatch.setenv("RENATURE_ARCHIVE_DIR", str(tmp))
    done = await asyncio.to_thread(seal_again)
    assert done.exit_code == 0, done.output
    assert "in the archive" in done.output


async def play_whole_game(http: httpx.AsyncClient) -> str:
    game_id, seat_tokens = await started_game(http, seed="acl-seed")
    tokens = [{"Authorization": f"Bearer {token}"} for token in seat_tokens]
    for number in range(2000):
        summary = (await http.get(f"/games/{game_id}")).json()
        if summary["phase"] == "finished":
            return str(game_id)
        seat = summary["current_seat"]
        if seat is None:
            await asyncio.sleep(0.05)
            continue
        actions = (await http.get(f"/games/{game_id}/legal-actions", headers=tokens[seat])).json()
        sent = await http.post(
            f"/games/{game_id}/commands",
            json={"command_id": f"m{number}", "command": actions[0]},
            headers=tokens[seat],
        )
        assert sent.status_code == 200, sent.text
    raise AssertionError("the game did not end")


SEED = "rn:{p03}:seed:g"
GAME = "rn:{p03}:game:g"
FEED = "rn:{p03}:feed"
COMMANDS = "rn:{p03}:commands"  # one of the gateway's command streams
CLOCK_COMMANDS = "rn:{p03}:commands:clock"  # one of the clock's
CHOSEN = "rn:{p03}:chosen:g"  # a chosen seed staged by the gateway
REPLY = "rn:reply:someone"
OUTCOME = "rn:{p03}:cmd:g:join:0:abc"  # a command's outcome: the rules service's alone

SIGNING_KEYS = "rn:signing-keys"  # the published keys: the rules service adds its own, no more
SEAL = "rn:{p03}:seal:g"
TAKE_OFF_KEYS = [("HDEL", SIGNING_KEYS, "k"), ("DEL", SIGNING_KEYS)]  # an administrator's
ADD_KEY = [("HSET", SIGNING_KEYS, "forged", "key"), *TAKE_OFF_KEYS]
FORBIDDEN: dict[str, list[tuple[str, ...]]] = {
    "gateway": [
        ("GET", SEED),  # only the rules service reads seeds
        ("SET", SEED, "x", "NX", "GET"),
        ("SET", SEED, "overwritten"),  # no key of the vault at all: it stages chosen seeds
        ("SET", SEED, "x", "NX"),
        ("DEL", SEED),
        ("UNLINK", SEED),
        ("GETDEL", SEED),
        ("RENAME", SEED, "rn:{p03}:seats:g"),
        ("SET", OUTCOME, "forged"),  # outcomes are the rules service's (it fences joins too)
        ("SET", "rn:{p03}:cmd:g:fresh", "forged", "NX"),
        ("DEL", OUTCOME),
        ("HSET", OUTCOME, "status", "accepted"),
        ("GET", OUTCOME),
        ("GETDEL", OUTCOME),
        ("EXPIRE", OUTCOME, "1"),
        ("RENAME", "rn:{p03}:seats:g", OUTCOME),
        ("GET", CHOSEN),  # staged seeds: write only
        ("SCRIPT", "FLUSH"),  # the services' scripts stay loaded
        ("SCRIPT", "KILL"),
        ("FUNCTION", "FLUSH"),
        ("FUNCTION", "DELETE", "lib"),
        ("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() end)"),
        ("FCALL", "f", "0"),
        ("PUBLISH", REPLY, "a fake reply"),  # replies are the rules service's
        ("SPUBLISH", REPLY, "a fake reply"),
        ("XADD", CLOCK_COMMANDS, "*", "x", "y"),  # the clock's streams are the clock's
        ("XADD", GAME, "*", "event", "{}"),  # events are the rules service's
        ("XADD", FEED, "*", "event", "{}"),
        ("DEL", GAME),
        ("XTRIM", FEED, "MAXLEN", "0"),
        ("XRANGE", COMMANDS, "-", "+"),  # writes the command stream, never reads it
        ("XREADGROUP", "GROUP", "rules", "x", "STREAMS", COMMANDS, ">"),
        ("FLUSHALL",),
        ("CONFIG", "SET", "appendonly", "no"),
        ("KEYS", "*"),
    ],
    "board": [
        ("GET", SEED),
        ("XADD", FEED, "*", "event", "{}"),  # projectors only read their feeds
        ("XDEL", FEED, "1-1"),
        ("XTRIM", FEED, "MAXLEN", "0"),
        ("DEL", FEED),
        ("DEL", GAME),
        ("XADD", GAME, "*", "event", "{}"),
        ("XADD", COMMANDS, "*", "x", "y"),
        ("HSET", "rn:{p03}:score:g", "version", "9"),  # the other projector's model
        ("SET", "rn:{p03}:cmd:g:c", "forged"),
        ("FLUSHALL",),
    ],
    "models": [  # the board and score projectors in one: their models, nothing else
        ("GET", SEED),
        ("XADD", FEED, "*", "event", "{}"),
        ("XTRIM", FEED, "MAXLEN", "0"),
        ("DEL", GAME),
        ("XADD", COMMANDS, "*", "x", "y"),
        ("HSET", "rn:{p03}:seats:g", "0", "forged"),
        ("SET", "rn:{p03}:cmd:g:c", "forged"),
        ("FLUSHALL",),
    ],
    "score": [
        ("GET", SEED),
        ("XADD", FEED, "*", "event", "{}"),
        ("HSET", "rn:{p03}:board:g", "version", "9"),
        ("DEL", GAME),
    ],
    "rules": [
        ("XADD", COMMANDS, "*", "x", "y"),  # only the gateway writes commands
        ("XADD", CLOCK_COMMANDS, "*", "x", "y"),
        ("SET", CHOSEN, "x"),  # reads what the gateway staged, nothing more
        ("HSET", "rn:{p03}:board:g", "version", "9"),
        ("FLUSHALL",),
        ("CONFIG", "SET", "appendonly", "no"),
    ],
    "clock": [
        ("GET", SEED),
        ("XADD", FEED, "*", "event", "{}"),
        ("XRANGE", COMMANDS, "-", "+"),
        ("XADD", COMMANDS, "*", "x", "y"),  # only its own streams: they carry timeouts only
        ("XRANGE", CLOCK_COMMANDS, "-", "+"),
        ("PUBLISH", REPLY, "a fake reply"),
        ("SET", "rn:{p03}:cmd:g:c", "forged"),
        ("SCRIPT", "FLUSH"),
        ("DEL", GAME),
    ],
    "retention": [
        ("GET", SEED),  # deletes a game's seed with the game, never reads it
        ("GET", CHOSEN),
        ("PUBLISH", REPLY, "a fake reply"),
        ("XADD", COMMANDS, "*", "x", "y"),
        ("XADD", GAME, "*", "event", "{}"),
        ("FLUSHALL",),
    ],
    "auditor": [
        ("GET", SEED),
        ("XADD", GAME, "*", "event", "{}"),
        ("DEL", GAME),
    ],
}


for _user, _forbidden in FORBIDDEN.items():  # nobody but an administrator takes a key off
    _forbidden += TAKE_OFF_KEYS if _user == "rules" else ADD_KEY
FORBIDDEN["gateway"] += [("SET", SEAL, "forged"), ("DEL", SEAL)]  # reads seals, never writes
FORBIDDEN["auditor"] += [("SET", SEAL, "forged")]


@pytest.mark.parametrize("user", sorted(FORBIDDEN))
async def test_what_a_service_must_not_do_is_refused_with_noperm(
    flushed: AclRedis, user: str
) -> None:
    admin = flushed.client("admin")
    await admin.set(SEED, "secret-seed")
    await admin.xadd(GAME, {"event": "{}"}, id="0-1")
    await admin.xadd(FEED, {"game": "g", "event": "{}"})
    await admin.xadd(COMMANDS, {"x": "y"})
    await admin.xadd(CLOCK_COMMANDS, {"x": "y"})
    await admin.set(CHOSEN, "staged")
    await admin.set(OUTCOME, "stored")
    await admin.hset("rn:{p03}:seats:g", "0", "digest")
    await admin.hset(SIGNING_KEYS, "k", "public")
    await admin.set(SEAL, "sealed")
    client = flushed.client(user)
    try:
        for command in FORBIDDEN[user]:
            with pytest.raises(NoPermissionError):
                await client.execute_command(*command)  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
    finally:
        await client.aclose()
    assert await admin.get(SEED) == b"secret-seed"
    assert await admin.get(CHOSEN) == b"staged"
    assert (await admin.get(OUTCOME), await admin.ttl(OUTCOME)) == (b"stored", -1)
    assert not await admin.exists("rn:{p03}:cmd:g:fresh")
    assert (await admin.xlen(COMMANDS), await admin.xlen(CLOCK_COMMANDS)) == (1, 1)
    assert await admin.xlen(FEED) == 1
    assert await admin.exists(GAME)
    assert await admin.hgetall(SIGNING_KEYS) == {b"k": b"public"}
    assert await admin.get(SEAL) == b"sealed"
    await admin.aclose()


async def test_what_a_service_needs_is_allowed(flushed: AclRedis) -> None:
    gateway = flushed.client("gateway")
    assert await gateway.set(CHOSEN, "chosen", nx=True, ex=600)  # a chosen seed: write only
    assert await gateway.xadd(COMMANDS, {"x": "y"})
    await gateway.aclose()
    rules = flushed.client("rules")
    assert await rules.get(CHOSEN) == b"chosen"  # read once, at the creation
    assert await rules.set(SEED, "chosen", nx=True)
    assert await rules.get(SEED) == b"chosen"  # the one reader of seeds
    await rules.aclose()
    clock = flushed.client("clock")
    assert await clock.xadd(CLOCK_COMMANDS, {"claim": "timeout"})
    assert await clock.zadd("rn:clock:deadlines", {"g": 1}) == 1
    await clock.aclose()


async def test_nobody_gets_in_without_a_password(flushed: AclRedis) -> None:
    anonymous = aioredis.Redis(port=flushed.port)
    with pytest.raises((AuthenticationError, ResponseError)):
        await anonymous.set("anything", "x")
    await anonymous.aclose()
    wrong = aioredis.Redis(port=flushed.port, username="gateway", password="00" * 16)
    with pytest.raises(AuthenticationError):
        await wrong.ping()
    await wrong.aclose()


async def test_a_leaked_clock_password_moves_no_seat(flushed: AclRedis) -> None:
    """The clock's user may write its own command streams only, and the rules service takes
    nothing from them but timeout claims: a forged move is refused and nothing is stored."""
    settings = Settings.of(redis_url=flushed.url("rules"), consumer="rules-1")
    clock = flushed.client("clock")
    forged = CommandEnvelope("g1", "forged", c.DiscardDomino(seat=0, domino=0), seat=0)
    async with (
        RulesService(settings),
        RulesClient(clock, streams=bus.streams_of(COMMAND_PARTITIONS, bus.CLOCK)) as sender,
    ):
        reply = await sender.send(forged, 10)
    await clock.aclose()
    assert (reply.status, reply.code) == ("rejected", "wrong_sender")
    admin = flushed.client("admin")
    assert await admin.keys("rn:*:cmd:*") == []  # not even the refusal
    assert await admin.keys("rn:*:game:*") == []
    await admin.aclose()


def test_the_probe_takes_its_password_from_the_environment(acl_redis: AclRedis) -> None:
    """As the manifests probe Redis: REDISCLI_AUTH, so no password on a command line."""
    env = {"PATH": "/usr/bin:/bin", "REDISCLI_AUTH": acl_redis.passwords["auditor"]}
    command = ["redis-cli", "-p", str(acl_redis.port), "--no-auth-warning", "--user", "auditor"]
    probe = subprocess.run([*command, "ping"], env=env, capture_output=True, text=True, timeout=10)
    assert probe.stdout.strip() == "PONG"


async def test_an_abandoned_join_is_fenced_by_the_rules_service(flushed: AclRedis) -> None:
    """The gateway may not write outcomes: a seat whose claimed join never landed is freed by
    the rules service fencing that join (``join_abandoned``), each service as its own user.
    A withdrawal of anything but a join, or from the clock's streams, is refused unrecorded."""
    settings = Settings.of(redis_url=flushed.url("rules"), consumer="rules-1")
    app = create_app(gateway_settings(flushed.url("gateway")), command_timeout=10.0)
    transport = httpx.ASGITransport(app=app)
    admin = flushed.client("admin")
    async with (
        RulesService(settings),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gw", transport=transport, timeout=10) as http,
    ):
        game_id = (await http.post("/games", json={"players": 2})).json()["game_id"]
        layout = KeyLayout()
        dead_join = bus.join_command_id(0, "dead-gateway")
        await admin.hset(layout.seats_key(game_id), "0", "digest-of-a-dead-gateway")
        stale = f"{int((time.time() - CLAIM_GRACE_S - 1) * 1000)}|{dead_join}|"
        await admin.hset(layout.game_scoped_key("claims", game_id), "0", stale)
        joined = await http.post(f"/games/{game_id}/seats/0", json={"name": "Bo"})
        assert joined.status_code == 201, joined.text
        fenced = await admin.get(layout.command_key(game_id, dead_join))
        assert bus.reply_decoder.decode(fenced or b"").code == "join_abandoned"

        gateway = flushed.client("gateway")
        clock = flushed.client("clock")
        async with (
            RulesClient(gateway, streams=COMMAND_PARTITIONS) as by_gateway,
            RulesClient(clock, streams=bus.streams_of(COMMAND_PARTITIONS, bus.CLOCK)) as by_clock,
        ):
            move = bus.withdrawal(game_id, "seat1:m1", 1, "renature")  # a seat's move id
            assert (await by_gateway.send(move, 10)).code == "not_a_join"
            join = bus.withdrawal(game_id, bus.join_command_id(1, "x"), 1, "renature")
            assert (await by_clock.send(join, 10)).code == "wrong_sender"
        await gateway.aclose()
        await clock.aclose()
        stored = {cast(bytes, key).decode() for key in await admin.keys("rn:*:cmd:*")}
        assert layout.command_key(game_id, "seat1:m1") not in stored
        assert layout.command_key(game_id, bus.join_command_id(1, "x")) not in stored
    await admin.aclose()
