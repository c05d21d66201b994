"""``serve all --instances N``: what each process is told (`gameserver.runtime.shares`)."""

from __future__ import annotations

import pytest

from eventstore import CommandPartitions
from eventstore.keys import parse_partitions
from gameserver.runtime.shares import SharesError, instance_environments, shared_environment


def test_one_instance_changes_nothing() -> None:
    assert shared_environment(1, {}) == {}
    assert instance_environments("rules", 1) == [{}]


def test_eight_instances_get_a_stream_each_two_feeds_each_and_eight_gateway_workers() -> None:
    added = shared_environment(8, {})
    assert added == {"RENATURE_COMMAND_PARTITIONS": "8", "RENATURE_GATEWAY_WORKERS": "8"}
    rules = instance_environments("rules", 8)
    streams = CommandPartitions(count=8)
    assert [streams.parse(env["RENATURE_RULES_PARTITIONS"]) for env in rules] == [
        (k,) for k in range(8)
    ]
    models = instance_environments("models", 8)
    feeds = [parse_partitions(env["RENATURE_PROJECTOR_PARTITIONS"], 16) for env in models]
    assert feeds == [(k, k + 8) for k in range(8)]
    assert instance_environments("gateway", 8) == [{}]  # one process, its workers its children
    assert instance_environments("clock", 8) == [{}]


def test_what_the_environment_names_is_kept_where_it_is_enough() -> None:
    env = {"RENATURE_COMMAND_PARTITIONS": "16", "RENATURE_GATEWAY_WORKERS": "3"}
    assert shared_environment(2, env) == env
    assert (
        shared_environment(3, {"RENATURE_RULES_PARTITIONS": "all"})["RENATURE_COMMAND_PARTITIONS"]
        == "4"
    )


@pytest.mark.parametrize(
    ("instances", "env", "message"),
    [
        (2, {"RENATURE_RULES_PARTITIONS": "0-1"}, "unset RENATURE_RULES_PARTITIONS"),
        (2, {"RENATURE_PROJECTOR_PARTITIONS": "1/2"}, "unset RENATURE_PROJECTOR_PARTITIONS"),
        (8, {"RENATURE_COMMAND_PARTITIONS": "4"}, "fewer streams than instances: unset it"),
        (17, {}, "1 to 16"),
        (0, {}, "1 to 16"),
    ],
)
def test_what_would_leave_an_instance_without_its_share_is_refused(
    instances: int, env: dict[str, str], message: str
) -> None:
    with pytest.raises(SharesError, match=message):
        shared_environment(instances, env)
