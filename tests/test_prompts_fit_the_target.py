"""Prompts show the work and fit the target: the kernel and its entry point always (headers trimmed
first, and said), no machine path, C with host pointers on a CPU run over only the configurations the CPU
runs, and every export keeps the prompt the model was sent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.problem_import.cimport import import_program
from engine.problems import get_problem
from engine.propose import ProposalContext
from engine.propose.prompts import build_prompt
from engine.propose.reference_view import ABSOLUTE_PATH, MAX_REFERENCE_CHARS

SUITE = Path(__file__).parent / "fixtures" / "c_import" / "suite"


@pytest.fixture(scope="module")
def big_header_program(tmp_path_factory):
    """The PolyBench-style fixture with a polybench.h larger than the prompt's cut (PAPI-like macros)."""
    root = tmp_path_factory.mktemp("suite")
    shutil.copytree(SUITE, root / "suite")
    header = root / "suite" / "utilities" / "polybench.h"
    padding = "\n".join(f"# define POLYBENCH_PAPI_EVENT_{n} (0x{n:08x}) /* a counter PAPI may read */"
                        for n in range(400))
    header.write_text(header.read_text().replace("#endif", padding + "\n#endif"))
    assert len(header.read_text()) > MAX_REFERENCE_CHARS
    done = import_program(root / "suite" / "stencils" / "smooth" / "smooth.c", tmp_path_factory.mktemp("imported"))
    assert done.problem is not None, done.error
    return root, done.problem


def _prompt(problem, gpu: bool) -> str:
    return build_prompt(ProposalContext(problem=problem, parent=None, step=0, sample=0, seed=0, gpu=gpu)).user


@pytest.mark.parametrize("gpu", [True, False])
def test_an_imported_program_whose_header_exceeds_the_cut_shows_its_kernel_and_entry_point(big_header_program, gpu):
    root, problem = big_header_program
    prompt = _prompt(problem, gpu)
    assert "void kernel_smooth(int n, int m," in prompt
    assert "void kernel_smooth_flat(int n, int m, double alpha, double *A" in prompt
    assert "<polybench.h>: inlined here, left out of this prompt" in prompt
    assert "Left out of this prompt to fit it: the inlined header #include <polybench.h>" in prompt
    assert str(root) not in prompt and ABSOLUTE_PATH.search(prompt) is None


def test_an_imported_reference_carries_no_absolute_path_of_the_machine_that_imported_it(big_header_program):
    root, problem = big_header_program
    assert str(root) not in problem.reference_source
    assert "inlined from utilities/polybench.h" in problem.reference_source


def test_a_cpu_run_asks_for_c_with_host_pointers_over_the_configurations_the_cpu_runs():
    gemm = get_problem("gemm")
    prompt = _prompt(gemm, gpu=False)
    assert "**host**" in prompt and "device** pointer" not in prompt and "CUDA" not in prompt
    assert "- small:" in prompt and "- large:" not in prompt  # 1536³ is left out on a CPU: it would time out


def test_a_gpu_run_asks_for_cuda_with_device_pointers_over_every_shown_configuration():
    prompt = _prompt(get_problem("gemm"), gpu=True)
    assert "**device**" in prompt and "- large:" in prompt


def test_a_first_step_on_the_cpu_is_asked_exactly_the_task_the_exports_file_it_under():
    from engine.export.kinds import task_prompt

    assert _prompt(get_problem("gemm"), gpu=False) == task_prompt("gemm", "c-cpu")
    assert _prompt(get_problem("gemm"), gpu=True) == task_prompt("gemm", "cuda")


def test_every_export_keeps_the_prompt_the_model_was_sent(refinery_home, tmp_path):
    datasets = pytest.importorskip("datasets")
    from db.models import Candidate, Evaluation, Run
    from db.session import session_scope
    from engine.export import ExportFilters, export_dataset
    from tests.rank_support import stored_timing

    sent = "# Task: ReLU, as this run's own wording put it, with the engineer's hint\n"
    with session_scope() as session:
        run = Run(problem_slug="relu", proposer="llm", strategy="best-of-n", rounds_budget=1, device="NVIDIA H200")
        session.add(run)
        session.flush()
        for sample, speedup in enumerate((1.0, 3.0)):
            candidate = Candidate(run_id=run.id, problem_slug="relu", step=0, sample=sample, origin="llm",
                                  language="python", source=f"class ModelNew:\n    SAMPLE = {sample}\n",
                                  source_hash=f"s{sample}", prompt=sent, reply="reply")
            session.add(candidate)
            session.flush()
            session.add(Evaluation(candidate_id=candidate.id, verdict="correct", speedup=speedup,
                                   candidate_us=100 / speedup, baseline_us=100.0, device="NVIDIA H200",
                                   timing=stored_timing(100 / speedup), reward=0.0, reward_components={}))
    for kind, prompts in (("preferences", lambda r: [r["prompt"], r["chosen_prompt"], r["rejected_prompt"]]),
                          ("candidates", lambda r: [r["prompt"]]),
                          ("trajectories", lambda r: [t["prompt"] for t in r["turns"]])):
        result = export_dataset(kind, "jsonl", tmp_path / kind, ExportFilters(problems=("relu",)))
        rows = list(datasets.load_dataset(str(result.out_dir), next(iter(result.files)), split="train",
                                          cache_dir=str(tmp_path / f"hf-{kind}")))
        assert rows, kind
        assert {p for row in rows for p in prompts(row)} == {sent}, kind
