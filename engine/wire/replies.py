"""What the judge accepts from a runner: one strict, bounded pydantic model per reply kind.

The runner is the candidate's own process, so a reply is untrusted input. `decode` turns the JSON object a
request got back into the model of that request's kind, or raises MalformedReply naming the first fields that
are wrong (`times_us.3: Input should be a finite number`): types are strict (no `"1"` for 1, no `true` for a
number), every list and text has a bound (`limits`), and every time or count is finite and not negative.
Keys a model does not name are ignored: the judge never reads them, and the runner may gain a field before
the judge reads it. Only the judge imports this module; the runner builds plain dicts within `limits`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from engine.wire import limits as bounds
from engine.wire.shared import DTYPES

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[StrictInt, Field(ge=0)]
Extent = Annotated[StrictInt, Field(ge=0, le=bounds.MAX_EXTENT)]
Name = Annotated[str, Field(max_length=bounds.NAME_CHARS)]
Names = Annotated[list[Name], Field(max_length=bounds.MAX_PROFILE_NAMES)]
Evidence = Annotated[list[Annotated[str, Field(max_length=bounds.EVIDENCE_CHARS)]],
                     Field(max_length=bounds.EVIDENCE_ITEMS)]


class MalformedReply(ValueError):
    """A reply that is not what its request asks for; `detail` says which fields and why, in words."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, populate_by_name=True)


class _Common(_Strict):
    """What every reply carries: the runner's guards' report and how long it took."""

    evidence: Evidence = []
    runner_seconds: Seconds | None = None


class Reply(_Common):
    ok: Literal[True] = True


class ErrorReport(_Strict):
    """The runner's report of candidate code that failed: facts for the judge to name (engine.verify.judge.outcome)."""

    stage: Name | None = None
    exception: Name | None = None
    message: Annotated[str, Field(max_length=bounds.MESSAGE_CHARS)] = ""
    traceback: Annotated[str, Field(max_length=bounds.TRACEBACK_CHARS)] = ""
    syntax: bool = False
    line: StrictInt | None = None
    syntax_message: Annotated[str, Field(max_length=bounds.MESSAGE_CHARS)] | None = None
    too_large: bool = False
    missing_model: bool = False
    load_error: bool = False
    cuda_fault: bool = False

    def facts(self) -> dict:
        """The report as the judge's outcome rules read it (the fields the runner sent)."""
        return self.model_dump(exclude_unset=True)


class ErrorReply(_Common):
    ok: Literal[False]
    error: ErrorReport


class ValueSlot(_Strict):
    """An output that is not a tensor: its type's name and, for a number, bool or None, the value."""

    kind: Literal["value"]
    type: Name = "object"
    value: StrictInt | float | bool | None = None  # a candidate's NaN is its answer, judged as such


class TensorSlot(_Strict):
    """A tensor the runner put in the shared region: where, what dtype and shape (`wire.shared.TensorSlot`)."""

    kind: Literal["tensor"]
    class_name: Name = Field("Tensor", alias="class")
    offset: Extent
    dtype: Literal[tuple(DTYPES)]  # type: ignore[valid-type]
    shape: Annotated[list[Extent], Field(max_length=bounds.MAX_DIMS)]

    def region_json(self) -> dict:
        return {"offset": self.offset, "dtype": self.dtype, "shape": list(self.shape)}


Slot = Annotated[ValueSlot | TensorSlot, Field(discriminator="kind")]
Digest = Annotated[StrictInt, Field(ge=0, lt=2**61)]
Slots = Annotated[list[Slot], Field(max_length=bounds.MAX_RETURNED)]


class Ack(Reply):
    """ping, region: nothing but the common fields."""


class LoadReply(Reply):
    load_seconds: Seconds | None = None


class ConstructReply(Reply):
    seconds: Seconds | None = None


class CallReply(Reply):
    """One call's outputs (and, for C, its input arrays read back; for PyTorch, which inputs it changed)."""

    seconds: Seconds | None = None
    outputs: Slots
    inputs: Slots = []
    inputs_changed: Annotated[list[Count], Field(max_length=bounds.MAX_RETURNED)] | None = None


KernelStat = Annotated[tuple[Count, Seconds], Field(strict=False)]  # [calls, total µs]: JSON sends a list


class Profile(_Strict):
    ops: Names = []
    top_ops: Names = []
    all_ops: Names = []
    kernels: Annotated[dict[Annotated[str, Field(max_length=bounds.KERNEL_NAME_CHARS)], KernelStat],
                       Field(max_length=bounds.MAX_PROFILE_NAMES)] = {}


class ProfileReply(Reply):
    profile: Profile = Profile()


class TimesReply(Reply):
    """A timing block's claimed times, µs per trial, and its commitment to every timed call's outputs (the
    judge checks that there are as many as it asked for)."""

    times_us: Annotated[list[Seconds], Field(max_length=bounds.MAX_TRIALS)]
    digests: Annotated[list[Digest], Field(max_length=bounds.MAX_TRIALS)]
    loop_us: Seconds = 0.0  # the runner's own clock around its whole block: evidence that may explain time the
    # judge's clock saw beyond the claim as the runner's untimed steps (so no speed is credited), never a pass


class RevealedTensor(_Strict):
    """A kept tensor output of a chosen timed call: its dtype, shape and every chunk's digest as the runner
    committed to them (`wire.chunks`), and the chosen chunks' elements in the shared region, in the order asked."""

    kind: Literal["chunked"]
    dtype: Literal[tuple(DTYPES)]  # type: ignore[valid-type]
    shape: Annotated[list[Extent], Field(max_length=bounds.MAX_DIMS)]
    digests: Annotated[list[Digest], Field(max_length=bounds.MAX_CHUNKS)]
    chunks: Annotated[list[TensorSlot], Field(max_length=bounds.MAX_CHUNKS)]


Revealed = Annotated[ValueSlot | RevealedTensor, Field(discriminator="kind")]


class RevealReply(Reply):
    """What the runner shows of the timed calls the judge chose: per call, its outputs (plain values whole,
    tensors as their committed chunk digests and the chosen chunks)."""

    calls: Annotated[list[Annotated[list[Revealed], Field(max_length=bounds.MAX_RETURNED)]],
                     Field(max_length=bounds.MAX_REVEALED)]


class KnockoutReply(Reply):
    """One call's outputs with the candidate's own launches skipped, and how many were (and had run before)."""

    outputs: Slots
    skipped: Count
    launches: Count


class LoopReply(Reply):
    calls: Count


class InfoReply(Reply):
    """What the runner's process runs under, as it sees it (tests and diagnosis only)."""

    env: Annotated[list[Name], Field(max_length=bounds.INFO_ITEMS)]
    cwd: Annotated[str, Field(max_length=bounds.KERNEL_NAME_CHARS)]
    uid: StrictInt
    pid: StrictInt
    limits: dict[Name, Annotated[list[StrictInt], Field(max_length=2)]]
    hostname: Name
    cpus: Annotated[list[Count], Field(max_length=bounds.INFO_ITEMS)]


REPLIES: dict[str, type[Reply]] = {
    "ping": Ack, "region": Ack, "info": InfoReply, "load": LoadReply, "construct": ConstructReply,
    "call": CallReply, "profile": ProfileReply, "time": TimesReply, "reveal": RevealReply,
    "loop": LoopReply, "knockout": KnockoutReply,
}
MAX_ERRORS_NAMED = 3


def _words(error: ValidationError) -> str:
    """The first few errors as `field.path: what is wrong`, never the values themselves."""
    parts = []
    for item in error.errors(include_input=False, include_url=False)[:MAX_ERRORS_NAMED]:
        where = ".".join(str(p) for p in item["loc"]) or "the reply"
        parts.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def decode(op: str, message: dict) -> Reply | ErrorReply:
    """The reply to a request `op` as its model (ErrorReply where the runner reports a failure); raises
    MalformedReply."""
    model = ErrorReply if message.get("ok") is False else REPLIES.get(op)
    if model is None:
        raise MalformedReply(f"no reply is expected to a request {op!r}")
    try:
        return model.model_validate(message)
    except ValidationError as exc:
        raise MalformedReply(_words(exc)) from None
