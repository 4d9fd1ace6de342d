"""The offline proposer: climbs through a problem's shipped implementations and their tunables.

It reads the parent's findings and bottleneck class the same way an engineer would: uncoalesced
access → an implementation whose strategy coalesces; no vector loads → a vectorised one; low
occupancy or a small grid → retune the block size; and so on. Deterministic under a seed.
"""

from __future__ import annotations

import random
import re

from engine.problems.model import Implementation, Problem
from engine.propose.base import EXHAUSTED, Proposal, ProposalContext

# Which strategies answer which feedback tools (names as the feedback registry reports them).
FINDING_STRATEGIES: dict[str, tuple[str, ...]] = {
    "coalescing": ("coalesced", "shared-tiling", "vectorized"),
    "vectorization": ("vectorized",),
    "bank-conflicts": ("shared-tiling",),
    "tensor-cores": ("tensor-core",),
    "fusion": ("fusion",),
    "barrier-placement": ("warp-shuffle", "register-tiling"),
    "atomics": ("warp-shuffle", "shared-tiling"),
    "register-spills": ("shared-tiling", "coalesced"),
    "occupancy": (),  # answered by retuning
    "launch-configuration": ("grid-stride",),
    "divergence": ("warp-shuffle",),  # a tree reduction with sequential addressing or shuffles keeps warps whole
    "imbalanced-work": ("warp-shuffle", "coalesced"),  # a warp per row shares a long row among 32 lanes
    "unrolling": ("loop-unrolling",),
}
RETUNE_FINDINGS = frozenset({"occupancy", "launch-configuration", "register-spills"})
# Without findings, the order in which an engineer would try strategies.
STRATEGY_LADDER = ("naive", "coalesced", "grid-stride", "vectorized", "warp-shuffle", "shared-tiling",
                   "loop-unrolling", "register-tiling", "fusion", "tensor-core", "cpu-naive", "cpu-blocked",
                   "cpu-vectorized", "other")


def _constant_pattern(language: str, name: str) -> re.Pattern:
    if language == "python":
        return re.compile(rf"^(?P<head>{re.escape(name)}\s*=\s*)(?P<value>[-0-9.eE]+)(?P<tail>.*)$", re.M)
    return re.compile(rf"^(?P<head>\s*#\s*define\s+{re.escape(name)}\s+)(?P<value>[-0-9.eE]+)(?P<tail>.*)$", re.M)


def set_tunables(source: str, language: str, values: dict[str, int | float]) -> str:
    """The source with each named module constant / #define set to the given value."""
    for name, value in values.items():
        pattern = _constant_pattern(language, name)
        if not pattern.search(source):
            raise ValueError(f"tunable {name} is not a constant in this source")
        source = pattern.sub(lambda m, v=value: f"{m['head']}{v}{m['tail']}", source, count=1)
    return source


def current_tunables(impl: Implementation) -> dict[str, int | float]:
    values = {}
    for name in impl.tunables:
        match = _constant_pattern(impl.language, name).search(impl.source)
        if match:
            text = match["value"]
            values[name] = float(text) if any(c in text for c in ".eE") else int(text)
    return values


def signature(impl: Implementation, tunables: dict[str, int | float]) -> str:
    knobs = ",".join(f"{k}={v}" for k, v in sorted(tunables.items()))
    return f"{impl.name}[{knobs}]"


BASELINE_STRATEGIES = ("naive", "cpu-naive")  # where the ladder starts: what candidates are measured against


def library_refusal(problem: Problem) -> str | None:
    """Why the library proposer has nothing to propose for `problem`, or None where it has a ladder to climb.

    It climbs through a problem's shipped implementations and their tunables; an imported problem ships none (a
    KernelBench file) or only its baselines (a C program's own kernel, copied as cpu-naive, and the importer's
    one-thread CUDA port), so a library run was one round measuring the reference against itself (or the port,
    the GPU's baseline) and then nothing left. Said before a run starts, by the New run page and `refinery run`,
    in these words; the run is refused."""
    if any(not (i.strategy in BASELINE_STRATEGIES and not i.tunables) for i in problem.implementations):
        return None
    ships = ("ships no implementation" if not problem.implementations else
             "ships only its baselines (" + ", ".join(i.name for i in problem.implementations) +
             "), which candidates are measured against")
    imported = " (an imported problem brings its reference, nothing to climb from)" if problem.source != "builtin" \
        else ""
    return (f"The library proposer has nothing to propose for {problem.slug}: it climbs through a problem's shipped "
            f"implementations and their tunable constants, and {problem.slug} {ships}{imported}. Use the LLM "
            "proposer, which writes its own candidates.")


class LibraryProposer:
    name = "library"

    def usable_implementations(self, problem: Problem, gpu: bool) -> list[Implementation]:
        """CUDA ones on a GPU; on a CPU, the CPU ones if the problem ships any (they run), else CUDA."""
        cuda = [i for i in problem.implementations if i.device == "cuda"]
        cpu = [i for i in problem.implementations if i.device == "cpu"]
        return cuda if gpu or not cpu else cpu

    def _options(self, problem: Problem, context: ProposalContext) -> list[tuple[Implementation, dict, str]]:
        """Every (implementation, tunables) not yet evaluated anywhere in the run, best first.

        A library candidate's code depends only on its implementation and settings, never on its
        parent, so the same signature under another parent would be the same code measured again.
        """
        impls = self.usable_implementations(problem, context.gpu)
        parent = context.parent
        tried = {sig for _, sig in context.tried}
        parent_impl = next((i for i in impls if parent and i.name == parent.proposal.get("implementation")), None)
        findings = parent.findings if parent else ()
        wanted = [s for f in findings for s in FINDING_STRATEGIES.get(f, ())]
        ladder_pos = {s: i for i, s in enumerate(STRATEGY_LADDER)}
        parent_rank = ladder_pos.get(parent_impl.strategy, -1) if parent_impl else -1
        options: list[tuple[float, Implementation, dict, str]] = []
        for impl in impls:
            base = current_tunables(impl)
            variants = [dict(base)]
            for name, values in impl.tunables.items():
                variants += [{**base, name: v} for v in values if v != base.get(name)]
            for tunables in variants:
                sig = signature(impl, tunables)
                if sig in tried or (parent and sig == parent.proposal.get("signature")):
                    continue
                score = 0.0
                if parent is None:
                    score = 10.0 if impl.strategy in ("naive", "cpu-naive") and tunables == base else 0.0
                else:
                    if impl.strategy in wanted:
                        score += 5.0 - wanted.index(impl.strategy) * 0.1
                    if impl is parent_impl and tunables != base and RETUNE_FINDINGS & set(findings):
                        score += 4.0
                    if parent.verdict not in ("correct", "needs_gpu") and impl is parent_impl:
                        score -= 3.0  # a failing parent: move away rather than retune it
                    rank = ladder_pos.get(impl.strategy, 0)
                    score += 1.0 if rank > parent_rank else 0.0
                    score += 0.5 if tunables == base else 0.0
                options.append((score, impl, tunables, sig))
        # Ties are broken by the seed, not by file order, and alike for every sample of a step, so that
        # samples 0, 1, 2 … take distinct options.
        rng = random.Random(f"{context.seed}:{context.step}:{problem.slug}")
        rng.shuffle(options)
        options.sort(key=lambda o: -o[0])
        return [(impl, tunables, sig) for _, impl, tunables, sig in options]

    def propose(self, context: ProposalContext) -> Proposal:
        options = self._options(context.problem, context)
        if context.sample >= len(options):  # samples spread over the options; none left for this one
            return Proposal(source="", language="python", origin="library", signature=EXHAUSTED,
                            error="every shipped implementation and tunable setting was already tried in this run")
        # Spread the samples of one step over the top options.
        impl, tunables, sig = options[context.sample]
        source = set_tunables(impl.source, impl.language, {k: v for k, v in tunables.items()
                                                           if v != current_tunables(impl).get(k)})
        reason = ", ".join(context.parent.findings) if context.parent and context.parent.findings else "ladder"
        return Proposal(source=source, language=impl.language, origin="library", signature=sig,
                        strategy=impl.strategy,
                        meta={"implementation": impl.name, "tunables": tunables, "signature": sig,
                              "because": reason, "hint": context.hint})
