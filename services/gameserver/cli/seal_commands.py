"""``renature seal GAME...``: seal stored games again with the server's current signing key.

The rules service seals a game as it runs and when it ends (`gameserver.runtime.signing`); a
game is sealed again only when it moves. After a key that leaked is taken off the published
list, its seals prove nothing, and the games that matter are sealed again with the current key
by this command, run where that key is (the rules service's key file,
``RENATURE_SIGNING_KEY_FILE``, or ``--signing-key``) with a Redis user that may write seals
(the rules service's). A game in Redis (running, finished or packed) gets a new seal there; a
game archived out of Redis (``RENATURE_ARCHIVE_DIR``) gets its archive file written again with
the new seal (the events unchanged). The key used is added to the published keys.

Exit status: 0 every game sealed, 2 no key, a key that cannot be read, or a game that is
neither in Redis nor in the archive (the others are sealed all the same).

``renature keys new --out FILE``: a new Ed25519 signing key (PEM, mode 0600) for the rules
service's ``RENATURE_SIGNING_KEY_FILE``; it prints the key's id, never the key. A file that
exists is never overwritten: refused (exit status 2), or with ``--keep`` kept as it is (so a
deployment's init step can run it at every start). ``--public-out`` also writes the public key
(PEM, what ``renature audit --key`` reads).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gameserver.cli.audit_commands import EXIT_NOTHING, RedisOpt, complain, console
from gameserver.cli.event_source import clipped

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from gameserver.runtime.settings import Settings


def seal(
    game_ids: Annotated[list[str], typer.Argument(help="ids of the games to seal again")],
    redis_url: RedisOpt = None,
    signing_key: Annotated[
        Path | None,
        typer.Option(
            "--signing-key",
            help="the PEM private key to seal with (default: RENATURE_SIGNING_KEY_FILE)",
        ),
    ] = None,
) -> None:
    """Seal games again with the server's current key (after a leaked key was taken off the
    published list): in Redis, or in the archive for an archived game."""
    from gameserver.runtime import signing
    from gameserver.runtime.settings import Settings

    settings = Settings.from_env(redis_url=redis_url)
    named = signing_key or settings.signing.signing_key_file
    if not named:
        complain(
            "No signing key: give --signing-key or set RENATURE_SIGNING_KEY_FILE.", EXIT_NOTHING
        )
    try:
        key = signing.load_private_key(Path(named))
    except (OSError, ValueError) as err:
        complain(f"Cannot read the signing key: {err}", EXIT_NOTHING)
    sealed = asyncio.run(_seal_again(game_ids, settings, key))
    out = console()
    missing = []
    for game_id in game_ids:
        found = sealed.get(game_id)
        if found is None:
            missing.append(game_id)
            continue
        where, events = found
        out.print(
            f"Sealed {clipped(game_id)} in {where}: events 1 to {events}, key "
            f"{signing.key_id(key.public_key())}."
        )
    if missing:
        names = ", ".join(clipped(game_id) for game_id in missing)
        complain(f"No such game in Redis or the archive: {names}.", EXIT_NOTHING)


async def _seal_again(
    game_ids: list[str], settings: Settings, key: Ed25519PrivateKey
) -> dict[str, tuple[str, int]]:
    """Where each game found was sealed and how many events its seal covers."""
    import msgspec

    from eventstore import RedisEventStore
    from eventstore import archive as packing
    from eventstore.redis_client import redis_client
    from gameserver.runtime import signing

    client = redis_client(settings.store.redis_url)  # a RedisCluster for a cluster URL
    directory = settings.retention.archive_dir
    archive = None if directory is None else packing.ArchiveDir(directory, settings.layout)
    done: dict[str, tuple[str, int]] = {}
    try:
        store = RedisEventStore(
            client, prefix=settings.store.prefix, partitions=settings.store.partitions
        )
        sealer = signing.Sealer(client, store, settings.layout, key)
        await sealer.publish_key()
        for game_id in game_ids:
            if await store.read(game_id, limit=1):
                done[game_id] = ("Redis", (await sealer.seal(game_id)).events)
            elif archive is not None and (events := archive.read(game_id)):
                new = signing.sign(key, game_id, [event.data for event in events])
                archive.write(game_id, packing.pack(events, msgspec.json.encode(new)))
                done[game_id] = ("the archive", new.events)
    finally:
        await client.aclose()
    return done


keys_app = typer.Typer(help="The rules service's signing keys.", no_args_is_help=True)


@keys_app.command("new")
def new_key(
    out: Annotated[Path, typer.Option("--out", help="where to write the private key (PEM)")],
    keep: Annotated[
        bool, typer.Option("--keep", help="a key already in --out is kept (exit status 0)")
    ] = False,
    public_out: Annotated[
        Path | None, typer.Option("--public-out", help="also write the public key (PEM) here")
    ] = None,
) -> None:
    """Write a new Ed25519 signing key (mode 0600) and print its id, never the key."""
    from gameserver.runtime import signing

    try:
        key = signing.key_file(out) if keep else signing.write_new_key(out)
    except FileExistsError:
        complain(f"{out} exists: a key is never overwritten (--keep keeps it).", EXIT_NOTHING)
    except (OSError, ValueError) as err:
        complain(f"Cannot write or read the key in {out}: {err}", EXIT_NOTHING)
    if public_out is not None:
        try:
            public_out.write_bytes(signing.public_pem(key.public_key()))
        except OSError as err:
            complain(f"Cannot write the public key: {err}", EXIT_NOTHING)
    console().print(f"Signing key {signing.key_id(key.public_key())} in {out}.")


def register(app: typer.Typer) -> None:
    app.command()(seal)
    app.add_typer(keys_app, name="keys")
