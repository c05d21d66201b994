"""``renature feeds``: the consumer groups that read the partition feeds, and retiring one.

Each projector, and any other reader of events, reads the partition feeds ``rn:{pNN}:feed`` in a
consumer group of its own. The retention service trims a feed only below what every group on it
has acknowledged, so a group that nobody reads any more keeps every later entry, for ever: the
board and score projectors' groups once a deployment has moved to ``renature serve models``
for good, for instance.

``renature feeds groups`` lists each group: on how many feeds, its consumers, the entries
delivered to it and not acknowledged, how far it trails the newest entry, and how long since
one of its consumers last read. ``renature feeds retire GROUP`` drops a group from every feed;
it refuses a group one of whose consumers read within the last minute (`ACTIVE_S`,
``--active-within``: its service still runs, stop it first) unless ``--force``. The refusal is
a guard, not a proof: before Redis 7.2 a consumer's idle time counts from the last entry
delivered to it, so a projector still running on feeds that had no event for a minute passes;
stop the service before retiring its group.

Exit status: 0 done, 2 no such group, or a group still read (without ``--force``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from gameserver.cli.audit_commands import EXIT_NOTHING, RedisOpt, complain, console

if TYPE_CHECKING:
    from gameserver.runtime.settings import Settings

ACTIVE_S = 60.0
"""A group one of whose consumers read within this long is taken to be still read."""

app = typer.Typer(
    help="The consumer groups on the partition feeds: list them, retire one nobody reads.",
    no_args_is_help=True,
)


@dataclass
class Group:
    """One consumer group, summed over the feeds it is on."""

    name: str
    feeds: int = 0
    consumers: int = 0
    pending: int = 0
    lag: int = 0
    idle_s: float | None = None
    """Seconds since one of its consumers last read (None: it has no consumer)."""

    def read_within(self, seconds: float) -> bool:
        return self.idle_s is not None and self.idle_s < seconds


@app.command("groups")
def groups(redis_url: RedisOpt = None) -> None:
    """List the consumer groups on the partition feeds."""
    found = asyncio.run(_groups(_settings(redis_url)))
    out = console()
    if not found:
        out.print("No consumer group reads the feeds.")
    for group in found.values():
        idle = "no consumer" if group.idle_s is None else f"last read {group.idle_s:.0f} s ago"
        out.print(
            f"{group.name}: {group.feeds} feeds, {group.consumers} consumers, "
            f"{group.pending} pending, {group.lag} behind, {idle}"
        )


@app.command("retire")
def retire(
    group: Annotated[str, typer.Argument(help="the consumer group to drop from every feed")],
    redis_url: RedisOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="drop it even though a consumer read lately")
    ] = False,
    active_within: Annotated[
        float,
        typer.Option(help="a group whose consumer read within this many seconds is still read"),
    ] = ACTIVE_S,
) -> None:
    """Drop a consumer group nobody reads any more from every partition feed (the retention
    service then trims the feeds past it again)."""
    settings = _settings(redis_url)
    found = asyncio.run(_groups(settings)).get(group)
    if found is None:
        complain(f"No consumer group {group!r} on the feeds.", EXIT_NOTHING)
    if found.read_within(active_within) and not force:
        complain(
            f"{group} is still read (a consumer read {found.idle_s:.0f} s ago): stop its "
            "service first, or give --force.",
            EXIT_NOTHING,
        )
    dropped = asyncio.run(_destroy(settings, group))
    console().print(f"Retired {group} from {dropped} feeds ({found.pending} pending dropped).")


def _settings(redis_url: str | None) -> Settings:
    from gameserver.runtime.settings import Settings

    return Settings.from_env(redis_url=redis_url)


async def _groups(settings: Settings) -> dict[str, Group]:
    """The groups on the feeds, by name, in the order first met."""
    from eventstore.redis_client import redis_client
    from eventstore.redis_values import text

    found: dict[str, Group] = {}
    async with redis_client(settings.store.redis_url) as client:
        for feed in settings.layout.feed_keys():
            if not await client.exists(feed):
                continue
            for info in await client.xinfo_groups(feed):
                name = text(info["name"])
                group = found.setdefault(name, Group(name))
                group.feeds += 1
                group.consumers += int(info["consumers"])
                group.pending += int(info["pending"])
                group.lag += int(info.get("lag") or 0)
                for consumer in await client.xinfo_consumers(feed, name):
                    # ``idle`` (what the retention service goes by too): from Redis 7.2 since
                    # the consumer's last read, one that found nothing included (``inactive``
                    # leaves those out: a projector on a quiet feed would look unread); before
                    # 7.2 since the last entry delivered to it, hence "stop its service first".
                    idle_s = int(consumer["idle"]) / 1000
                    group.idle_s = idle_s if group.idle_s is None else min(group.idle_s, idle_s)
    return found


async def _destroy(settings: Settings, group: str) -> int:
    """Drop ``group`` from every feed; how many feeds it was on."""
    from eventstore.redis_client import redis_client

    dropped = 0
    async with redis_client(settings.store.redis_url) as client:
        for feed in settings.layout.feed_keys():
            if await client.exists(feed):
                dropped += int(await client.xgroup_destroy(feed, group))
    return dropped
