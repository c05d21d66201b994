"""Every per-game key comes from `KeyLayout`, in the game's hash slot, under the prefix."""

from __future__ import annotations

from renature_store import KeyLayout


def test_every_key_of_a_game_carries_the_prefix_and_the_games_partition_tag() -> None:
    layout = KeyLayout("alt", 16)
    base = layout.base(layout.partition_of("game-1"))  # game-1 is in partition 12
    assert base == "alt:{p12}"
    assert layout.game_key("game-1") == f"{base}:game:game-1"
    assert layout.seed_key("game-1") == f"{base}:seed:game-1"
    assert layout.seats_key("game-1") == f"{base}:seats:game-1"
    assert layout.created_key("game-1") == f"{base}:created:game-1"
    assert layout.model_key("board", "game-1") == f"{base}:board:game-1"


def test_the_command_stream_and_the_model_pattern_honour_the_prefix() -> None:
    assert KeyLayout().command_stream() == "rn:commands"
    assert KeyLayout("alt").command_stream() == "alt:commands"
    assert KeyLayout("alt").model_pattern("score") == "alt:{p*}:score:*"
