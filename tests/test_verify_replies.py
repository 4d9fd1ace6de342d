"""The judge decodes every runner reply with the model of its request's kind: strict types, bounded lengths,
finite numbers. A reply that is not what was asked for is the candidate's runtime error, naming the field."""

from __future__ import annotations

import json
import socket
import struct
import threading

import pytest

from engine.schema.verdict import Verdict
from engine.verify.judge.outcome import Findings, JobFailure, judged
from engine.verify.judge.session import CandidateError, RunnerMisbehaved, RunnerSession
from engine.wire import limits
from engine.wire.channel import Channel, ProtocolError
from engine.wire.replies import (
    CallReply,
    ErrorReply,
    MalformedReply,
    ProfileReply,
    TensorSlot,
    TimesReply,
    ValueSlot,
    decode,
)

TENSOR = {"kind": "tensor", "class": "Tensor", "offset": 0, "dtype": "float32", "shape": [2, 3]}


def _refused(op: str, message: dict, words: str) -> str:
    with pytest.raises(MalformedReply) as raised:
        decode(op, message)
    assert words in raised.value.detail, raised.value.detail
    return raised.value.detail


# --- what decodes ----------------------------------------------------------------------------------------


def test_a_timing_reply_decodes_to_its_times():
    reply = decode("time", {"ok": True, "times_us": [1, 2.5], "digests": [7, 2**60], "evidence": [],
                            "runner_seconds": 0.1})
    assert isinstance(reply, TimesReply) and reply.times_us == [1.0, 2.5] and reply.digests == [7, 2**60]


def test_a_call_reply_decodes_its_tensors_and_plain_values():
    reply = decode("call", {"ok": True, "seconds": 0.01, "inputs_changed": [], "inputs": [],
                            "outputs": [TENSOR, {"kind": "value", "type": "float", "value": float("nan")}]})
    assert isinstance(reply, CallReply)
    tensor, value = reply.outputs
    assert isinstance(tensor, TensorSlot) and tensor.region_json() == {"offset": 0, "dtype": "float32", "shape": [2, 3]}
    assert isinstance(value, ValueSlot) and value.value != value.value  # a NaN answer is the candidate's to be judged


def test_a_profile_reply_takes_kernels_as_calls_and_microseconds():
    reply = decode("profile", {"ok": True, "profile": {"ops": ["aten::relu"], "top_ops": [], "all_ops": [],
                                                       "kernels": {"relu_kernel": [3, 12.5]}}})
    assert isinstance(reply, ProfileReply) and reply.profile.model_dump()["kernels"] == {"relu_kernel": (3, 12.5)}


def test_a_failure_report_decodes_with_the_facts_the_runner_sent():
    reply = decode("call", {"ok": False, "error": {"stage": "forward", "exception": "ValueError",
                                                   "message": "bad", "traceback": "..."}})
    assert isinstance(reply, ErrorReply)
    assert reply.error.facts() == {"stage": "forward", "exception": "ValueError", "message": "bad", "traceback": "..."}


def test_keys_no_model_names_are_ignored():
    assert decode("ping", {"ok": True, "verdict": "correct", "speedup": 8.5}).model_dump().keys().isdisjoint(
        {"verdict", "speedup"})


# --- what does not --------------------------------------------------------------------------------------


def test_a_nan_time_is_refused_naming_its_place():
    _refused("time", {"ok": True, "times_us": [1.0, float("nan")]}, "times_us.1: Input should be a finite number")


def test_an_infinite_or_negative_time_is_refused():
    _refused("time", {"ok": True, "times_us": [float("inf")]}, "times_us.0: Input should be a finite number")
    _refused("time", {"ok": True, "times_us": [-1.0]}, "times_us.0: Input should be greater than or equal to 0")


@pytest.mark.parametrize("wrong", ["1.0", True, None, [1.0]])
def test_a_time_of_the_wrong_type_is_refused(wrong):
    _refused("time", {"ok": True, "times_us": [wrong]}, "times_us.0")


def test_an_oversize_list_is_refused_before_its_items_are_read():
    _refused("time", {"ok": True, "times_us": [1.0] * (limits.MAX_TRIALS + 1)}, "times_us: List should have at most")
    _refused("call", {"ok": True, "outputs": [TENSOR] * (limits.MAX_RETURNED + 1)}, "outputs: List should have")


def test_an_oversize_text_is_refused():
    _refused("call", {"ok": False, "error": {"message": "x" * (limits.MESSAGE_CHARS + 1)}}, "error.message")


def test_outputs_that_are_not_a_list_of_slots_are_refused():
    _refused("call", {"ok": True, "outputs": "all correct"}, "outputs: Input should be a valid list")
    _refused("call", {"ok": True, "outputs": [{"kind": "tensor", "offset": 0, "dtype": "float99", "shape": [1]}]},
             "outputs.0.tensor.dtype")
    _refused("call", {"ok": True, "outputs": [{**TENSOR, "shape": [-1]}]}, "outputs.0.tensor.shape.0")
    _refused("call", {"ok": True, "outputs": [{"kind": "value", "value": {"nested": 1}}]}, "outputs.0.value.value")


def test_a_missing_field_is_refused():
    _refused("reveal", {"ok": True, "outputs": []}, "calls: Field required")
    _refused("time", {"ok": True, "times_us": [1.0]}, "digests: Field required")


def test_a_count_of_the_wrong_type_is_refused():
    _refused("reveal", {"ok": True, "calls": [[{"kind": "chunked", "dtype": "float32", "shape": [4], "digests": ["3"],
                                                "chunks": []}]]}, "calls.0.0.chunked.digests.0: Input should be")
    _refused("time", {"ok": True, "times_us": [1.0], "digests": [-1]}, "digests.0")
    _refused("loop", {"ok": True, "calls": 2.5}, "calls: Input should be a valid integer")


def test_a_failure_without_a_report_is_refused():
    _refused("call", {"ok": False}, "error: Field required")


def test_the_detail_names_fields_never_the_values_sent():
    detail = _refused("time", {"ok": True, "times_us": ["secret-text"]}, "times_us.0")
    assert "secret-text" not in detail


# --- in the judge ---------------------------------------------------------------------------------------


def _runner_answers(*replies: bytes):
    """A RunnerSession whose runner answers each request with the next raw frame in `replies`."""
    judge_end, runner_end = socket.socketpair()

    def serve():
        runner = Channel(runner_end)
        for raw in replies:
            runner.receive()
            runner_end.sendall(raw)

    threading.Thread(target=serve, daemon=True).start()
    return RunnerSession(Channel(judge_end), "cpu")


def _frame(message: dict | str) -> bytes:
    header = (message if isinstance(message, str) else json.dumps(message)).encode()
    return struct.pack("!IQ", len(header), 0) + header


def test_a_malformed_reply_ends_the_job_as_the_candidates_runtime_error_naming_the_field():
    session = _runner_answers(_frame({"ok": True, "times_us": [1.0, float("nan")], "digests": [1, 2]}))
    with pytest.raises(JobFailure) as raised:
        judged(Findings(), lambda: session.request("time", stage="timing on 'small'"))
    assert raised.value.verdict == Verdict.RUNTIME_ERROR
    assert raised.value.message == ("the candidate's process sent a malformed reply during timing on 'small': "
                                    "times_us.1: Input should be a finite number")
    assert "verifier" not in raised.value.message


def test_a_reply_json_cannot_parse_is_malformed_too():
    session = _runner_answers(_frame('{"ok": true, "calls": ' + "9" * 5000 + "}"), _frame("[" * 100_000))
    for _ in range(2):
        with pytest.raises(RunnerMisbehaved, match="malformed message"):
            session.request("loop")


def test_a_tensor_at_a_misaligned_offset_is_refused_as_outside_the_region():
    from engine.wire.shared import SharedRegion

    session = RunnerSession(Channel(socket.socketpair()[0]), "cpu", region=SharedRegion.create(4096, pin=False))
    reply = decode("call", {"ok": True, "outputs": [{**TENSOR, "offset": 1}]})
    with pytest.raises(RunnerMisbehaved, match="outside the shared region"):
        session.take(reply.outputs, "forward")


def test_a_well_formed_failure_report_is_still_the_candidates_failure():
    session = _runner_answers(_frame({"ok": False, "error": {"exception": "ZeroDivisionError", "message": "oops"}}))
    with pytest.raises(CandidateError) as raised:
        session.request("call", stage="forward on 'small'")
    assert raised.value.report == {"stage": "forward on 'small'", "exception": "ZeroDivisionError", "message": "oops"}


def test_the_channel_refuses_a_frame_over_its_limit():
    judge_end, runner_end = socket.socketpair()
    runner_end.sendall(struct.pack("!IQ", 2**31, 0))
    with pytest.raises(ProtocolError, match="over the limit"):
        Channel(judge_end).receive()
