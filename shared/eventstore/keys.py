"""Key layout of the event store.

Every key of one game carries the game's partition as a Redis Cluster hash tag (``{p07}``), so
the append script, which touches the game stream, the outcome key, the partition feed and the
games set at once, only ever touches keys of one hash slot. The prefix must therefore not
contain braces: Redis hashes the *first* ``{...}`` of a key, and a braced prefix would put every
key of the store into one slot.

The partition count is part of the layout: changing it moves games to other partitions (other
keys, other feeds), so it needs a migration, not a configuration change.

Commands travel on `CommandPartitions`: a few command streams, each tagged like the game
partition of its number, and the games of partition ``p`` sent to stream ``p % count``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

DEFAULT_PREFIX = "rn"
DEFAULT_PARTITIONS = 16
DEFAULT_COMMAND_PARTITIONS = 4
"""Four command streams (partitions p with p % 4 == k on stream k): on two cores a rules service
answered as many commands with 4 as with 1 and about a third fewer with 16 (its batches split
16 ways); 4 slots still reach every master of a 3-master cluster. Deployments on more shards
choose 16, where each command stream lives in its games' slot (docs/services.md)."""

COMMAND_SENDERS = ("", "clock")
"""The senders with command streams of their own: the gateway (the plain streams) and the
clock service (`KeyLayout.command_stream`)."""


def partition_of(game_id: str, partitions: int) -> int:
    """The partition of a game: CRC-32 of its UTF-8 id modulo the partition count.

    CRC-32 rather than ``hash()`` because the value must be the same in every process and on
    every run (``hash()`` of a string is salted per process).
    """
    return zlib.crc32(game_id.encode("utf-8")) % partitions


@dataclass(frozen=True, slots=True)
class KeyLayout:
    """Builds every key of the store from a prefix and a partition count."""

    prefix: str = DEFAULT_PREFIX
    partitions: int = DEFAULT_PARTITIONS

    def __post_init__(self) -> None:
        if not self.prefix or "{" in self.prefix or "}" in self.prefix:
            raise ValueError(f"key prefix must be non-empty and brace-free, got {self.prefix!r}")
        if self.partitions < 1:
            raise ValueError(f"partition count must be at least 1, got {self.partitions}")

    def partition_of(self, game_id: str) -> int:
        """The partition that holds ``game_id`` (stable across processes)."""
        return partition_of(check_game_id(game_id), self.partitions)

    def tag(self, partition: int) -> str:
        """The hash tag of a partition, e.g. ``{p07}``."""
        if not 0 <= partition < self.partitions:
            raise ValueError(f"partition {partition} out of range 0..{self.partitions - 1}")
        return f"{{p{partition:02d}}}"

    def base(self, partition: int) -> str:
        """The common start of every key of a partition, e.g. ``rn:{p07}``."""
        return f"{self.prefix}:{self.tag(partition)}"

    def game_key(self, game_id: str) -> str:
        """The stream holding the game's events (entry id ``0-<version>``)."""
        return f"{self.base(self.partition_of(game_id))}:game:{game_id}"

    def command_key(self, game_id: str, command_id: str) -> str:
        """The key holding the outcome of one command on one game (idempotency)."""
        if not command_id:
            raise ValueError("command id must be non-empty")
        return f"{self.base(self.partition_of(game_id))}:cmd:{game_id}:{command_id}"

    def game_scoped_key(self, kind: str, game_id: str) -> str:
        """``<prefix>:{pNN}:<kind>:<game_id>``: a key of one game in the game's hash slot
        (``seed``, ``seats``, ``created``, a read model's name, ...)."""
        return f"{self.base(self.partition_of(game_id))}:{kind}:{game_id}"

    def seed_key(self, game_id: str) -> str:
        """The seed vault's secret of a game (read by the rules service only)."""
        return self.game_scoped_key("seed", game_id)

    def seal_key(self, game_id: str) -> str:
        """The latest signed seal of a game (written by the rules service)."""
        return self.game_scoped_key("seal", game_id)

    def signing_keys_key(self) -> str:
        """The hash ``key id -> public key`` of every key the rules service signed with."""
        return f"{self.prefix}:signing-keys"

    def seats_key(self, game_id: str) -> str:
        """The hash ``seat number -> token digest`` of a game (the gateway's seat tokens)."""
        return self.game_scoped_key("seats", game_id)

    def created_key(self, game_id: str) -> str:
        """The hash of facts the gateway records about a game it created (seed origin)."""
        return self.game_scoped_key("created", game_id)

    def model_key(self, name: str, game_id: str) -> str:
        """The read model ``name`` (``board``, ``score``) of a game: a hash {version, model}."""
        return self.game_scoped_key(name, game_id)

    def model_pattern(self, name: str) -> str:
        """A ``SCAN`` pattern matching the read model ``name`` of every game."""
        return f"{self.prefix}:{{p*}}:{name}:*"

    def command_stream(self, partition: int, sender: str = "") -> str:
        """The command stream of command partition ``partition``, e.g. ``rn:{p07}:commands``:
        tagged like the game partition of the same number (see `CommandPartitions`). A
        service other than the gateway sends on a stream of its own, ``rn:{p07}:commands:clock``
        (``sender``): the ACL lets each user write only its own streams, so the stream an
        envelope came from tells the rules service who sent it."""
        return f"{self.base(partition)}:commands" + (f":{sender}" if sender else "")

    def chosen_seed_key(self, game_id: str) -> str:
        """A chosen seed staged by the gateway for a game not yet created (write only for it;
        the rules service reads it once, at the creation, into the seed vault)."""
        return self.game_scoped_key("chosen", game_id)

    def feed_key(self, partition: int) -> str:
        """The partition feed: one entry per event of every game of the partition."""
        return f"{self.base(partition)}:feed"

    def feed_keys(self) -> list[str]:
        """Every partition's feed, in partition order."""
        return [self.feed_key(partition) for partition in range(self.partitions)]

    def games_key(self, partition: int) -> str:
        """The set of the ids of the games of a partition."""
        return f"{self.base(partition)}:games"


@dataclass(frozen=True, slots=True)
class CommandPartitions:
    """Which command stream carries the commands of which game.

    There are ``count`` command streams, ``count`` a divisor of the game partition count; the
    games of partition ``p`` go to stream ``p % count`` (``rn:{pKK}:commands`` for ``k = p %
    count``): stream ``k`` lives in the slot of partition ``k`` and carries partitions ``k,
    k + count, k + 2 count, ...``. With as many streams as partitions, a game's commands share
    its hash slot. Senders and rules services must agree on
    ``count``: changing it while commands are queued strands them in the old streams until
    their senders time out and resend (with the same command id, which is safe).
    """

    layout: KeyLayout = KeyLayout()
    count: int = DEFAULT_COMMAND_PARTITIONS
    sender: str = ""
    """Whose streams: the gateway's (``""``) or another sender's (``clock``)."""

    def __post_init__(self) -> None:
        partitions = self.layout.partitions
        if not 1 <= self.count <= partitions or partitions % self.count:
            raise ValueError(
                f"command partitions must divide the {partitions} game partitions, got {self.count}"
            )

    def partition_of(self, game_id: str) -> int:
        """The command partition of a game. Any string has one, a game id the store would
        refuse included, so that the rules service answers it (``invalid_command``)."""
        return partition_of(game_id, self.layout.partitions) % self.count

    def stream_of(self, game_id: str) -> str:
        """The command stream that carries the commands of ``game_id``."""
        return self.layout.command_stream(self.partition_of(game_id), self.sender)

    def sent_by(self, sender: str) -> CommandPartitions:
        """The same partitions, on the streams of ``sender`` (`KeyLayout.command_stream`)."""
        return CommandPartitions(self.layout, self.count, sender)

    def streams(self, partitions: Iterable[int] | None = None) -> list[str]:
        """The streams of ``partitions`` (default: every command partition), in order."""
        chosen = range(self.count) if partitions is None else sorted(set(partitions))
        return [self.layout.command_stream(self.check(p), self.sender) for p in chosen]

    def check(self, partition: int) -> int:
        if not 0 <= partition < self.count:
            raise ValueError(f"command partition {partition} out of range 0..{self.count - 1}")
        return partition

    def parse(self, spec: str) -> tuple[int, ...]:
        """The command partitions named by ``spec`` (`parse_partitions`): the set a rules
        instance consumes."""
        return parse_partitions(spec, self.count, "command partition")


def command_streams_for(instances: int) -> int:
    """Command streams for ``instances`` rules instances to share out (``K/N`` each): the
    default, or one per instance (the next power of two, a divisor of the 16 game partitions).
    More streams than instances would only split each instance's batches."""
    streams = DEFAULT_COMMAND_PARTITIONS
    while streams < instances:
        streams *= 2
    return streams


def parse_partitions(spec: str, count: int, what: str = "partition") -> tuple[int, ...]:
    """The partitions of ``0..count-1`` named by ``spec``: ``all``, a list of numbers and
    ranges, ``0-3,8`` (each one in range, at least one), or a share, ``K/N``: instance K of N
    (from 0), which takes the partitions ``p`` with ``p % N == K``, so that N instances started
    with ``0/N`` .. ``N-1/N`` read disjoint sets that together cover every partition."""
    text = spec.strip().lower()
    if text in ("", "all", "*"):
        return tuple(range(count))
    if "/" in text:
        return _share(spec, count, what)
    chosen: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last if dash else first)
        except ValueError:
            raise ValueError(f"bad {what}s {spec!r}: want 'all' or '0-3,8'") from None
        if low > high:
            raise ValueError(f"bad {what} range {part.strip()!r} in {spec!r}")
        for partition in range(low, high + 1):
            if not 0 <= partition < count:
                raise ValueError(f"{what} {partition} out of range 0..{count - 1}")
            chosen.add(partition)
    return tuple(sorted(chosen))


def _share(spec: str, count: int, what: str) -> tuple[int, ...]:
    """``K/N`` of `parse_partitions`: the partitions of instance K of N."""
    instance, _, instances = spec.strip().partition("/")
    try:
        k, n = int(instance), int(instances)
    except ValueError:
        raise ValueError(f"bad {what} share {spec!r}: want 'K/N', instance K of N") from None
    if not 0 <= k < n:
        raise ValueError(f"bad {what} share {spec!r}: instance K of N counts 0..N-1")
    if n > count:
        raise ValueError(
            f"{what} share {spec!r}: {n} instances cannot share {count} {what}s"
            f" (some would read none): there must be at least {n}"
        )
    return tuple(range(k, count, n))


def format_partitions(partitions: Sequence[int]) -> str:
    """``0-3,8`` for (0, 1, 2, 3, 8): the inverse of `parse_partitions`, for log lines."""
    runs: list[list[int]] = []
    for partition in sorted(partitions):
        if runs and runs[-1][1] == partition - 1:
            runs[-1][1] = partition
        else:
            runs.append([partition, partition])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


_NOT_IN_GAME_IDS = re.compile("[:{} \t\r\n]")


def check_game_id(game_id: str) -> str:
    """Reject game ids that would make keys ambiguous.

    A colon would let ``cmd:<game>:<command>`` of two different (game, command) pairs collide;
    whitespace and braces are rejected to keep keys readable in ``redis-cli`` and free of
    accidental hash tags.
    """
    if not game_id or _NOT_IN_GAME_IDS.search(game_id):
        raise ValueError(f"invalid game id {game_id!r}: needs no ':', braces or whitespace")
    return game_id
