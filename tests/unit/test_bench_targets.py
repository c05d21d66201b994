"""The bench's scale-out target lines: judged only on the target's own topology (eight
instances of each service), any other topology's figure shown as not judged."""

from __future__ import annotations

from bench import targets


def test_the_cluster_share_is_judged_with_eight_instances() -> None:
    assert targets.cluster_target(12_000, 16_000, 8) == (
        "--target cluster-vs-single-redis >= 0.8x: MISSED (0.75x: 12,000/s vs 16,000/s "
        "with 8 instances)"
    )
    assert targets.cluster_target(13_000, 16_000, 8).endswith(
        ": met (0.81x: 13,000/s vs 16,000/s with 8 instances)"
    )


def test_the_cluster_share_of_another_topology_is_shown_not_judged() -> None:
    text = targets.cluster_target(563, 1_254, 4)
    assert text == (
        "--target cluster-vs-single-redis >= 0.8x: not judged (0.45x: 563/s vs 1,254/s with 4 "
        "instances; judged with 8 instances of each service)"
    )
    assert "MISSED" not in text
    assert ": met" not in text


def test_without_both_figures_the_cluster_share_is_not_measured() -> None:
    assert ": not measured (run --topology all=8" in targets.cluster_target(None, 1_254)


def test_the_scaling_target_is_judged_on_one_redis_with_eight_instances_only() -> None:
    assert ": MISSED (" in targets.scaling_target(8, False, 9_000, 0.5)
    assert ": met (" in targets.scaling_target(8, False, 16_000, 0.85)
    assert ": not judged (" in targets.scaling_target(8, True, 16_000, 0.85)
    assert ": not judged (" in targets.scaling_target(4, False, 500, 0.1)
