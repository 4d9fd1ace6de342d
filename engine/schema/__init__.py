"""The stored records' schema: how a stored record is read back (`policy`), the records an `evaluation` row
holds, its `timing` blob among them (`evaluation`), and the verdict with its evidence that verification
returns and that row stores (`verdict`: `EvaluationResult`, `Verdict`).

A leaf: these modules import pydantic and the standard library, nothing else of the engine and
nothing of db or the app, so every layer may read them: db (the one package of the engine it
imports), the engine's verifier, export and ranker, the dashboard, and the judge inside its
sandbox, which sees the engine alone.
"""
