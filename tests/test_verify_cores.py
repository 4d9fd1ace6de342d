"""Which cores the verifier times on: one set aside per slot where the machine can spare it, shared (and
said so) where it cannot, a listed setting obeyed, cores other verifiers hold left alone, and this
process moved off the timing cores only while a pool needs it."""

from __future__ import annotations

import os

import pytest

from engine.sandbox.affinity import (
    CoreClaims,
    format_cpu_list,
    keep_process_on,
    parse_cpu_list,
    release_process,
    usable_cpus,
)
from engine.settings import Settings
from engine.verify.cores import CoreReservation, plan_cores


def smt_pairs(cores: int) -> dict[int, frozenset[int]]:
    """`cores` logical CPUs, CPU i and i + cores/2 sharing a physical core (the usual Linux numbering)."""
    half = cores // 2
    return {cpu: frozenset({cpu % half, cpu % half + half}) for cpu in range(cores)}


@pytest.mark.parametrize("cores", [1, 2])
def test_one_or_two_cores_are_shared_and_nothing_is_pinned(cores):
    plan = plan_cores(range(cores), slots=1)
    assert not plan.pinned and not plan.slots[0].exclusive and not plan.claimed
    assert plan.slots[0].timing == plan.others == tuple(range(cores))
    assert f"{cores} core" in plan.reason and "too few" in plan.reason


def test_four_cores_set_the_highest_aside_and_keep_three_for_everything_else():
    plan = plan_cores(range(4), slots=1)
    assert plan.slots[0].timing == (3,) and plan.slots[0].exclusive and plan.pinned
    assert plan.others == (0, 1, 2) and plan.claimed == (3,)


def test_three_cores_are_the_fewest_that_get_a_timing_core():
    plan = plan_cores(range(3), slots=1)
    assert plan.slots[0].timing == (2,) and plan.others == (0, 1)


def test_a_timing_cores_hardware_sibling_is_left_idle():
    plan = plan_cores(range(16), slots=1, siblings=smt_pairs(16))
    timing = plan.slots[0].timing
    assert timing == (7,) and 15 not in plan.others and 15 in plan.claimed
    assert len(plan.others) == 14


def test_sixteen_cores_and_eight_gpus_give_each_slot_a_core_of_its_own():
    plan = plan_cores(range(16), slots=8)
    timing = [slot.timing for slot in plan.slots]
    assert all(len(cores) == 1 for cores in timing) and len({c for cores in timing for c in cores}) == 8
    assert all(slot.exclusive for slot in plan.slots)
    assert not set(plan.others) & {c for cores in timing for c in cores} and len(plan.others) == 8


def test_more_slots_than_spare_cores_share_the_timing_cores_and_say_so():
    plan = plan_cores(range(4), slots=4)
    assert {slot.timing for slot in plan.slots} == {(3,), (2,)}
    assert not any(slot.exclusive for slot in plan.slots) and plan.others == (0, 1)


def test_a_listed_core_is_used_even_on_two_cores():
    plan = plan_cores([0, 1], slots=1, setting="1")
    assert plan.slots[0].timing == (1,) and plan.slots[0].exclusive and plan.others == (0,)
    assert "timing_cores=1" in plan.reason


def test_a_listed_core_this_process_may_not_use_is_ignored_with_a_reason():
    plan = plan_cores([0, 1], slots=1, setting="5")
    assert not plan.pinned and "names no core" in plan.reason


def test_a_list_of_every_core_leaves_nothing_for_the_rest_so_nothing_is_pinned():
    plan = plan_cores([0, 1], slots=1, setting="0-1")
    assert not plan.pinned and "no core for everything else" in plan.reason


def test_off_pins_nothing_even_on_many_cores():
    plan = plan_cores(range(64), slots=1, setting="off")
    assert not plan.pinned and plan.slots[0].timing == tuple(range(64))


def test_cores_another_verifier_times_on_are_left_alone():
    plan = plan_cores(range(8), slots=1, taken=[7])
    assert plan.slots[0].timing == (6,) and 7 not in plan.others and 7 not in plan.claimed


def test_too_few_free_cores_share_the_rest_and_stay_off_another_verifiers_core():
    plan = plan_cores(range(3), slots=1, taken=[2])
    assert plan.slots[0].timing == plan.others == (0, 1) and not plan.slots[0].exclusive
    assert "timing for another verifier" in plan.reason and not plan.claimed


def test_a_listed_core_another_verifier_holds_is_not_exclusive():
    plan = plan_cores(range(8), slots=1, setting="7", taken=[7])
    assert plan.slots[0].timing == (7,) and not plan.slots[0].exclusive


def test_core_lists_read_and_write_the_kernels_format():
    assert parse_cpu_list("0-2, 5,7-8") == (0, 1, 2, 5, 7, 8)
    assert format_cpu_list([8, 0, 1, 2, 5, 7]) == "0-2,5,7-8"
    with pytest.raises(ValueError):
        parse_cpu_list("3-1")


def test_the_setting_takes_auto_off_or_a_core_list(monkeypatch):
    for value in ("auto", "off", "3", "6-7", "0-1,4"):
        monkeypatch.setenv("REFINERY_TIMING_CORES", value)
        assert Settings().timing_cores == value
    monkeypatch.setenv("REFINERY_TIMING_CORES", "fast")
    with pytest.raises(ValueError):
        Settings()


def test_a_claimed_core_cannot_be_claimed_by_another_verifier_until_released(tmp_path):
    first, second = CoreClaims(tmp_path), CoreClaims(tmp_path)
    assert first.claim(3)
    assert not second.claim(3) and second.taken_elsewhere([2, 3]) == {3}
    first.release()
    assert second.claim(3)
    second.release()


needs_two_cores = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable cores")


@needs_two_cores
def test_this_process_leaves_the_timing_cores_while_a_pool_holds_them_and_gets_them_back():
    before = os.sched_getaffinity(0)
    keep = min(before)
    token = keep_process_on([keep])
    try:
        tids = os.listdir(f"/proc/{os.getpid()}/task")
        assert all(os.sched_getaffinity(int(tid)) == {keep} for tid in tids)
        assert usable_cpus() == frozenset(before)  # the next pool still plans from every core
    finally:
        release_process(token)
    assert os.sched_getaffinity(0) == before


@needs_two_cores
def test_a_reservation_claims_its_timing_core_and_releases_it(tmp_path):
    last = max(os.sched_getaffinity(0))
    reservation = CoreReservation(1, str(last), CoreClaims(tmp_path))
    try:
        assert reservation.slot(0).timing == (last,) and last not in os.sched_getaffinity(0)
        assert not CoreClaims(tmp_path).claim(last)
    finally:
        reservation.release()
    assert last in os.sched_getaffinity(0) and CoreClaims(tmp_path).claim(last)
