"""Which cores the verifier times on, and which everything else of ours gets.

A CPU candidate's time is the time its core gave it, and a GPU candidate's launches wait on its host
thread: a dashboard, a compile or the next runner warming up on the same core shows up in the numbers
(on a 2-core machine the same C code measured 2.34× one time and 1.61× the next). So where the machine
has cores to spare, each slot (one judge and the runner of its current job) gets a core of its own,
its hardware-thread siblings are left idle, and this process with everything it starts (pool threads,
compiles, runners warming up) stays on the rest. Where it has too few, nothing is pinned (pinning both
sides onto one core would starve one of them) and every result says its cores were shared.

`plan_cores` is the decision, a pure function of the usable cores, the number of slots, the setting
(`timing_cores`: "auto", "off" or a list such as "3" or "6-7") and cores other verifiers on this
machine already time on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.sandbox.affinity import (
    CoreClaims,
    format_cpu_list,
    keep_process_on,
    parse_cpu_list,
    release_process,
    siblings,
    usable_cpus,
)

MIN_CORES = 3  # fewer usable cores than this: setting one aside would leave everything else one core
MIN_OTHERS = 2  # cores always left for everything else when choosing automatically
CLAIM_ATTEMPTS = 3  # another verifier starting at the same moment may take a core between plan and claim
log = logging.getLogger("refinery.verify")


@dataclass(frozen=True)
class SlotCores:
    """Where one slot's judge and its runner (while it serves a job) run."""

    timing: tuple[int, ...]
    exclusive: bool  # no other process of ours may run on these cores
    pinned: bool  # False: nothing is pinned; the slot runs wherever the machine puts it


@dataclass(frozen=True)
class CorePlan:
    slots: tuple[SlotCores, ...]
    others: tuple[int, ...]  # this process, its threads, compiles, warming runners
    claimed: tuple[int, ...]  # timing cores and their idle siblings: held against other verifiers
    reason: str  # the decision in words, for the record and the log

    @property
    def pinned(self) -> bool:
        return any(slot.pinned for slot in self.slots)


def _shared(available: list[int], slots: int, reason: str, free: list[int] | None = None) -> CorePlan:
    """Everything on the same cores: all of them, or, where other verifiers time on some, the rest
    (then that much is pinned, so as not to disturb their timing)."""
    if free and len(free) < len(available):
        rest = tuple(free)
        return CorePlan(tuple(SlotCores(rest, False, True) for _ in range(slots)), rest, (), reason)
    every = tuple(available)
    return CorePlan(tuple(SlotCores(every, False, False) for _ in range(slots)), every, (), reason)


def _physical(free: list[int], siblings: Mapping[int, frozenset[int]]) -> list[tuple[int, ...]]:
    """The free cores grouped by physical core, highest first (core 0 takes most interrupts)."""
    groups = {tuple(sorted(siblings.get(cpu, frozenset({cpu})) & set(free) | {cpu})) for cpu in free}
    return sorted(groups, key=lambda group: group[0], reverse=True)


def _choose(free: list[int], slots: int, siblings: Mapping[int, frozenset[int]]) -> tuple[list[int], list[int]]:
    """(timing cores, siblings left idle): one core per slot while at least MIN_OTHERS stay for the rest;
    a core's siblings are left idle where the rest can spare them, else they go to the rest."""
    timing: list[int] = []
    idle: list[int] = []
    for group in _physical(free, siblings):
        if len(timing) == slots:
            break
        left = len(free) - len(timing) - len(idle)
        if left - len(group) >= MIN_OTHERS:
            timing.append(group[0])
            idle += group[1:]
        elif left - 1 >= MIN_OTHERS:
            timing.append(group[0])
        else:
            break
    return timing, idle


def _per_slot(timing: list[int], slots: int) -> list[tuple[int, ...]]:
    if len(timing) >= slots:
        return [tuple(timing[i::slots]) for i in range(slots)]
    return [(timing[i % len(timing)],) for i in range(slots)]


def plan_cores(available: Iterable[int], slots: int, setting: str = "auto", taken: Iterable[int] = (),
               siblings: Mapping[int, frozenset[int]] | None = None) -> CorePlan:
    """Timing cores per slot and the cores for everything else, from the cores this process may use.

    `taken`: cores other verifiers on this machine time on (left out of an automatic choice; a listed
    core that is taken is used, but not as exclusive). `siblings`: each core's hardware threads.
    Raises ValueError for a setting that is neither "auto", "off" nor a core list.
    """
    available = sorted(set(available))
    slots = max(1, slots)
    siblings = siblings or {}
    setting = (setting or "auto").strip().lower()
    taken = set(taken) & set(available)
    free = [cpu for cpu in available if cpu not in taken]
    if setting in ("off", "none", "shared"):
        return _shared(available, slots, "timing cores not set aside (timing_cores=off)")
    if setting == "auto":
        if len(free) < MIN_CORES:
            words = f"{len(available)} core{'s' if len(available) != 1 else ''}"
            if taken:
                words += f", {format_cpu_list(taken)} timing for another verifier"
            return _shared(available, slots, f"{words}: too few to set one aside for timing", free)
        timing, idle = _choose(free, slots, siblings)
        if not timing:
            return _shared(available, slots, f"{len(free)} free cores: too few to set one aside for timing", free)
        reason = "set aside automatically"
    else:
        wanted = parse_cpu_list(setting)
        timing, idle = [cpu for cpu in wanted if cpu in available], []
        if not timing:
            return _shared(available, slots, f"timing_cores={setting} names no core this process may use "
                                             f"({format_cpu_list(available)})")
        reason = f"timing_cores={setting}"
    reserved = set(timing) | set(idle)
    others = [cpu for cpu in available if cpu not in reserved and cpu not in taken]
    if not others:
        return _shared(available, slots, f"timing cores {format_cpu_list(timing)} would leave no core for "
                                         "everything else")
    exclusive = len(timing) >= slots and not (set(timing) & taken)
    per_slot = tuple(SlotCores(cores, exclusive, True) for cores in _per_slot(timing, slots))
    claimed = tuple(sorted(cpu for cpu in reserved if cpu not in taken))
    return CorePlan(per_slot, tuple(others), claimed,
                    f"timing on {format_cpu_list(timing)} ({reason}); everything else on {format_cpu_list(others)}")


class CoreReservation:
    """A plan put into effect for one pool: its cores claimed against other verifiers on this machine and
    this process kept off them; `release` undoes both."""

    def __init__(self, slots: int, setting: str = "auto", claims: CoreClaims | None = None) -> None:
        available = usable_cpus()
        self.claims = claims or CoreClaims()
        self.plan = _shared(sorted(available), slots, "timing cores contested by other verifiers")
        for _ in range(CLAIM_ATTEMPTS):
            taken = self.claims.taken_elsewhere(available)
            plan = plan_cores(available, slots, setting, taken, siblings(available))
            if all(self.claims.claim(cpu) for cpu in plan.claimed):
                self.plan = plan
                break
            self.claims.release()
        self._token = keep_process_on(self.plan.others) if self.plan.pinned else None
        log.info("cores: %s", self.plan.reason)

    def slot(self, index: int) -> SlotCores:
        return self.plan.slots[index % len(self.plan.slots)]

    def release(self) -> None:
        if self._token is not None:
            release_process(self._token)
            self._token = None
        self.claims.release()
