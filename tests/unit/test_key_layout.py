"""Every per-game key comes from `KeyLayout`, in the game's hash slot, under the prefix."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from eventstore import DEFAULT_COMMAND_PARTITIONS, CommandPartitions, KeyLayout
from eventstore.keys import check_game_id, format_partitions, parse_partitions
from gameserver.runtime.settings import Settings


def test_every_key_of_a_game_carries_the_prefix_and_the_games_partition_tag() -> None:
    layout = KeyLayout("alt", 16)
    base = layout.base(layout.partition_of("game-1"))  # game-1 is in partition 12
    assert base == "alt:{p12}"
    assert layout.game_key("game-1") == f"{base}:game:game-1"
    assert layout.seed_key("game-1") == f"{base}:seed:game-1"
    assert layout.seats_key("game-1") == f"{base}:seats:game-1"
    assert layout.created_key("game-1") == f"{base}:created:game-1"
    assert layout.model_key("board", "game-1") == f"{base}:board:game-1"


def test_the_command_streams_and_the_model_pattern_honour_the_prefix() -> None:
    assert KeyLayout().command_stream(7) == "rn:{p07}:commands"
    assert KeyLayout("alt").command_stream(0) == "alt:{p00}:commands"
    assert KeyLayout("alt").model_pattern("score") == "alt:{p*}:score:*"


def test_with_a_stream_per_partition_a_games_commands_go_to_its_own_hash_slot() -> None:
    commands = CommandPartitions(KeyLayout(), 16)
    assert CommandPartitions().count == DEFAULT_COMMAND_PARTITIONS == 4
    for game in ("game-1", "g", "lobby-42"):
        stream = commands.stream_of(game)
        assert stream == f"rn:{{p{commands.layout.partition_of(game):02d}}}:commands"
        assert key_slot(stream.encode()) == key_slot(commands.layout.game_key(game).encode())


def test_with_fewer_command_streams_stream_k_carries_the_partitions_congruent_to_k() -> None:
    layout = KeyLayout("rn", 16)
    commands = CommandPartitions(layout, 4)
    assert commands.streams() == [f"rn:{{p0{k}}}:commands" for k in range(4)]
    for n in range(200):
        game = f"game-{n}"
        assert commands.partition_of(game) == layout.partition_of(game) % 4
    assert commands.stream_of("game-1") == "rn:{p00}:commands"  # partition 12, 12 % 4 == 0


def test_the_command_streams_spread_over_as_many_slots_as_there_are_streams() -> None:
    assert len({key_slot(s.encode()) for s in CommandPartitions(count=16).streams()}) == 16
    assert len({key_slot(s.encode()) for s in CommandPartitions().streams()}) == 4
    assert len({key_slot(s.encode()) for s in CommandPartitions(count=2).streams()}) == 2


@pytest.mark.parametrize("bad", ["", "a:b", "a{b", "a}b", "a b", "a\tb", "a\rb", "a\nb", "x\n"])
def test_a_game_id_with_a_colon_a_brace_or_whitespace_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid game id"):
        check_game_id(bad)
    assert check_game_id("game-1_x.y~z") == "game-1_x.y~z"


def test_a_game_id_the_store_refuses_still_has_a_command_stream() -> None:
    # so the rules service gets it and answers invalid_command
    assert CommandPartitions().stream_of("bad id:{x}").endswith(":commands")
    with pytest.raises(ValueError, match="invalid game id"):
        KeyLayout().partition_of("bad id:{x}")


@pytest.mark.parametrize("count", [0, 3, 5, 17, 32])
def test_the_command_stream_count_must_divide_the_partition_count(count: int) -> None:
    with pytest.raises(ValueError, match="must divide the 16 game partitions"):
        CommandPartitions(KeyLayout(), count)


@pytest.mark.parametrize(
    ("spec", "count", "expected"),
    [
        ("all", 16, tuple(range(16))),
        ("all", 4, (0, 1, 2, 3)),
        ("", 4, (0, 1, 2, 3)),
        ("0-3,8", 16, (0, 1, 2, 3, 8)),
        (" 8, 0-3 ,2 ", 16, (0, 1, 2, 3, 8)),
        ("15", 16, (15,)),
        ("1-1", 2, (1,)),
    ],
)
def test_the_partitions_a_rules_instance_reads_are_all_or_numbers_and_ranges(
    spec: str, count: int, expected: tuple[int, ...]
) -> None:
    assert CommandPartitions(KeyLayout(), count).parse(spec) == expected


@pytest.mark.parametrize("spec", ["16", "0-16", "3-1", "a", "1,,2", "-1", "0-3,x"])
def test_partitions_out_of_range_or_malformed_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="command partition"):
        CommandPartitions().parse(spec)


def test_the_settings_read_the_command_partitions_from_the_environment() -> None:
    env = {"RENATURE_COMMAND_PARTITIONS": "4", "RENATURE_RULES_PARTITIONS": "0-1"}
    settings = Settings.from_env(env)
    assert settings.commands == CommandPartitions(KeyLayout(), 4)
    assert settings.commands.parse(settings.consumers.rules_partitions) == (0, 1)
    defaults = Settings.from_env({})
    assert (defaults.store.command_partitions, defaults.consumers.rules_partitions) == (4, "all")
    assert defaults.commands == CommandPartitions()  # the settings' default is the layout's


def test_the_rules_service_logs_its_partitions_as_ranges() -> None:
    assert format_partitions((0, 1, 2, 3, 8)) == "0-3,8"
    assert format_partitions(range(16)) == "0-15"
    assert format_partitions((5,)) == "5"


def test_a_projector_names_its_feeds_as_a_rules_instance_names_its_streams() -> None:
    assert parse_partitions("all", 16) == tuple(range(16))
    assert parse_partitions("0-7", 16) == tuple(range(8))
    assert parse_partitions("8-11,15", 16) == (8, 9, 10, 11, 15)
    with pytest.raises(ValueError, match=r"partition 16 out of range 0\.\.15"):
        parse_partitions("12-16", 16)


def test_instance_k_of_n_takes_every_nth_partition_and_n_shares_cover_all_disjointly() -> None:
    assert parse_partitions("3/8", 16) == (3, 11)
    assert parse_partitions("0/3", 16) == (0, 3, 6, 9, 12, 15)
    for n in (1, 2, 3, 5, 8, 16):
        shares = [parse_partitions(f"{k}/{n}", 16) for k in range(n)]
        assert sorted(p for share in shares for p in share) == list(range(16))
    assert CommandPartitions(count=16).parse(" 1/4 ") == (1, 5, 9, 13)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("8/8", r"instance K of N counts 0\.\.N-1"),
        ("-1/8", r"instance K of N counts 0\.\.N-1"),
        ("a/8", r"want 'K/N'"),
        ("1/", r"want 'K/N'"),
        ("5/8", r"8 instances cannot share 4 command partitions"),
    ],
)
def test_a_share_that_names_no_instance_or_would_leave_one_idle_is_refused(
    spec: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse_partitions(spec, 4, "command partition")
