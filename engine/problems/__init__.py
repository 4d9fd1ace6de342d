"""Problems: the `Problem`/`Config` records and the library that reads them (built in, or imported before).

Offers `scan_all`/`get_problem` to read problems and the `Problem`/`Config` records (a configuration of an
imported problem carries its `Signature`: shapes, dtypes, FLOPs and bytes). Bringing new problems in and running
their own code (KernelBench files, C programs, validation in the sandbox) is `engine.problem_import`'s job: it
builds and sandboxes, which read these records, so it sits above them.
"""

from engine.problems.library import (
    BUILTIN_DIR,
    LibraryScan,
    ProblemError,
    get_problem,
    load_problem,
    scan,
    scan_all,
)
from engine.problems.model import CArg, Config, Expectation, Implementation, Problem, Signature, ValueSpec

__all__ = [
    "BUILTIN_DIR", "CArg", "Config", "Expectation", "Implementation", "LibraryScan", "Problem", "ProblemError",
    "Signature", "ValueSpec", "get_problem", "load_problem", "scan", "scan_all",
]
