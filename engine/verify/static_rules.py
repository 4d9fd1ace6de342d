"""Static integrity rules, checked before anything runs: the known shapes of reward hacking in source.

Python candidates are read with `ast` (so a comment or a docstring never trips a rule); CUDA and C
text is read with its comments stripped. Each rule names the line. Most rules are evidence only:
the OS boundary decides whether a file, a process or a socket can be reached, the judge's clock
decides whether work escaped the timed stream, the share of GPU time decides whose kernels did
the work. Only what no runtime check can see decides a verdict here (`VERDICT_RULES`): computing in
a lower precision than the problem's, deferring work into a tensor subclass, and a fallback to the
reference's ops that runs only when the candidate's own kernel fails.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from engine import python_ast
from engine.schema.verdict import IntegrityFinding

VERDICT_RULES = frozenset({"precision", "tensor-subclass", "try-fallback"})
PROTECTED_ROOTS = frozenset({"torch", "time", "cp", "cupy", "np", "numpy", "F", "nn", "builtins", "sys", "os", "gc",
                             "inspect", "math", "random", "engine", "functools", "ctypes", "triton"})
ALLOWED_TORCH_SETTINGS = frozenset({"torch.backends.cudnn.benchmark"})
PROCESS_MODULES = frozenset({"threading", "_thread", "multiprocessing", "concurrent", "subprocess", "asyncio",
                             "signal", "sched"})
FILE_MODULES = frozenset({"pickle", "shutil", "glob", "tempfile", "pathlib", "io", "fileinput", "shelve", "sqlite3",
                          "dbm", "marshal", "zipfile", "tarfile"})
NETWORK_MODULES = frozenset({"socket", "urllib", "requests", "http", "ftplib", "smtplib", "httpx", "aiohttp"})
INTROSPECTION_MODULES = frozenset({"inspect", "gc", "ctypes", "importlib", "builtins", "sysconfig", "cffi"})
FILE_CALLS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes", "fromfile", "tofile", "load",
                        "save", "listdir", "scandir", "walk", "remove", "unlink", "memmap"})
OS_PROCESS_CALLS = frozenset({"fork", "forkpty", "system", "popen", "spawnl", "spawnv", "execv", "execl", "posix_spawn",
                              "kill"})
LOWER_THAN = {  # problem dtype → precisions a candidate may not compute in
    "float64": ("half", "bfloat16", "tf32", "float32"), "float32": ("half", "bfloat16", "tf32"),
    "tf32": ("half", "bfloat16"),
}
_PY_PRECISION = {
    "half": re.compile(r"^(torch|cp|cupy|np|numpy)\.(float16|half)$|\.half$"),
    "bfloat16": re.compile(r"^torch\.bfloat16$|\.bfloat16$"),
    "tf32": re.compile(r"allow_tf32$|set_float32_matmul_precision$"),
    "float32": re.compile(r"^torch\.float32$|\.float$"),
}
_CUDA_PRECISION = {
    "half": re.compile(r"\b(__half2?|__float2half\w*|__half2float|__h(mul|add|sub|fma|div)2?|__floats2half2\w*)\b"
                       r"|\bhalf2?\s*\*|\bhalf2?\s+[A-Za-z_]\w*\s*[=;,)\[]|\(\s*half2?\s*\)"
                       r"|\bmma\.sync[\w.]*\.f16\b|wmma::fragment<[^>]*\bhalf\b"),
    "bfloat16": re.compile(r"\b(__nv_bfloat162?|nv_bfloat162?|__float2bfloat16\w*|__bfloat162float)\b"
                           r"|\bmma\.sync[\w.]*\.bf16\b"),
    "tf32": re.compile(r"wmma::precision::tf32|__float_to_tf32|\bcvt\.rna\.tf32|\.tf32\b"),
}
_C_RULES = [
    ("extra-stream", re.compile(r"\bcudaStreamCreate\w*|\bcudaStreamPerThread\b|\bcudaStreamNonBlocking\b")),
    ("threads", re.compile(r"\bpthread_create\b|\bstd::thread\b|\bstd::async\b|#\s*include\s*<thread>|\bfork\s*\(")),
    ("file-access", re.compile(r"\bf?open\s*\(|\bfopen64\b|\bfread\s*\(|\bfwrite\s*\(|\breadlink\s*\(|/proc/"
                               r"|\bstd::[io]?fstream\b|\bmmap\s*\(")),
    ("environment", re.compile(r"\bgetenv\s*\(|\bsecure_getenv\b|\benviron\b|\bsetenv\s*\(|\bputenv\s*\(")),
    ("process", re.compile(r"\bsystem\s*\(|\bpopen\s*\(|\bexec[lv]p?e?\s*\(|\bdlopen\s*\(|\bdlsym\s*\(")),
    ("hooks", re.compile(r"__attribute__\s*\(\s*\(\s*(constructor|destructor)|\bLD_PRELOAD\b|\batexit\s*\(")),
]
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class Violation:
    rule: str
    line: int | None
    detail: str

    def finding(self) -> IntegrityFinding:
        where = f"line {self.line}: " if self.line else ""
        if self.rule in VERDICT_RULES:
            return IntegrityFinding(f"static:{self.rule}", False, where + self.detail)
        return IntegrityFinding(f"static:{self.rule}", True, f"evidence only (the runtime checks decide): "
                                                              f"{where}{self.detail}", kind="evidence")


def dotted(node: ast.AST) -> str:
    """`torch.cuda.Stream` for an Attribute chain; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):
        inner = dotted(node.func)
        return f"{inner}()." + ".".join(reversed(parts)) if inner and parts else (f"{inner}()" if inner else "")
    return ""


def _root(name: str) -> str:
    return name.split(".", 1)[0].removesuffix("()")


class _PythonRules(ast.NodeVisitor):
    def __init__(self, lowered: tuple[str, ...]) -> None:
        self.lowered = lowered
        self.found: list[Violation] = []
        self.class_stack: list[str] = []

    def add(self, rule: str, node: ast.AST, detail: str) -> None:
        self.found.append(Violation(rule, getattr(node, "lineno", None), detail))

    # imports -----------------------------------------------------------------------------------
    def _module(self, name: str, node: ast.AST) -> None:
        top = name.split(".")[0]
        if top in PROCESS_MODULES:
            self.add("threads", node, f"imports {name} (threads/processes can run work outside the timed stream)")
        elif top in NETWORK_MODULES:
            self.add("file-access", node, f"imports {name} (network access)")
        elif top in FILE_MODULES:
            self.add("file-access", node, f"imports {name} (file access)")
        elif top in INTROSPECTION_MODULES:
            self.add("monkeypatch", node, f"imports {name} (introspection/native access can reach the harness)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._module(module, node)
        if module == "os" and any(a.name in ("environ", "getenv", "environb") for a in node.names):
            self.add("environment", node, "imports the environment from os")
        if module.startswith("torch.utils.cpp_extension") and any(a.name == "load" for a in node.names):
            self.add("file-access", node, "cpp_extension.load builds from files; use load_inline")
        self.generic_visit(node)

    # classes -----------------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = [dotted(b) for b in node.bases]
        if node.name == "ModelNew" and any(b.split(".")[-1] == "Model" for b in bases):
            self.add("reference-subclass", node, "ModelNew subclasses the reference Model")
        if any(b.split(".")[-1] in ("Tensor", "TorchDispatchMode", "TorchFunctionMode") for b in bases):
            self.add("tensor-subclass", node, f"class {node.name} subclasses {', '.join(bases)} (lazy evaluation)")
        self.class_stack.append(node.name)
        self.generic_visit(node)
        self.class_stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name in ("__torch_function__", "__torch_dispatch__"):
            self.add("tensor-subclass", node, f"defines {node.name}")
        self.generic_visit(node)

    # control flow ------------------------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        for handler in node.handlers:
            for inner in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
                if isinstance(inner, ast.Call):
                    name = dotted(inner.func)
                    if _root(name) in ("torch", "F", "nn", "super", "Model") or name.endswith(".forward"):
                        self.add("try-fallback", handler, f"except block falls back to {name}()")
                        break
        self.generic_visit(node)

    visit_TryStar = visit_Try

    # calls -------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func)
        last = name.split(".")[-1] if name else ""
        root = _root(name)
        if last == "Stream" or last in ("wait_stream", "record_stream", "wait_event") or name == "torch.cuda.stream":
            self.add("extra-stream", node, f"calls {name} (work on another stream escapes the timer)")
        if name in ("exec", "eval", "compile", "__import__", "globals", "vars", "locals") or last == "import_module":
            self.add("monkeypatch", node, f"calls {name}() (dynamic code can hide from these rules)")
        if name in ("getattr", "setattr", "delattr") and node.args:
            target = _root(dotted(node.args[0]))
            constant = len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
            if name != "getattr" and target in PROTECTED_ROOTS:
                self.add("monkeypatch", node, f"{name} on {dotted(node.args[0])}")
            elif target in PROTECTED_ROOTS and not constant:
                self.add("monkeypatch", node, f"getattr on {dotted(node.args[0])} with a computed name")
        file_call = name == "open" or (root in ("os", "io", "np", "numpy", "torch", "pickle", "shutil", "glob")
                                       and last in FILE_CALLS)
        if file_call:
            self.add("file-access", node, f"calls {name}()")
        elif last in ("read_text", "read_bytes", "write_text", "write_bytes"):
            self.add("file-access", node, f"calls .{last}()")
        if root == "os" and last in OS_PROCESS_CALLS:
            self.add("threads", node, f"calls {name}()")
        if name in ("os.getenv", "getenv", "os.environ.get", "os.getenvb") or (root == "os" and ".environ." in name
                                                                             and last != "setdefault"):
            self.add("environment", node, f"reads the environment ({name})")
        if last in ("_make_subclass", "as_subclass"):
            self.add("tensor-subclass", node, f"calls {name}")
        if last == "load" and "cpp_extension" in name:
            self.add("file-access", node, "cpp_extension.load builds from files; use load_inline")
        self.generic_visit(node)

    # attributes --------------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = dotted(node)
        for precision in self.lowered:
            pattern = _PY_PRECISION.get(precision)
            if pattern is not None and name and pattern.search(name):
                self.add("precision", node, f"uses {name} (below the problem's precision)")
                break
        if name in ("sys.modules", "sys._getframe", "sys.settrace", "sys.setprofile", "sys.addaudithook"):
            self.add("monkeypatch", node, f"uses {name}")
        if name.endswith("__builtins__") or name.endswith("__globals__") or name.endswith("__code__"):
            self.add("monkeypatch", node, f"uses {name}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__",):
            self.add("monkeypatch", node, "uses __builtins__")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if dotted(node.value) in ("os.environ", "os.environb") and isinstance(node.ctx, ast.Load):
            self.add("environment", node, "reads os.environ[...]")
        self.generic_visit(node)

    def _assigned(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = dotted(target)
            if name in ALLOWED_TORCH_SETTINGS:
                return
            if _PY_PRECISION["tf32"].search(name):
                if "tf32" in self.lowered:
                    self.add("precision", node, f"assigns {name} (below the problem's precision)")
            elif _root(name) in PROTECTED_ROOTS:
                self.add("monkeypatch", node, f"assigns {name}")
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._assigned(element, node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(target, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node.target, node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._assigned(target, node)

    def visit_For(self, node: ast.For) -> None:
        if dotted(node.iter) in ("os.environ", "os.environb"):
            self.add("environment", node, "iterates over os.environ")
        self.generic_visit(node)


def strip_c_comments(text: str) -> str:
    return _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def check_c_text(text: str, dtype: str, label: str = "CUDA source", line_offset: int = 0) -> list[Violation]:
    """Rules over CUDA/C/C++ text (a .cu/.c file, or a source string inside a Python candidate)."""
    code = strip_c_comments(text)
    found = []
    for rule, pattern in _C_RULES:
        match = pattern.search(code)
        if match:
            found.append(Violation(rule, _line_of(code, match.start()) + line_offset,
                                   f"{label} uses {match.group(0).strip()}"))
    for precision in LOWER_THAN.get(dtype, ()):
        pattern = _CUDA_PRECISION.get(precision)
        match = pattern.search(code) if pattern else None
        if match:
            found.append(Violation("precision", _line_of(code, match.start()) + line_offset,
                                   f"{label} computes in {precision} ({match.group(0)}) below the problem's {dtype}"))
    return found


def _embedded_sources(tree: ast.AST) -> list[tuple[str, int]]:
    """String constants that are C/C++/CUDA code, with their first line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if "__global__" in text or "#include" in text or "torch::Tensor" in text:
                found.append((text, node.lineno))
    return found


def check_python(source: str, dtype: str) -> list[Violation]:
    try:
        tree = python_ast.parse(source)
    except SyntaxError:
        return []  # the worker reports the syntax error as a load error
    rules = _PythonRules(LOWER_THAN.get(dtype, ()))
    rules.visit(tree)
    found = list(rules.found)
    for text, line in _embedded_sources(tree):
        found += check_c_text(text, dtype, label="embedded CUDA/C++ source", line_offset=line - 1)
    return found


def check_static(source: str, language: str, dtype: str) -> list[IntegrityFinding]:
    """Every static rule that fires, one finding per rule (its first occurrence); an empty list is a pass."""
    violations = check_python(source, dtype) if language == "python" else check_c_text(source, dtype)
    first: dict[str, Violation] = {}
    for violation in violations:
        first.setdefault(violation.rule, violation)
    return [v.finding() for v in first.values()]
