"""The bench's topologies: several instances of a consumer each read their share of the
partitions (``K/N``), on as many command streams as it takes for each rules instance to have
its own, unless ``shares=off``."""

from __future__ import annotations

import pytest
from bench.processes import Topology

from eventstore import CommandPartitions
from eventstore.keys import parse_partitions


def test_eight_instances_each_read_their_own_command_stream_and_two_feeds() -> None:
    topology = Topology.parse("all=8,load=16")
    assert topology.command_streams == 8
    rules = [topology.share_env("rules", k)["RENATURE_RULES_PARTITIONS"] for k in range(8)]
    feeds = [topology.share_env("models", k)["RENATURE_PROJECTOR_PARTITIONS"] for k in range(8)]
    streams = CommandPartitions(count=topology.command_streams)
    assert [streams.parse(spec) for spec in rules] == [(k,) for k in range(8)]
    assert [parse_partitions(spec, 16) for spec in feeds] == [(k, k + 8) for k in range(8)]
    assert topology.share_env("gateway", 3) == {}  # the gateway consumes no partition
    assert "each instance its share of the partitions (8 command streams)" in topology.describe()


@pytest.mark.parametrize(("rules", "streams"), [(1, 4), (2, 4), (3, 4), (5, 8), (16, 16)])
def test_the_command_streams_are_the_default_or_one_per_rules_instance(
    rules: int, streams: int
) -> None:
    assert Topology(rules=rules).command_streams == streams
    assert 16 % streams == 0  # a divisor of the game partitions, as the store requires


def test_one_instance_or_shares_off_reads_everything_as_before() -> None:
    assert Topology().share_env("rules", 0) == {}
    shared = Topology.parse("all=4,shares=off")
    assert shared.share_env("rules", 1) == shared.share_env("models", 1) == {}
    assert "every instance reading every stream" in shared.describe()
    with pytest.raises(ValueError, match="shares=on or shares=off"):
        Topology.parse("all=2,shares=maybe")
