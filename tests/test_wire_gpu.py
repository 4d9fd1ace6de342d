"""On the GPU: the wire's fused steps give exactly what their torch reference gives.

Both sides commit to timed calls' outputs with `chunks.word_sums`; on a GPU one fused kernel does it. A
digest that differed by one bit between the kernel and the torch passes (the judge hashes revealed chunks
with the torch passes) would fail every honest candidate's reveal, so every shape, dtype and alignment the
outputs come in is checked bit for bit here.
"""

from __future__ import annotations

import pytest
import torch

from engine.wire import chunks, digest_kernel

pytestmark = pytest.mark.gpu


def _case(name: str) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(3)
    big = torch.randn(8192, 8192, device="cuda", generator=g)
    makers = {
        "float32 8192x8192": lambda: big,
        "float32 1531x7919": lambda: torch.randn(1531, 7919, device="cuda", generator=g),
        "float32 one element": lambda: torch.randn(1, device="cuda", generator=g),
        "float32 under a chunk": lambda: torch.randn(1000, device="cuda", generator=g),
        "float32 slice (offset view)": lambda: big[3:900, 5:4000],
        "float32 transposed": lambda: big[:2000, :3000].t(),
        "float16 even": lambda: torch.randn(4096, 1000, device="cuda", generator=g).half(),
        "float16 odd (padded word)": lambda: torch.randn(1001, device="cuda", generator=g).half(),
        "bfloat16": lambda: torch.randn(777, 333, device="cuda", generator=g).bfloat16(),
        "float64": lambda: torch.randn(3000, 999, device="cuda", generator=g).double(),
        "int64 extremes": lambda: torch.tensor([-(2**63), 2**63 - 1, 0, -1] * 50000, device="cuda"),
        "int32 all ones": lambda: torch.full((300000,), -1, dtype=torch.int32, device="cuda"),
        "bool": lambda: torch.rand(100003, device="cuda", generator=g) > 0.5,
        "empty": lambda: torch.empty(0, device="cuda"),
        "NaN poison": lambda: torch.full((70000,), float("nan"), device="cuda"),
    }
    return makers[name]()


CASES = ["float32 8192x8192", "float32 1531x7919", "float32 one element", "float32 under a chunk",
         "float32 slice (offset view)", "float32 transposed", "float16 even", "float16 odd (padded word)", "bfloat16",
         "float64", "int64 extremes", "int32 all ones", "bool", "empty", "NaN poison"]


@pytest.mark.parametrize("name", CASES)
def test_fused_chunk_digests_equal_the_torch_passes(name):
    assert digest_kernel.warm(), "CuPy could not compile the digest kernel on this GPU"
    assert chunks.fused_agrees(0), "the fused kernel's self-check failed: the torch passes would do the work"
    value = _case(name)
    fused = chunks.word_sums(value)
    reference = chunks.torch_word_sums(value)
    torch.cuda.synchronize()
    assert fused.shape == reference.shape == (chunks.chunk_count(value.numel() * value.element_size()),)
    assert torch.equal(fused.cpu(), reference.cpu()), name
    cpu = chunks.torch_word_sums(value.cpu())
    assert torch.equal(cpu, reference.cpu()), f"{name}: the CPU's sums differ from the GPU's"


def test_fused_digests_follow_the_current_stream():
    """The kernel runs on torch's current stream: an output still being written there is digested after."""
    stream = torch.cuda.Stream()
    value = torch.zeros(4096, 4096, device="cuda")
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # keep the stream busy, then write
        value.fill_(1.5)
        fused = chunks.word_sums(value)
    stream.synchronize()
    assert torch.equal(fused.cpu(), chunks.torch_word_sums(torch.full((4096, 4096), 1.5)))


CHILD = """
import json, sys, torch
from engine.wire.device_region import DeviceRegion
fd, size = int(sys.argv[1]), int(sys.argv[2])
region = DeviceRegion.attach(fd, size)
region.echo()
values = torch.arange(1 << 20, dtype=torch.float32, device="cuda") * 0.5
print(json.dumps(region.put(16384, values).to_json()))
region.close()
"""


def test_a_device_region_carries_a_tensor_between_processes():
    """The judge's GPU region, mapped by another process from its descriptor alone: what that process copies
    in is what the judge takes out, and the judge's copy is its own."""
    import json
    import os
    import subprocess
    import sys

    from engine.wire.device_region import DeviceRegion
    from engine.wire.shared import TensorSlot

    region = DeviceRegion.create(8 << 20)
    try:
        token = region.probe()
        assert not region.echoed(token)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run([sys.executable, "-c", CHILD, str(region.fd), str(region.size)], pass_fds=(region.fd,),
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert region.echoed(token), "the other process's mapping did not echo the token"
        slot = TensorSlot.from_json(json.loads(done.stdout.strip().splitlines()[-1]))
        taken = region.take(slot, "cuda")
        assert torch.equal(taken, torch.arange(1 << 20, dtype=torch.float32, device="cuda") * 0.5)
        region.view(slot).fill_(7.0)
        assert float(taken[10]) == 5.0, "the judge's copy moved with the region"
        region.zero()
        region.fresh()
        assert int(region.bytes.count_nonzero()) == 0
    finally:
        region.close()
