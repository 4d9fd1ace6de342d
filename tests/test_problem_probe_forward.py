"""One configuration of a KernelBench file, probed as KernelBench calls it: in training mode, on meta
tensors where they suffice, with the FLOPs of one call counted."""

from __future__ import annotations

import textwrap

import pytest

from engine.untrusted.probe.forward import StageFailure, probe_config, run_config

MATMUL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, a, b):
            return torch.matmul(a, b)

    M = 64
    K = 32
    N = 16

    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, N)]

    def get_init_inputs():
        return []
""")

RECURRENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, kind, batch_first, bidirectional, proj_size):
            super().__init__()
            extra = {"proj_size": proj_size} if kind == "LSTM" else {}
            self.rnn = getattr(nn, kind)(12, 10, num_layers=2, batch_first=batch_first,
                                         bidirectional=bidirectional, **extra)

        def forward(self, x):
            return self.rnn(x)

    batch_size = 3
    steps = 7

    def get_inputs():
        return [torch.randn(batch_size, steps, 12)]

    def get_init_inputs():
        return [KIND, True, BIDIRECTIONAL, PROJ]
""")


def test_a_matmul_counts_two_flops_per_multiply_add_and_every_byte_once():
    result = run_config(MATMUL, "mm.py", {}, "meta")
    assert result["ran_on"] == "meta"
    assert result["outputs"] == [{"shape": [64, 16], "dtype": "float32"}]
    assert result["flops"] == 2 * 64 * 32 * 16
    assert result["bytes"] == 4 * (64 * 32 + 32 * 16 + 64 * 16)


def test_sizes_of_the_configuration_are_used():
    result = run_config(MATMUL, "mm.py", {"M": 5}, "meta")
    assert result["inputs"][0]["shape"] == [5, 32]


@pytest.mark.parametrize(("kind", "bidirectional", "proj"), [("LSTM", False, 0), ("LSTM", True, 4),
                                                             ("GRU", True, 0), ("RNN", False, 0)])
def test_recurrent_layers_on_meta_tensors_have_the_shapes_of_a_real_run(kind, bidirectional, proj):
    source = RECURRENT.replace("KIND", repr(kind)).replace("BIDIRECTIONAL", str(bidirectional))
    source = source.replace("PROJ", str(proj))
    meta, real = run_config(source, "rnn.py", {}, "meta"), run_config(source, "rnn.py", {}, "cpu")
    assert meta["outputs"] == real["outputs"]
    assert meta["flops"] > 0


def test_batchnorm_in_training_mode_rejects_a_batch_of_one_on_meta_tensors():
    source = MATMUL.replace("return torch.matmul(a, b)", "return torch.nn.functional.batch_norm("
                            "torch.matmul(a, b), None, None, training=True)")
    with pytest.raises(StageFailure) as caught:
        run_config(source, "bn.py", {"M": 1}, "meta")
    assert caught.value.stage == "Model.forward(*get_inputs())"
    assert "Expected more than 1 value per channel when training" in str(caught.value.cause)


def test_a_value_read_in_forward_falls_back_to_a_real_cpu_run():
    source = MATMUL.replace("return torch.matmul(a, b)", "return torch.matmul(a, b) / (a.max().item() + 1)")
    result = probe_config(source, "item.py", "as-written", {})
    assert result["ok"] and result["ran_on"] == "cpu"


def test_a_failure_is_one_line_with_the_stage_and_the_files_line():
    source = MATMUL.replace("return torch.matmul(a, b)", "raise RuntimeError('broken\\nsecond line')")
    result = probe_config(source, "mine.py", "batch-1", {})
    assert not result["ok"]
    assert result["error"] == "Model.forward(*get_inputs()) raised RuntimeError: broken (line 7)"


def test_a_missing_module_is_named_as_such():
    result = probe_config("import refinery_absent_module\n", "mine.py", "as-written", {})
    assert result == {"name": "as-written", "ok": False, "fatal": True,
                      "error": "needs the module refinery_absent_module, which is not installed"}
