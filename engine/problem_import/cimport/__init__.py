"""C programs as their authors have them, imported as problems: a `.c` file or a folder of them, PolyBench-style
(size macros and datasets in the kernel's header, `init_array`, a `kernel_*` function, main; the suite's
polybench.h found by walking up or named with --include) or a plain function with a main that sets sizes
and data.

Offers `import_program` (one file) and `import_c` (a file or folder) with their `ImportOptions`, the
`CImport` record each returns (the problem or why not, notes, the reference's CPU seconds per
configuration, whether the generated CUDA port compiles), and `find_programs`.
"""

from engine.problem_import.cimport.pipeline import CImport, ImportOptions, import_c, import_program
from engine.problem_import.cimport.sources import find_programs

__all__ = ["CImport", "ImportOptions", "find_programs", "import_c", "import_program"]
