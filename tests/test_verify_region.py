"""The shared region between judge and runner: sealed at its size, and lent to a new runner only after the
previous one has ended, erased."""

from __future__ import annotations

import os
import socket

import pytest
import torch

from engine.verify.judge.session import RegionCache
from engine.wire.channel import Channel
from engine.wire.shared import SharedRegion, TensorSlot


def _pair() -> tuple[Channel, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return Channel(ours), theirs


def test_a_runner_cannot_shrink_or_grow_the_region_under_the_judge():
    region = SharedRegion.create(1 << 20, pin=False)
    runners_copy = os.dup(region.fd)  # what a runner holds: the same memfd
    try:
        for size in (0, 2 << 20):
            with pytest.raises(PermissionError):
                os.ftruncate(runners_copy, size)
        assert os.fstat(region.fd).st_size == 1 << 20
    finally:
        os.close(runners_copy)
        region.close()


def test_the_region_is_lent_again_only_after_its_runner_has_ended_and_then_erased():
    cache = RegionCache(wait_s=0.2)
    first = cache.acquire(1 << 20, pin=False)
    first.put(0, torch.full((1024,), 7.0))
    channel, runner_end = _pair()
    cache.release(first, channel)
    alive = cache.acquire(1 << 20, pin=False)  # the first runner still holds its socket
    assert alive is not first
    alive.close()
    runner_end.close()  # the runner's sandbox ended
    cache.pending.join(5)
    again = cache.acquire(1 << 20, pin=False)
    assert again is first
    assert not again.view(TensorSlot(0, "float32", [1024])).any(), "the previous runner's bytes were not erased"
    cache.close()
    again.close()


def test_a_region_too_small_for_the_next_job_is_not_lent():
    cache = RegionCache(wait_s=1.0)
    small = cache.acquire(4096, pin=False)
    channel, runner_end = _pair()
    cache.release(small, channel)
    runner_end.close()
    bigger = cache.acquire(1 << 20, pin=False)
    assert bigger is not small and bigger.size == 1 << 20
    bigger.close()
    cache.close()


def test_a_region_past_the_file_size_limit_fails_at_its_creation_and_says_why():
    import subprocess
    import sys

    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))\n"
            "from engine.wire.shared import SharedRegion\n"
            "try:\n"
            "    SharedRegion.create(2 << 20, pin=False)\n"
            "except OSError as exc:\n"
            "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert "a shared region of 2097152 bytes is larger than this process may make" in done.stdout, done.stderr
    assert "file-size limit is 1048576 bytes" in done.stdout


def test_the_judges_file_size_limit_holds_every_region_its_memory_could_erase():
    from engine.verify.pool import PoolConfig

    limits = PoolConfig(cache_dir=".").judge_limits
    assert limits.file_size_mb == limits.memory_mb
