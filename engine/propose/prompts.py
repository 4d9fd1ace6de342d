"""Prompts built from template files; each candidate stores the template's name and content hash,
so a change of wording is visible in the data. Hidden configurations never reach a prompt."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from engine.problems.model import Config, Problem
from engine.propose.base import ProposalContext
from engine.propose.reference_view import prompt_reference, without_machine_paths

TEMPLATES = Path(__file__).parent / "templates"
MAX_LOG_CHARS = 2500


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    template: str  # "refine_pytorch@1a2b3c4d"


TEMPLATE_NAMES = ("system", "refine_pytorch", "refine_c", "refine_c_cpu", "parent", "followup")


def template_text(name: str) -> str:
    """A shipped template as it is on disk (what a run uses unless it was given its own)."""
    if name not in TEMPLATE_NAMES:
        raise KeyError(f"no prompt template {name!r}; one of {', '.join(TEMPLATE_NAMES)}")
    return (TEMPLATES / f"{name}.md").read_text()


def _template(name: str, overrides: dict[str, str] | None = None) -> tuple[str, str]:
    """(text, "name@hash"): a run's own wording where it has one; the hash says which wording was used."""
    text = (overrides or {}).get(name) or template_text(name)
    return text, f"{name}@{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def prompt_configs(problem: Problem, target: str) -> list[Config]:
    """The shown configurations a candidate of `target` is run on: on the CPU only those the CPU runs
    (`cpu_sized`: a GPU-sized one would only time out), never a hidden one."""
    if target == "c-cpu":
        from engine.verify.prepare import cpu_sized

        return [c for c in cpu_sized(problem)[0] if not c.hidden]
    return list(problem.visible_configs)


def _configs_text(context: ProposalContext, target: str) -> str:
    return "\n".join(f"- {c.name}: " + ", ".join(f"{k}={v}" for k, v in c.params.items())
                     for c in prompt_configs(context.problem, target))


def _parent_text(context: ProposalContext) -> str:
    parent = context.parent
    if parent is None:
        return ""
    text, _ = _template("parent", context.templates)
    log = parent.log[-MAX_LOG_CHARS:] if parent.verdict not in ("correct", "needs_gpu") else ""
    return text.format(
        fence={"python": "python", "c": "c"}.get(parent.language, "cuda"), source=parent.source, verdict=parent.verdict,
        speedup=f", {parent.speedup:.2f}× the baseline" if parent.speedup else "", message=parent.message,
        log=f"\n```\n{log}\n```\n" if log else "",
        feedback=(f"\nDiagnosis of this candidate, most important first:\n{parent.feedback}\n"
                  if parent.feedback else ""),
    )


TARGET_TEMPLATES = {"cuda": {"pytorch": "refine_pytorch", "c": "refine_c"}, "c-cpu": {"c": "refine_c_cpu"}}


def build_prompt(context: ProposalContext, target: str | None = None) -> Prompt:
    """The prompt that asks for a candidate of `target` (the run's own, `ProposalContext.target`, unless
    named): CUDA on a GPU run, C with host pointers for a C problem on a CPU run (the CPU form of a C
    problem, which its CPU implementations answer and datasets file under this prompt)."""
    problem = context.problem
    target = target or context.target
    name = TARGET_TEMPLATES.get(target, {}).get(problem.kind)
    if name is None:
        raise ValueError(f"no {target} task for a {problem.kind} problem")
    text, version = _template(name, context.templates)
    allowed = f" (allowed here: {', '.join(problem.allowed_torch_ops)})" if problem.allowed_torch_ops else ""
    hint = f"\n## Guidance from the engineer steering this run\n\n{context.hint}\n" if context.hint else ""
    reference = prompt_reference(problem.reference_source, python=problem.kind == "pytorch")
    user = text.format(
        title=problem.title, description=problem.description, reference=reference.text + reference.note,
        configs=_configs_text(context, target), allowed=allowed, dtype=problem.dtype, entry=problem.entry or "",
        parent=_parent_text(context), hint=hint,
    )
    system, _ = _template("system", context.templates)
    return Prompt(system=system.strip(), user=without_machine_paths(user), template=version)


def build_followup(context: ProposalContext) -> Prompt:
    """Conversation mode's next question: the verdict and diagnosis of the model's last file (which the
    conversation already holds), and the engineer's hint; never the hidden configurations."""
    parent = context.parent
    text, version = _template("followup", context.templates)
    log = parent.log[-MAX_LOG_CHARS:] if parent.verdict not in ("correct", "needs_gpu") else ""
    user = text.format(
        verdict=parent.verdict, speedup=f", {parent.speedup:.2f}× the baseline" if parent.speedup else "",
        message=parent.message, log=f"\n```\n{log}\n```\n" if log else "",
        feedback=(f"\nDiagnosis, most important first:\n{parent.feedback}\n" if parent.feedback else ""),
        hint=f"\nGuidance from the engineer steering this run: {context.hint}\n" if context.hint else "")
    system, _ = _template("system", context.templates)
    return Prompt(system=system.strip(), user=user, template=version)
