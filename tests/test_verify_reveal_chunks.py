"""The judge checks chunks of the timed calls it draws, not their whole outputs: the runner's commitment covers
every chunk's digest, only the chosen chunks cross, and anything changed, missing or misshapen is named."""

from __future__ import annotations

import socket
import threading

import pytest
import torch

from engine.untrusted.runner.serve import _place, _with_slots, serve
from engine.verify.judge.clock import Block
from engine.verify.judge.outcome import Findings
from engine.verify.judge.reference import TorchReference
from engine.verify.judge.reveal import Answer, Reveals
from engine.verify.judge.session import RunnerMisbehaved, RunnerSession
from engine.wire.candidate import CandidateSpec, ConfigCall
from engine.wire.channel import Channel
from engine.wire.chunks import (
    CHUNKS,
    CHUNKS_PER_CALL,
    MIN_CHUNK_BYTES,
    chunk_count,
    chunk_digest,
    chunk_span,
    commitments,
    revealed,
    word_sums,
)
from engine.wire.fresh import FreshCalls, timed_block, trial_seed
from engine.wire.inputs import reuse_buffers
from engine.wire.replies import MalformedReply, decode
from engine.wire.shared import SharedRegion

N = 2**20  # 4 MiB of float32 a call: 64 chunks, of which the judge checks CHUNKS_PER_CALL
REFERENCE = ("import torch\nN = 8\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
             "        return torch.relu(x)\ndef get_inputs():\n    return [torch.randn(N)]\n"
             "def get_init_inputs():\n    return []\n")


def _make(seed: int) -> list:
    return [torch.randn(N, generator=torch.Generator().manual_seed(seed))]


def _relu_answer(base: int):
    def answer(call: int) -> Answer:
        native = torch.relu(_make(trial_seed(base, call))[0])
        return Answer([native.double()], [native])
    return answer


class LocalRunner(RunnerSession):
    """A runner session whose reveals are answered here from a block timed with `timed_block`, with `tamper`
    applied to the chunks it sends (what a candidate's process could do once the judge had chosen)."""

    def __init__(self, calls: FreshCalls, tamper=None) -> None:
        super().__init__(channel=None, device="cpu", region=SharedRegion.create(64 * 2**20, pin=False))
        self.calls, self.tamper, self.asked = calls, tamper, []

    def request(self, op: str, stage: str | None = None, fds=(), **fields):
        assert op == "reveal"
        self.asked.append(fields["chunks"])
        records, tensors = revealed(self.calls.kept, self.calls.committed, fields["positions"], fields["chunks"])
        if self.tamper is not None:
            records, tensors = self.tamper(records, tensors, fields["chunks"])
        slots, _, error = _place(self.region, tensors, [])
        assert error is None
        return decode("reveal", {"ok": True, "calls": _with_slots(records, slots)})


def _timed(call, trials: int = 4, base: int = 3) -> tuple[FreshCalls, Block]:
    calls = FreshCalls(_make, lambda inputs: [call(inputs[0])], base, reuse_buffers)
    times, digests = timed_block(calls, trials, 0, "cpu", 0)
    return calls, Block(times, sum(times), digests=digests, first_call=0)


def _reveals(runner, like: list) -> Reveals:
    reveals = Reveals(runner, Findings(), rtol=1e-5, atol=1e-6)
    reveals.expect(like)
    return reveals


def _detail(reveals: Reveals) -> str:
    finding = reveals.findings.items["timed-output"]
    assert not finding.passed
    return finding.detail


# --- the layout ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64, torch.uint8, torch.complex128])
@pytest.mark.parametrize("numel", [0, 1, 3, 5000, 1_000_003, 7_340_033])
def test_the_chunks_cover_every_element_once_and_start_on_elements(dtype, numel):
    size = torch.empty((), dtype=dtype).element_size()
    count = chunk_count(numel * size)
    spans = [chunk_span(numel, size, k) for k in range(count)]
    assert 1 <= count <= CHUNKS and spans[0][0] == 0 and spans[-1][1] == numel
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False)) and all(s < e for s, e in spans[:-1])
    if numel * size <= MIN_CHUNK_BYTES:
        assert count == 1  # a small output is revealed whole


def test_a_chunks_digest_is_the_same_summed_in_its_tensor_or_on_its_own_on_either_side():
    x = torch.randn(N + 3).to(torch.float16)  # an odd byte count: the last chunk's word is padded
    inside = word_sums(x).tolist()
    flat = x.reshape(-1)
    alone = [int(chunk_digest(flat[slice(*chunk_span(flat.numel(), 2, k))])) for k in range(len(inside))]
    assert inside == alone and len(inside) == chunk_count(x.numel() * 2)
    digests, parts = commitments([[x, 2.5]])
    assert parts[0][0].digests == tuple(inside) and parts[0][1].value == 2.5
    assert commitments([[x.clone(), 2.5]])[0] == digests and commitments([[x, 3.5]])[0] != digests
    assert commitments([[x.reshape(-1, 1), 2.5]])[0] != digests  # the shape is committed too


def test_the_reveal_reply_is_typed_and_bounded():
    chunked = {"kind": "chunked", "dtype": "float32", "shape": [4], "digests": [1] * (CHUNKS + 1), "chunks": []}
    with pytest.raises(MalformedReply, match="digests"):
        decode("reveal", {"ok": True, "calls": [[chunked]]})
    with pytest.raises(MalformedReply, match="dtype"):
        decode("reveal", {"ok": True, "calls": [[{**chunked, "digests": [1], "dtype": "float99"}]]})


# --- the judge's check -----------------------------------------------------------------------------------


def test_an_honest_block_passes_and_only_the_chosen_chunks_cross():
    calls, block = _timed(torch.relu)
    runner = LocalRunner(calls)
    reveals = _reveals(runner, [torch.empty(N)])
    reveals.check(block, 0, _relu_answer(3), "the timed calls")
    assert "timed-output" not in reveals.findings.items and reveals.checked == reveals.per(4)
    assert all(len(chunks) == CHUNKS_PER_CALL for call in runner.asked[0] for chunks in call)
    assert chunk_count(N * 4) == 64 > CHUNKS_PER_CALL


def test_a_small_output_is_revealed_whole():
    small = 1000
    calls = FreshCalls(lambda seed: [torch.randn(small, generator=torch.Generator().manual_seed(seed))],
                       lambda inputs: [torch.relu(inputs[0])], 3, reuse_buffers)
    times, digests = timed_block(calls, 3, 0, "cpu", 0)
    runner = LocalRunner(calls)
    reveals = _reveals(runner, [torch.empty(small)])

    def answer(call: int) -> Answer:
        x = torch.randn(small, generator=torch.Generator().manual_seed(trial_seed(3, call)))
        return Answer([torch.relu(x)])

    reveals.check(Block(times, sum(times), digests=digests), 0, answer, "the timed calls")
    assert "timed-output" not in reveals.findings.items and runner.asked[0][0] == [[0]]


def test_the_chosen_chunk_of_a_wrong_output_is_caught():
    def sloppy(x):  # one wrong element in every 4096: in every chunk, as skipped work would be
        out = torch.relu(x)
        out[::4096] += 1.0
        return out

    calls, block = _timed(sloppy)
    reveals = _reveals(LocalRunner(calls), [torch.empty(N)])
    reveals.check(block, 0, _relu_answer(3), "the timed calls")
    detail = _detail(reveals)
    assert "chosen after its block ran" in detail and "from flattened element" in detail, detail


def _detail_after(tamper) -> str:
    """The timed-output finding after an honest ReLU block whose reveal `tamper` rewrote on its way back."""
    calls, block = _timed(torch.relu)
    reveals = _reveals(LocalRunner(calls, tamper), [torch.empty(N)])
    reveals.check(block, 0, _relu_answer(3), "the timed calls")
    return _detail(reveals)


def test_a_chunk_altered_after_the_commitment_is_caught():
    def fixed_up(records, tensors, _picks):  # a chunk changed once the judge had chosen it
        tensors[0] = tensors[0].clone()
        tensors[0][0] += 1.0
        return records, tensors

    assert "not the one its process committed to" in _detail_after(fixed_up)


def test_chunk_digests_rewritten_to_match_are_not_the_commitment():
    def rewritten(records, tensors, picks):  # the changed chunk's digest sent for it: the call's hash differs
        tensors[0] = tensors[0].clone()
        tensors[0][0] += 1.0
        digests = records[0][0]["digests"]
        digests[picks[0][0][0]] = int(chunk_digest(tensors[0]))
        return records, tensors

    assert "are not the ones its process committed to" in _detail_after(rewritten)


def test_a_chunk_of_the_wrong_size_is_the_runners_fault_naming_the_chunk():
    def short(records, tensors, _picks):
        tensors[1] = tensors[1][:-1]
        return records, tensors

    calls, block = _timed(torch.relu)
    reveals = _reveals(LocalRunner(calls, short), [torch.empty(N)])
    with pytest.raises(RunnerMisbehaved, match=r"chunk \d+ of output 0 of timed call \d+ came back as float32 of "
                                                r"shape \[16383\]; it is 16384 elements of float32"):
        reveals.check(block, 0, _relu_answer(3), "the timed calls")


def test_a_missing_chunk_is_the_runners_fault():
    def dropped(records, tensors, _picks):
        records[0][0]["chunks"] = records[0][0]["chunks"][:-1]
        return records, tensors

    calls, block = _timed(torch.relu)
    reveals = _reveals(LocalRunner(calls, dropped), [torch.empty(N)])
    with pytest.raises(RunnerMisbehaved, match="came back in 15 chunks; the judge asked for 16"):
        reveals.check(block, 0, _relu_answer(3), "the timed calls")


def test_an_output_of_another_shape_is_named_as_such():
    calls, block = _timed(lambda x: torch.relu(x).reshape(2, -1))
    reveals = _reveals(LocalRunner(calls), [torch.empty(N)])
    reveals.check(block, 0, _relu_answer(3), "the timed calls")
    assert f"output 0 has shape [2, {N // 2}], expected [{N}]" in _detail(reveals)


# --- through the real serve loop -----------------------------------------------------------------------


def test_time_and_reveal_through_the_real_serve_loop_agree_with_the_judges_answer(tmp_path):
    source = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
              "        return x.clamp(min=0)\n")
    params = {"N": N}
    spec = CandidateSpec(kind="pytorch", device="cpu", language="python", flavor="torch", source=source,
                         configs=[ConfigCall("large", params)], reference_source=REFERENCE)
    judge_end, runner_end = socket.socketpair()
    thread = threading.Thread(target=serve, args=(Channel(runner_end), tmp_path, "cpu"), daemon=True)
    thread.start()
    session = RunnerSession(Channel(judge_end), "cpu")
    reference = TorchReference(REFERENCE, "reference.py", "cpu", init_seed=1)
    try:
        session.channel.send({"op": "job", "spec": spec.to_json()})
        session.ensure_region(4 * N * 4)
        session.request("load")
        session.request("construct", config="large", init_seed=1)
        reply = session.request("time", config="large", seed=9, trials=5, warmup=1, flush_bytes=0)
        block = Block(list(reply.times_us), 0.0, digests=list(reply.digests), first_call=0)
        first = reference.answer("large", params, trial_seed(9, 0), keep=False)
        reveals = Reveals(session, Findings(), rtol=1e-5, atol=1e-6, per_block=2)
        reveals.expect(first.native)

        def answer(call: int) -> Answer:
            expected = reference.answer("large", params, trial_seed(9, call), keep=False)
            return Answer(expected.answer, expected.native, magnitude=expected.magnitude)

        reveals.check(block, 1, answer, "the timed calls on 'large'")
        assert "timed-output" not in reveals.findings.items and reveals.checked == 2
        session.close()
        thread.join(10)
        assert not thread.is_alive()
    finally:
        judge_end.close()
