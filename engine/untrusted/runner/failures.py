"""How the runner reports that candidate code raised: the facts (stage, exception, traceback), which the
judge turns into a verdict. The runner classifies nothing: it is the candidate's own process."""

from __future__ import annotations

import traceback

TRACEBACK_CHARS = 6000


class CandidateFailure(Exception):  # noqa: N818 - a report travelling to the judge, not a programming error
    """Candidate code failed at `stage`; `facts` is what the judge needs to name the failure."""

    def __init__(self, stage: str, facts: dict) -> None:
        super().__init__(f"{stage}: {facts.get('message', '')}")
        self.stage, self.facts = stage, facts

    def to_json(self) -> dict:
        return {"stage": self.stage, **self.facts}


def from_exception(exc: BaseException, stage: str) -> CandidateFailure:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-TRACEBACK_CHARS:]
    facts = {"exception": type(exc).__name__, "message": str(exc)[:2000], "traceback": text,
             "syntax": isinstance(exc, SyntaxError)}
    if isinstance(exc, SyntaxError):
        facts.update(line=exc.lineno, syntax_message=exc.msg)
    return CandidateFailure(stage, facts)


def plain(stage: str, message: str, **facts) -> CandidateFailure:
    return CandidateFailure(stage, {"exception": None, "message": message, "traceback": "", **facts})
