"""The sandbox side of the verifier: the process that loads one candidate and runs it.

`python -m engine.untrusted.runner --fd N --device cuda|cpu` starts in its own sandbox (engine.sandbox),
warms up, and serves the judge's requests for exactly one candidate over descriptor N: load, build
per configuration, call on inputs made from a seed, profile one call, time a block of calls. It
imports only this package, `engine.wire`, torch, numpy and CuPy; it never sees an expected
output, a tolerance or a verdict, and what it replies is checked by the judge before it counts.
`run_once` is the same candidate loading for the profiler (ncu wraps that process).
"""
