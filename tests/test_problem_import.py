"""Importing KernelBench files as their users have them: sizes written as expressions or computed from
others, every configuration run forward once in training mode inside the sandbox, failures named in one
line with the user's file and the configuration, and the CLI's exit status saying whether all came in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app
from engine.problem_import import import_path
from engine.problem_import.probe_batch import ProbeSession
from engine.problems import load_problem

FIXTURES = Path(__file__).parent / "fixtures"
LEVEL = FIXTURES / "kernelbench" / "level1"
HANG_TIMEOUT_S = 8


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The fixture level imported once, through one session (its files share one warm sandbox)."""
    dest = tmp_path_factory.mktemp("home")
    with ProbeSession(timeout_s=HANG_TIMEOUT_S) as session:
        report = import_path(LEVEL.parent, dest_root=dest, session=session)
        servers = session.started_servers
    problems = {p.slug.removeprefix("kb-level1-"): p for p in report.imported}
    errors = {e.path.name: str(e) for e in report.errors}
    return {"report": report, "problems": problems, "errors": errors, "servers": servers}


def test_files_that_run_at_their_own_sizes_are_imported_and_the_rest_rejected(imported):
    assert sorted(imported["problems"]) == ["1-batchnorm1d-training", "2-dropout", "3-expression-sizes",
                                            "4-dependent-sizes", "8-huge-input", "9-data-dependent"]
    assert sorted(imported["errors"]) == ["5_Forward_Raises.py", "6_Forward_Hangs.py", "7_Needs_Module.py"]


def test_one_warm_sandbox_probes_every_file(imported):
    assert imported["servers"] == 1


def test_a_batch_of_one_that_batchnorm_refuses_in_training_mode_is_replaced_with_the_reason(imported):
    problem = imported["problems"]["1-batchnorm1d-training"]
    assert [c.name for c in problem.configs] == ["batch-2", "as-written", "batch-9"]
    assert problem.configs[-1].hidden
    note = next(n for n in imported["report"].notes if "1_BatchNorm1d_Training.py" in n)
    assert "'batch-1' does not run (Model.forward(*get_inputs()) raised ValueError: Expected more than 1 value " \
           "per channel when training" in note
    assert note.endswith("'batch-2' is used instead")


def test_what_the_import_noticed_is_kept_with_the_problem(imported):
    problem = load_problem(imported["problems"]["1-batchnorm1d-training"].folder, source="import")
    assert any(n.startswith("configuration 'batch-1' does not run (") and n.endswith("'batch-2' is used instead")
               for n in problem.notes), problem.notes
    assert problem.warnings == ()


def test_dropout_in_training_mode_imports(imported):
    problem = imported["problems"]["2-dropout"]
    assert [c.params["batch_size"] for c in problem.configs] == [1, 8, 5]


def test_sizes_written_as_expressions_get_derived_and_hidden_configurations(imported):
    problem = imported["problems"]["3-expression-sizes"]
    assert [c.params for c in problem.configs] == [{"N": 1, "K": 65}, {"N": 64, "K": 65}, {"N": 33, "K": 65}]
    assert problem.hidden_configs
    assert [str(v) for v in problem.config("N-33").signature.inputs] == ["float32[33, 65]", "float32[65, 33]"]


def test_a_size_computed_from_the_batch_follows_it_in_every_configuration(imported):
    problem = imported["problems"]["4-dependent-sizes"]
    shapes = {c.name: c.signature.inputs[0].shape for c in problem.configs}
    assert shapes == {"batch-1": (1, 3, 4, 4), "as-written": (6, 3, 4, 4), "batch-5": (5, 3, 4, 4)}
    assert [str(v) for v in problem.config("batch-1").signature.init] == ["48"]


def test_every_configuration_carries_flops_and_bytes(imported):
    problem = imported["problems"]["4-dependent-sizes"]
    small = problem.config("batch-1")
    assert problem.flops(small) == 2 * 48 * 48  # the linear layer: torch counts addmm as its matrix product
    assert problem.min_bytes(small) == 4 * (48 + 48 * 48 + 48 + 48)  # input, weight, bias, output


def test_a_huge_input_is_probed_on_meta_tensors(imported):
    config = imported["problems"]["8-huge-input"].config("as-written")
    assert config.signature.ran_on == "meta"
    assert config.signature.inputs[0].shape == (65536, 262144)


def test_a_forward_that_reads_values_is_run_for_real_on_the_cpu(imported):
    assert imported["problems"]["9-data-dependent"].config("as-written").signature.ran_on == "cpu"


def test_a_forward_that_raises_is_rejected_naming_the_configuration_and_the_cause(imported):
    assert imported["errors"]["5_Forward_Raises.py"] == (
        f"{LEVEL / '5_Forward_Raises.py'}: configuration 'as-written': Model.forward(*get_inputs()) raised "
        "RuntimeError: this reference is broken (line 7)")


def test_a_forward_that_never_returns_is_rejected_after_its_time(imported):
    assert imported["errors"]["6_Forward_Hangs.py"] == (
        f"{LEVEL / '6_Forward_Hangs.py'}: timed out after {HANG_TIMEOUT_S} s in Model.forward(*get_inputs()) "
        "at configuration 'as-written'")


def test_a_missing_module_is_named_as_such(imported):
    assert imported["errors"]["7_Needs_Module.py"] == (
        f"{LEVEL / '7_Needs_Module.py'}: needs the module refinery_absent_module, which is not installed")


def test_messages_name_the_users_file_never_our_copy(imported):
    for text in [*imported["errors"].values(), *imported["report"].notes]:
        assert text.startswith(str(LEVEL) + "/")
        assert "refinery-sandbox" not in text and "/scratch" not in text and "reference.py" not in text


def test_a_file_past_the_memory_limit_is_rejected_and_says_so(tmp_path):
    report = import_path(FIXTURES / "kernelbench_memory", dest_root=tmp_path, memory_mb=1536)
    assert not report.imported
    assert "memory" in str(report.errors[0]) and str(report.errors[0]).startswith(str(FIXTURES))


def _cli(*args: str):
    return CliRunner().invoke(app, ["problems", *args], catch_exceptions=False)


def test_cli_exits_non_zero_when_a_file_is_rejected(refinery_home, tmp_path):
    folder = tmp_path / "level1"
    folder.mkdir()
    for name in ("2_Dropout.py", "5_Forward_Raises.py"):
        shutil.copy(LEVEL / name, folder / name)
    result = _cli("import", str(folder))
    assert result.exit_code == 1
    assert "imported kb-level1-2-dropout" in result.output and "rejected" in result.output
    assert "1 imported, 1 rejected." in result.output


def test_cli_says_when_a_folder_holds_no_problem(refinery_home, tmp_path):
    (tmp_path / "README.md").write_text("not a problem\n")
    result = _cli("import", str(tmp_path))
    assert result.exit_code == 1
    assert "holds no problem" in " ".join(result.output.split())


def test_cli_shows_shapes_dtypes_init_arguments_flops_and_bytes_per_configuration(refinery_home):
    assert _cli("import", str(LEVEL / "4_Dependent_Sizes.py")).exit_code == 0
    output = _cli("show", "kb-level1-4-dependent-sizes", "--hidden").output
    for expected in ("batch-1 — batch_size=1", "inputs   float32[1, 3, 4, 4]", "outputs  float32[1, 48]",
                     "init     48", "batch-5 (hidden)", "inputs   float32[5, 3, 4, 4]", "GFLOP", "MB minimum"):
        assert expected in output, expected


def test_a_file_that_kills_the_probing_process_is_blamed_alone(tmp_path):
    with ProbeSession(timeout_s=60) as session:
        report = import_path(FIXTURES / "kernelbench_hostile", dest_root=tmp_path, session=session)
    assert [p.slug for p in report.imported] == ["kb-level1-2-dropout"]
    assert [e.path.name for e in report.errors] == ["1_Kills_The_Prober.py"]
    assert "the probe process died while probing it" in str(report.errors[0])
