"""Problems brought in from outside: a KernelBench checkout, level folder or uploaded file, a C program or a
folder of them (`cimport`), or a folder in our own format (`importer.import_path`); and a problem's own code run
in the sandbox, at import (`probe_batch`), to validate it (`probe.validate`) or to show its signatures
(`signatures`). Above `engine.problems` (the records it writes), `engine.compilation` and `engine.sandbox`.
"""

from engine.problem_import.importer import ImportReport, import_path
from engine.problem_import.probe import validate

__all__ = ["ImportReport", "import_path", "validate"]
