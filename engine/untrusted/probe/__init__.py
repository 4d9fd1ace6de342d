"""Probes of an imported problem's own code, run inside the sandbox before the problem is accepted.

`python -m engine.untrusted.probe ...` is the program (`problem`: one file, one C library or one C
program's check; `--serve`: many files, torch imported once, in `serve`); `forward` runs a KernelBench
file at its configurations on meta tensors (the real CPU where meta cannot) and counts its FLOPs and
bytes, `rnn` gives the recurrent layers a meta path. The trusted callers are `engine.problem_import.probe`
and `engine.problem_import.probe_batch`.
"""
