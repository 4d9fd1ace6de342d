"""The offline proposer climbs: starts naive, answers findings with the strategy that fixes them,
retunes on occupancy/launch findings, never repeats itself, and is deterministic under a seed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.propose import LibraryProposer, ParentView, ProposalContext, library_refusal
from engine.propose.library import set_tunables
from tests.test_problem_loader import GOOD_TOML, write_problem

IMPL = textwrap.dedent('''
    import torch
    BLOCK_SIZE = 256
    CUDA_SOURCE = r"""extern "C" __global__ void k(float* x) {{ }}  // {name}"""
    class ModelNew(torch.nn.Module):
        def forward(self, x):
            return x
''')


@pytest.fixture
def problem(tmp_path):
    toml = GOOD_TOML
    for name, strategy in (("naive", "naive"), ("coalesced", "coalesced"), ("vec4", "vectorized"),
                           ("tiled", "shared-tiling")):
        toml += (f'\n[[implementations]]\nname = "{name}"\nfile = "impls/{name}.py"\nstrategy = "{strategy}"\n'
                 f'tunables = {{ BLOCK_SIZE = [128, 256, 512] }}\n')
    folder = write_problem(tmp_path, "relu", toml=toml)
    (folder / "impls").mkdir()
    for name in ("naive", "coalesced", "vec4", "tiled"):
        (folder / "impls" / f"{name}.py").write_text(IMPL.format(name=name))
    return load_problem(folder)


def ctx(problem, parent=None, sample=0, seed=0, tried=frozenset()):
    return ProposalContext(problem=problem, parent=parent, step=1, sample=sample, seed=seed, gpu=True, tried=tried)


def parent_of(proposal, findings=(), verdict="correct", cid=1):
    return ParentView(candidate_id=cid, source=proposal.source, language=proposal.language, verdict=verdict,
                      findings=tuple(findings), proposal=proposal.meta)


def test_a_run_starts_from_the_naive_port(problem):
    proposal = LibraryProposer().propose(ctx(problem))
    assert proposal.meta["implementation"] == "naive" and proposal.origin == "library"


def test_coalescing_finding_leads_to_a_coalescing_strategy(problem):
    root = LibraryProposer().propose(ctx(problem))
    child = LibraryProposer().propose(ctx(problem, parent_of(root, ["coalescing"])))
    assert child.strategy in ("coalesced", "shared-tiling", "vectorized")
    assert child.meta["because"] == "coalescing"


def test_vectorization_finding_leads_to_the_vectorized_implementation(problem):
    root = LibraryProposer().propose(ctx(problem))
    child = LibraryProposer().propose(ctx(problem, parent_of(root, ["vectorization"])))
    assert child.meta["implementation"] == "vec4"


def test_occupancy_finding_retunes_the_parent(problem):
    root = LibraryProposer().propose(ctx(problem))
    coalesced = LibraryProposer().propose(ctx(problem, parent_of(root, ["coalescing"])))
    child = LibraryProposer().propose(ctx(problem, parent_of(coalesced, ["occupancy"], cid=2)))
    assert child.meta["implementation"] == coalesced.meta["implementation"]
    assert child.meta["tunables"]["BLOCK_SIZE"] != 256
    assert f"BLOCK_SIZE = {child.meta['tunables']['BLOCK_SIZE']}" in child.source


def test_memory_prevents_proposing_the_same_thing_twice_under_a_parent(problem):
    root = LibraryProposer().propose(ctx(problem))
    parent = parent_of(root, ["vectorization"])
    first = LibraryProposer().propose(ctx(problem, parent))
    second = LibraryProposer().propose(ctx(problem, parent, tried=frozenset({(1, first.signature)})))
    assert second.signature != first.signature


def test_code_measured_under_another_parent_is_not_proposed_again(problem):
    root = LibraryProposer().propose(ctx(problem))
    first = LibraryProposer().propose(ctx(problem, parent_of(root, ["vectorization"])))
    elsewhere = frozenset({(7, first.signature)})  # the same implementation and settings, under candidate 7
    again = LibraryProposer().propose(ctx(problem, parent_of(root, ["vectorization"]), tried=elsewhere))
    assert again.signature != first.signature


def test_samples_beyond_what_is_left_are_exhausted_not_repeated(problem):
    root = LibraryProposer().propose(ctx(problem))
    everything_but_two = frozenset((1, f"{n}[BLOCK_SIZE={b}]") for n in ("naive", "coalesced", "vec4", "tiled")
                                   for b in (128, 256, 512) if (n, b) not in {("vec4", 128), ("tiled", 512)})
    samples = [LibraryProposer().propose(ctx(problem, parent_of(root), sample=s, tried=everything_but_two))
               for s in range(3)]
    assert {p.signature for p in samples[:2]} == {"vec4[BLOCK_SIZE=128]", "tiled[BLOCK_SIZE=512]"}
    assert samples[2].exhausted and samples[2].error


def test_same_seed_same_proposals_and_samples_differ(problem):
    root = LibraryProposer().propose(ctx(problem))
    a = [LibraryProposer().propose(ctx(problem, parent_of(root), sample=s, seed=7)).signature for s in range(3)]
    b = [LibraryProposer().propose(ctx(problem, parent_of(root), sample=s, seed=7)).signature for s in range(3)]
    assert a == b and len(set(a)) == 3


def test_exhausted_library_says_so(problem):
    root = LibraryProposer().propose(ctx(problem))
    everything = frozenset((1, f"{n}[BLOCK_SIZE={b}]") for n in ("naive", "coalesced", "vec4", "tiled")
                           for b in (128, 256, 512))
    proposal = LibraryProposer().propose(ctx(problem, parent_of(root), tried=everything))
    assert proposal.error and "already tried" in proposal.error


def test_set_tunables_rewrites_python_constants_and_cuda_defines():
    assert "BLOCK_SIZE = 512" in set_tunables("BLOCK_SIZE = 256\n", "python", {"BLOCK_SIZE": 512})
    assert "#define TILE 32 // x" in set_tunables("#define TILE 16 // x\n", "cuda", {"TILE": 32})
    with pytest.raises(ValueError):
        set_tunables("x = 1\n", "python", {"TILE": 2})


C_PROGRAM = Path(__file__).parent / "fixtures" / "c_import" / "plain" / "scale_add.c"
KERNELBENCH_FILE = Path(__file__).parent / "fixtures" / "kernelbench" / "level1" / "2_Dropout.py"


@pytest.fixture
def imported_c(refinery_home):
    """A C program imported into the data folder: its reference, its copy as cpu-naive and a one-thread port."""
    from engine.problem_import import import_path

    (problem,) = import_path(C_PROGRAM).imported
    return problem


def test_the_library_has_nothing_for_an_imported_c_program_and_says_to_use_the_llm(imported_c):
    said = library_refusal(imported_c)
    assert said is not None and "has nothing to propose for c-scale-add" in said
    assert "ships only its baselines" in said and "Use the LLM proposer" in said


def test_the_library_has_nothing_for_an_imported_kernelbench_file(tmp_path):
    from engine.problem_import import import_path

    (problem,) = import_path(KERNELBENCH_FILE, dest_root=tmp_path).imported
    assert "ships no implementation" in (library_refusal(problem) or "")


def test_the_library_has_a_ladder_for_every_builtin_problem():
    from engine.problems import scan_all

    assert [p.slug for p in scan_all().problems if p.source == "builtin" and library_refusal(p)] == []


def test_refinery_run_refuses_the_library_on_an_imported_problem_before_storing_a_run(imported_c):
    from typer.testing import CliRunner

    from db import runs_repo
    from engine.cli import app

    done = CliRunner().invoke(app, ["run", "--problem", "c-scale-add", "--proposer", "library", "--rounds", "2"])
    assert done.exit_code == 1
    assert "has nothing to propose for c-scale-add" in " ".join(done.output.split())
    assert runs_repo.list_runs() == []
