"""The one state cache of the services: folds, keeps the newest entry, evicts the least
recently used game, and tells a stream that continues it from one that is behind or differs."""

from __future__ import annotations

import msgspec

from eventstore import StoredEvent
from gameplatform import get_game
from gameserver.runtime.state_cache import (
    Cached,
    Lineage,
    StateCache,
    cached_state,
    evolve_state,
    fold,
    fold_states,
    game_named_in,
    game_reading,
)
from renature import commands as c
from renature import events as e
from renature.rules import evolve, execute
from renature.state import GameState

RENATURE = get_game("renature")


def created(game_id: str = "g1") -> list[e.Event]:
    events, _ = execute(None, c.CreateGame(game_id=game_id, players=2, seed="s"))
    joined, _ = execute(replay(events), c.JoinGame(0, "Ada"))
    return [*events, *joined]


def replay(events: list[e.Event]) -> GameState:
    state = None
    for event in events:
        state = evolve(state, event)
    assert state is not None
    return state


def test_a_fold_keeps_the_value_the_version_and_the_hash_of_the_last_event() -> None:
    events = created()
    entry = fold(None, events, evolve_state, RENATURE)
    assert entry is not None
    assert entry.value == replay(events)
    assert entry.version == events[-1].version
    assert entry.last_hash == events[-1].hash != ""
    assert entry == cached_state(entry.value)


def test_folding_nothing_leaves_the_entry_as_it_was() -> None:
    assert fold(None, [], evolve_state, RENATURE) is None
    entry = fold(None, created(), evolve_state, RENATURE)
    assert fold(entry, [], evolve_state, RENATURE) is entry


def test_stored_events_fold_like_decoded_ones_and_in_steps() -> None:
    events = created()
    stored = [StoredEvent(event.version, e.encode(event)) for event in events]
    whole = fold_states(None, stored)
    stepped = fold_states(fold_states(None, stored[:1]), stored[1:])
    assert whole == stepped == fold(None, events, evolve_state, RENATURE)


def test_the_cache_keeps_the_newest_entry_of_a_game() -> None:
    cache: StateCache[str] = StateCache(10)
    cache.remember("g", Cached("new", 5, "h5"))
    cache.remember("g", Cached("old", 3, "h3"))
    assert cache.value("g") == "new"
    assert cache.version("g") == 5
    assert cache.version("other") == 0
    assert cache.value("other") is None


def test_the_least_recently_used_game_is_dropped_first() -> None:
    cache: StateCache[int] = StateCache(2)
    cache.remember("a", Cached(1, 1, ""))
    cache.remember("b", Cached(1, 1, ""))
    cache.remember("a", Cached(2, 2, ""))  # a is used again: b is now the oldest
    cache.remember("c", Cached(1, 1, ""))
    assert "a" in cache
    assert "c" in cache
    assert "b" not in cache
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_the_lineage_tells_a_continued_stream_from_one_behind_or_different() -> None:
    events = created()
    entry = fold(None, events[:1], evolve_state, RENATURE)
    assert entry is not None
    assert entry.lineage(1) is Lineage.CURRENT
    assert entry.lineage(0) is Lineage.BEHIND
    assert entry.lineage(len(events)) is Lineage.AHEAD
    assert entry.lineage(len(events), events[1]) is Lineage.AHEAD
    forged = msgspec.structs.replace(events[1], prev_hash="0" * 64)
    assert entry.lineage(len(events), forged) is Lineage.DIVERGED
    skipped = msgspec.structs.replace(events[1], version=3)
    assert entry.lineage(len(events), skipped) is Lineage.DIVERGED


def test_a_stream_is_folded_by_the_game_its_first_event_names() -> None:
    """The meta of a stream's first batch names its game (``{"game": "renaissance"}``); a
    stream whose first batch names none is Renature's, as every stream written before."""
    renaissance = get_game("renaissance")
    events, state, _ = renaissance.simulate("named", ["random", "random"])
    meta = msgspec.json.encode({"command_id": "create", "game": "renaissance"})
    stored = [
        StoredEvent(event.version, renaissance.encode_event(event), meta if n == 0 else None)
        for n, event in enumerate(events)
    ]
    entry = fold_states(None, stored)
    assert entry is not None
    assert (entry.game, entry.value, entry.version) == ("renaissance", state, state.version)
    assert game_named_in(None) == game_named_in(b'{"command_id": "x"}') == "renature"


def test_a_creation_read_without_its_meta_is_read_by_exactly_one_game() -> None:
    """A projector's feed entry carries the event, not its meta: the first event of a stream
    is read by exactly one hosted game's decoder, the game its meta names."""
    for name in ("renature", "renaissance"):
        game = get_game(name)
        events, _, _ = game.simulate("sniffed", ["random", "random"])
        found = game_reading(game.encode_event(events[0]))
        assert found is not None
        assert found.name == name
    assert game_reading(b'{"type": "GameCreated"}') is None
    assert game_reading(b"not json") is None
