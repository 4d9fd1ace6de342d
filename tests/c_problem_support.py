"""A tiny C problem (y = 2x) written into a user's problem folder, with one implementation per verdict the
CPU worker path can give: shared by the tests that need a run whose rounds take seconds."""

from __future__ import annotations

from pathlib import Path

from tests.test_runs_process import TOML

# One implementation per verdict the worker path can give on a CPU: the run visits each of them.
IMPLEMENTATIONS = {
    "plain": ("cpu-naive", "for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];"),
    "last-lost": ("cpu-blocked", "for (int i = 0; i < n - 1; i++) y[i] = 2.0f * x[i]; y[n - 1] = 0.0f;"),
    "broken": ("cpu-vectorized", "y[0] = ;"),
    "crash": ("other", "*(volatile float *)0 = x[0];"),
    # correct, with a tunable: four settings, four distinct candidates for the library to try
    "unrolled": ("cpu-blocked", "int i = 0; for (; i + UNROLL <= n; i += UNROLL) for (int k = 0; k < UNROLL; k++) "
                                "y[i + k] = 2.0f * x[i + k]; for (; i < n; i++) y[i] = 2.0f * x[i];"),
}
TUNABLES = {"unrolled": ("UNROLL", (1, 2, 4, 8))}
FAST_TIMING = {"REFINERY_TIMING_MIN_TRIALS": "3", "REFINERY_TIMING_MIN_SECONDS": "0", "REFINERY_TIMING_MAX_TRIALS": "5"}


def write_c_problem(home: Path, slug: str = "ray-double",
                    names: tuple[str, ...] = ("plain", "last-lost", "broken", "crash")) -> str:
    """A tiny CPU C problem (y = 2x) in the user's problem folder, with the named implementations."""
    folder = home / "problems" / "c" / slug
    (folder / "impls").mkdir(parents=True)
    (folder / "reference.c").write_text("void scale(int n, const float *x, float *y) "
                                        "{ for (int i = 0; i < n; i++) y[i] = 2.0f * x[i]; }\n")
    toml = TOML
    for name in names:
        strategy, body = IMPLEMENTATIONS[name]
        knob = TUNABLES.get(name)
        define = f"#define {knob[0]} {knob[1][0]}\n" if knob else ""
        (folder / "impls" / f"{name}.c").write_text(f"{define}void scale(int n, const float *x, float *y) "
                                                    f"{{ {body} }}\n")
        toml += (f'\n[[implementations]]\nname = "{name}"\nfile = "impls/{name}.c"\nstrategy = "{strategy}"\n'
                 f'device = "cpu"\n')
        if knob:
            toml += f'tunables = {{ {knob[0]} = [{", ".join(map(str, knob[1]))}] }}\n'
    (folder / "problem.toml").write_text(toml)
    return slug
