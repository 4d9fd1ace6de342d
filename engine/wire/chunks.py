"""Commitments to timed calls' outputs, chunk by chunk: what a runner commits to at the end of a block and
what it shows when the judge asks, the same on both sides.

Every tensor output of a timed call is split, in its flattened (row-major) order, into at most `CHUNKS`
chunks of a size both sides work out from its byte size alone (`chunk_words`), and each chunk gets a
digest (`word_sums`). A call's digest, the one committed in the block's reply, is a hash of those chunk
digests with every output's dtype and shape (tensors) or type and value (plain outputs): `call_digest`.
When the judge then names a call and a few chunks of each of its outputs, the runner sends the call's
parts (dtype, shape, every chunk's digest) and only the chosen chunks' elements (`revealed`). The judge
hashes the parts back to the commitment, the chunks back to their digests, and compares the chunks with
the same elements of its own answer: a chunk worked out or fixed up once the choice was known no longer
matches what was committed, and a call's whole output no longer crosses host memory for a few checked
elements (256 MiB a call on the largest configurations, most of the reveals' cost).

The commitment is made with one transfer to the host for a whole block (`commitments`): the chunk sums are
reductions where the tensors lie, and a sync per output would cost the timing loop tens of µs a call.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np
import torch

from engine.wire import digest_kernel
from engine.wire.limits import MAX_CHUNKS, NAME_CHARS
from engine.wire.shared import dtype_name

CHUNKS = MAX_CHUNKS  # chunks of one tensor output, at most; the judge checks CHUNKS_PER_CALL of them
CHUNKS_PER_CALL = 16  # chosen chunks of each tensor output of a checked call: with REVEALS_PER_TIMING calls (6) a
# timing checks 96 chunks of an output, so a candidate that leaves a fraction f of every timed call's elements
# unworked (rows skipped, a tile left stale) is caught with a probability of at least about 1 - (1 - f)**96: 0.62
# at 1 %, 0.86 at 2 %, 0.99 at 5 %, and it gains only what it skips (a call skipped whole is caught as
# REVEALS_PER_TIMING says). Of a large output (256 chunks) a checked call moves 1/16 through host memory.
MIN_CHUNK_BYTES = 64 * 2**10  # smaller chunks cost more in digests than they save: an output of at most this
# many bytes is one chunk, one of at most CHUNKS_PER_CALL times this is revealed whole
_ALIGN_WORDS = 4  # chunks are whole multiples of 16 bytes: every chunk starts and ends on an element of any dtype
_MIX = digest_kernel.MIX  # odd: the product's low 32 bits are a bijection of the word
_PRIME = 2**61 - 1


def chunk_words(nbytes: int) -> int:
    """The 32-bit words in each chunk (the last may be shorter) of a tensor of `nbytes` bytes."""
    words = -(-nbytes // 4)
    per = max(-(-words // CHUNKS), MIN_CHUNK_BYTES // 4)
    return -(-per // _ALIGN_WORDS) * _ALIGN_WORDS


def chunk_count(nbytes: int) -> int:
    """How many chunks a tensor of `nbytes` bytes is committed in (one for an empty tensor)."""
    words = -(-nbytes // 4)
    return max(1, -(-words // chunk_words(nbytes)))


def chunk_span(numel: int, element_size: int, index: int) -> tuple[int, int]:
    """The flattened elements [start, stop) of chunk `index` of a tensor of `numel` elements."""
    per = chunk_words(numel * element_size) * 4 // element_size
    start = min(index * per, numel)
    return start, min(start + per, numel)


def nbytes_of(value: torch.Tensor) -> int:
    return value.numel() * value.element_size()


def _words(value: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes as mixed 32-bit words, where the tensor lies (zero bytes pad the last word)."""
    flat = value.detach().contiguous().reshape(-1).view(torch.uint8)
    pad = (-flat.numel()) % 4
    if pad:
        flat = torch.cat([flat, flat.new_zeros(pad)])
    elif flat.storage_offset() % 4:
        flat = flat.clone()
    mixed = flat.view(torch.int32) * _MIX
    mixed ^= mixed >> 15
    return mixed


def word_sums(value: torch.Tensor) -> torch.Tensor:
    """The digest of each of the tensor's chunks (`chunk_words`), an int64 tensor where the tensor lies (no sync).

    Exact (bits, not values: an honest output is committed to as it is), not linear in them (a value cannot
    be nudged to meet a committed digest), in three passes over 32-bit words (wrapping multiplication and
    shifts are the same on a CPU and a GPU, and an integer sum does not depend on its order). A zero word
    adds nothing, so a chunk's digest is the same whether it is summed inside its tensor or on its own.
    On a GPU one fused kernel (`wire.digest_kernel`) gives the same sums in one read of the tensor.
    """
    if value.is_cuda and fused_agrees(value.device.index or 0):
        fused = digest_kernel.chunk_sums(value, chunk_words(nbytes_of(value)))
        if fused is not None:
            return fused.remainder(_PRIME)
    return torch_word_sums(value)


@functools.cache
def fused_agrees(device: int) -> bool:
    """Whether the fused kernel gives the torch passes' sums on this GPU, tried once a process on words of every
    sign over several chunks and a short last one: a kernel that differed by one bit would fail every honest
    candidate's reveal, so where it does not agree (or cannot run) the torch passes do the work."""
    try:
        generator = torch.Generator(device=f"cuda:{device}").manual_seed(20261207)
        words = torch.randint(-(2**31), 2**31 - 1, (3 * chunk_words(2**22) + 1237,), dtype=torch.int32,
                              device=f"cuda:{device}", generator=generator)
        for sample in (words, words[: chunk_words(2**22) - 4].view(torch.float32)):
            fused = digest_kernel.chunk_sums(sample, chunk_words(nbytes_of(sample)))
            if fused is None or not torch.equal(fused.remainder(_PRIME), torch_word_sums(sample)):
                return False
    except Exception:  # noqa: BLE001 - a kernel that cannot launch here: the torch passes do the work
        return False
    return True


def torch_word_sums(value: torch.Tensor) -> torch.Tensor:
    """`word_sums` in torch passes, on any device: the reference the fused GPU kernel must equal."""
    mixed = _words(value)
    per = chunk_words(nbytes_of(value))
    full = mixed.numel() // per
    parts = [mixed[:full * per].view(full, per).sum(dim=1, dtype=torch.int64)] if full else []
    if mixed.numel() % per or not full:
        parts.append(mixed[full * per:].sum(dtype=torch.int64).reshape(1))
    sums = torch.cat(parts) if len(parts) > 1 else parts[0]
    return sums.remainder(_PRIME)


def chunk_digest(chunk: torch.Tensor) -> torch.Tensor:
    """The digest of one chunk's elements as revealed (a 0-d int64 tensor where they lie): the judge's side."""
    return _words(chunk).sum(dtype=torch.int64).remainder(_PRIME)


def plain_value(value: object) -> int | float | bool | None:
    """What crosses the boundary of an output that is not a tensor: a number, a bool or None, else None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return None


@dataclass(frozen=True)
class Part:
    """What a call's digest covers of one output: a tensor's dtype, shape and chunk digests, or a plain
    output's type name and value (`plain_value`)."""

    kind: str  # "tensor" or "value"
    name: str  # the dtype's name, or the type's
    shape: tuple[int, ...] = ()
    digests: tuple[int, ...] = ()
    value: int | float | bool | None = None

    @classmethod
    def of_value(cls, value: object) -> Part:
        return cls("value", type(value).__name__[:NAME_CHARS], value=plain_value(value))


def call_digest(parts: list[Part]) -> int:
    """The digest a side commits to for one call: a hash of its outputs' parts, below 2**61. A hash, not a
    sum, so that no chunk digest can be changed and another one adjusted to keep the call's digest."""
    hashed = hashlib.blake2b(digest_size=8, person=b"refinery-chunks")
    for part in parts:
        hashed.update(repr((part.kind, part.name, tuple(part.shape), len(part.digests), part.value)).encode())
        hashed.update(np.asarray(part.digests, dtype="<i8").tobytes())
    return int.from_bytes(hashed.digest(), "little") >> 3


def commitments(calls: list[list]) -> tuple[list[int], list[list[Part]]]:
    """Each call's digest and the parts it covers, with one transfer to the host for all of them."""
    sums = [[word_sums(v) for v in values if isinstance(v, torch.Tensor)] for values in calls]
    flat = [t for group in sums for t in group]
    host = torch.cat([t.to(flat[0].device) for t in flat]).cpu().tolist() if flat else []
    digests, parts, start = [], [], 0
    for values in calls:
        mine = []
        for value in values:
            if not isinstance(value, torch.Tensor):
                mine.append(Part.of_value(value))
                continue
            count = chunk_count(nbytes_of(value))
            mine.append(Part("tensor", dtype_name(value.dtype), tuple(value.shape), tuple(host[start:start + count])))
            start += count
        parts.append(mine)
        digests.append(call_digest(mine))
    return digests, parts


def digests_of(calls: list[list]) -> list[int]:
    """The digest of each call's outputs (`call_digest`), with one transfer to the host for all of them."""
    return commitments(calls)[0]


def digest(values: list) -> int:
    """A digest of the bits of a call's outputs, the same on either side and on either device. It says
    nothing about where a word lies within a chunk: it binds what a runner shows the judge to what it had
    when its block ended, and the judge compares those values with its own answer."""
    return digests_of([values])[0]


def revealed(kept: list[tuple[int, list]], committed: list[list[Part]], positions: list[int],
             picks: list[list[list[int]]]) -> tuple[list[list[dict]], list[torch.Tensor]]:
    """The runner's answer to a reveal: per chosen call (`positions` in the block), per output, the part it
    committed to, with the elements of the chunks `picks` names for it; and the tensors to put in the shared
    region, which each record's "chunks" names by their place in that list (`serve` puts slots there). A
    position or chunk the block does not have gives an empty call or an empty chunk: the judge names it."""
    calls, tensors = [], []
    for position, chosen in zip(positions, picks, strict=False):
        if not 0 <= position < min(len(kept), len(committed)):
            calls.append([])
            continue
        records = []
        for index, (value, part) in enumerate(zip(kept[position][1], committed[position], strict=True)):
            if part.kind == "value":
                records.append({"kind": "value", "type": part.name, "value": part.value})
                continue
            flat = value.detach().contiguous().reshape(-1)
            places = []
            for chunk in (chosen[index] if index < len(chosen) else []):
                start, stop = chunk_span(flat.numel(), flat.element_size(), int(chunk))
                places.append(len(tensors))
                tensors.append(flat[start:stop] if 0 <= int(chunk) < len(part.digests) else flat[:0])
            records.append({"kind": "chunked", "dtype": part.name, "shape": list(part.shape),
                            "digests": list(part.digests), "chunks": places})
        calls.append(records)
    return calls, tensors


def part_of_reply(output) -> Part:
    """The part a revealed output claims (`replies.RevealedTensor` or `replies.ValueSlot`), as the judge
    hashes it back to the commitment."""
    if output.kind == "value":
        return Part("value", output.type, value=output.value)
    return Part("tensor", output.dtype, tuple(output.shape), tuple(output.digests))
