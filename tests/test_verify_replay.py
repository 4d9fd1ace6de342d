"""The judge's own sign of a replayed reference (judge/replay.py): the reference's rounding in the outputs."""

from __future__ import annotations

import torch

from engine.verify.judge import replay


def _matmul_mean(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    a, b = torch.randn(256, 512, generator=generator), torch.randn(512, 256, generator=generator)
    return a, b, torch.matmul(a, b).mean(1), torch.matmul(a.double(), b.double()).mean(1)


def test_the_references_own_result_is_an_echo_and_an_own_order_is_not():
    a, b, native, wide = _matmul_mean()
    own = (a * (b.sum(1) / b.shape[1])).sum(1)
    assert replay.echo([native.clone()], [native], [wide]).replayed
    mine = replay.echo([own], [native], [wide])
    assert mine.telling and not mine.replayed and mine.ratio > 0.3


def test_a_flag_needs_every_telling_call_to_echo():
    a, b, native, wide = _matmul_mean()
    own = (a * (b.sum(1) / b.shape[1])).sum(1)
    echoed = replay.echo([native.clone()], [native], [wide])
    assert replay.replay_flag([echoed, echoed]) is not None
    assert replay.replay_flag([echoed, replay.echo([own], [native], [wide])]) is None
    assert replay.replay_flag([None]) is None


def test_an_elementwise_reference_has_no_order_to_recognise():
    x = torch.randn(1 << 14, generator=torch.Generator().manual_seed(1))
    relu = torch.relu(x)
    assert not replay.echo([relu.clone()], [relu], [torch.relu(x.double())]).telling
    assert not replay.accumulates({"aten::gelu", "aten::relu", "aten::add"})
    assert replay.accumulates({"aten::mm", "aten::mean"}) and replay.accumulates({"aten::_softmax"})


def test_outputs_without_a_float64_answer_or_of_another_shape_say_nothing():
    _, _, native, wide = _matmul_mean()
    assert replay.echo([native], [native], None) is None
    assert replay.echo([native[:10]], [native], [wide]) is None
