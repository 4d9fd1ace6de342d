"""Everything that runs untrusted code, each program inside its own sandbox (engine.sandbox).

`runner/` loads one candidate and serves the judge's requests for it (`python -m engine.untrusted.runner`;
`run_once` for the profiler); `probe/` runs an imported problem's own code once to prove it works;
`fastinline/` is the load_inline prebuild and the fast build it runs. This folder imports only itself,
`engine.wire` (what both sides of the boundary share) and third-party packages, and every sandbox of
these programs shows exactly those two folders (`engine.sandbox.programs.UNTRUSTED_PACKAGES`);
`tests/test_layers.py` holds both rules.
"""
