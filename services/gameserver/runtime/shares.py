"""Several instances of each service on one machine (``renature serve all --instances N``).

Each rules instance and each projector reads its share of the partitions (``K/N``,
`eventstore.keys.parse_partitions`), so that a game's commands and events always meet the
same instance and its warm cache (instances that all read every stream split every batch N
ways and fold what the others appended: docs/services.md, "Command partitions"); there are
enough command streams for each rules instance to have its own, and the gateway runs N
workers. The clock and retention services stay single.
"""

from __future__ import annotations

from collections.abc import Mapping

from eventstore.keys import command_streams_for

SHARED = {
    "rules": "RENATURE_RULES_PARTITIONS",
    "models": "RENATURE_PROJECTOR_PARTITIONS",
    "board": "RENATURE_PROJECTOR_PARTITIONS",
    "score": "RENATURE_PROJECTOR_PARTITIONS",
}
"""The services that read partitions, and the variable that names an instance's share."""


class SharesError(ValueError):
    """The instances cannot be given their shares (one set by hand, too few streams)."""


MOST = 16
"""At most one instance a game partition (`eventstore.keys.DEFAULT_PARTITIONS`)."""


def shared_environment(instances: int, env: Mapping[str, str]) -> dict[str, str]:
    """What every process of a stack of ``instances`` instances gets beside ``env`` (the
    environment it was started in): the command streams, unless ``env`` names enough of them,
    and the gateway's workers, unless ``env`` names their number. `SharesError` says what
    stands in the way (a share set by hand, too few streams)."""
    if not 1 <= instances <= MOST:
        raise SharesError(f"--instances takes 1 to {MOST} (one a game partition), not {instances}")
    if instances == 1:
        return {}
    for name in sorted(set(SHARED.values())):
        if env.get(name, "all").strip().lower() not in ("", "all", "*"):
            raise SharesError(f"--instances gives each instance its share itself: unset {name}")
    added = {"RENATURE_GATEWAY_WORKERS": env.get("RENATURE_GATEWAY_WORKERS", str(instances))}
    given = env.get("RENATURE_COMMAND_PARTITIONS", "").strip()
    streams = int(given) if given.isdigit() else command_streams_for(instances)
    if streams < instances:
        raise SharesError(
            f"RENATURE_COMMAND_PARTITIONS={given} gives {instances} rules instances fewer streams"
            f" than instances: unset it (then {command_streams_for(instances)}) or raise it"
        )
    return {**added, "RENATURE_COMMAND_PARTITIONS": str(streams)}


def instance_environments(service: str, instances: int) -> list[dict[str, str]]:
    """One environment addition per process of ``service`` in a stack of ``instances``
    instances: each its share where the service reads partitions; one process otherwise (the
    gateway's workers are one process's children)."""
    if service not in SHARED or instances == 1:
        return [{}]
    return [{SHARED[service]: f"{k}/{instances}"} for k in range(instances)]
