"""The judge's side of the conversation with one runner: requests out, replies checked on the way in.

Every reply is untrusted input: it is decoded into the model of its request's kind (`wire.replies`: strict
types, bounded lengths, finite numbers) before any field is used, tensors are copied out of the shared
region (the runner may rewrite it at any time) into the judge's own memory, and a runner that closes the
socket, dies or answers nonsense ends the job with a named reason, never an exception that escapes the
judge: a malformed reply is RunnerMisbehaved, the candidate's runtime error.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from engine.verify.judge.meters import Meter
from engine.wire.channel import Channel, ChannelClosed, ProtocolError
from engine.wire.replies import ErrorReply, MalformedReply, Reply, TensorSlot, ValueSlot, decode
from engine.wire.shared import SharedRegion, aligned
from engine.wire.shared import TensorSlot as RegionSlot


class RunnerLost(Exception):  # noqa: N818 - the runner process is gone: an outcome, not a bug
    def __init__(self, stage: str) -> None:
        super().__init__(f"the candidate's process ended during {stage}")
        self.stage = stage


class RunnerMisbehaved(Exception):  # noqa: N818 - a malformed reply: the candidate's runtime error
    """The runner's reply is not what the request asks for (framing, types, bounds, a tensor outside the
    region): its process is the candidate's, so the job ends as the candidate's runtime error."""

    def __init__(self, stage: str, detail: str) -> None:
        super().__init__(f"malformed reply to {stage}: {detail}")
        self.stage, self.detail = stage, detail


class CandidateError(Exception):  # noqa: N818 - the runner reports that candidate code failed
    def __init__(self, report: dict) -> None:
        super().__init__(str(report.get("message", "")))
        self.report = report


@dataclass
class Returned:
    """One output as the runner returned it: a private tensor copy, or a plain value with its type name."""

    tensor: torch.Tensor | None = None
    type_name: str = "Tensor"
    value: object = None
    tensor_class: str = "Tensor"


class RegionCache:
    """The judge's shared region, kept from one runner to the next.

    Making a region is cheap; page-locking it for the GPU (cudaHostRegister) is not: 0.39 s for a GiB on
    the H200 machine, paid again at every growth of every candidate's region (benchmarks/region_pinning.py).
    So the judge keeps its largest region and lends it to the next runner, but only once the runner that
    had it is gone: its socket reads end-of-file when every process that held it has ended (the pool
    kills the runner's whole sandbox after the job), and only then is the region erased (17 ms a GiB) and
    lent again. A region whose runner does not go in time is closed, never lent.
    """

    def __init__(self, wait_s: float = 2.0, make: Callable[[int, bool], SharedRegion] = SharedRegion.create) -> None:
        self.wait_s, self.make = wait_s, make
        self.idle: SharedRegion | None = None
        self.pending: threading.Thread | None = None

    def acquire(self, size: int, pin: bool) -> SharedRegion:
        if self.pending is not None:
            self.pending.join(self.wait_s)
            if not self.pending.is_alive():
                self.pending = None
        if self.pending is None and self.idle is not None and self.idle.size >= size:
            region, self.idle = self.idle, None
            region.fresh()
            return region
        return self.make(size, pin)

    def release(self, region: SharedRegion, channel: Channel) -> None:
        """Take `region` back once the runner at the other end of `channel` has ended (then close the
        channel); until then, and if it never ends, the region is lent to no one."""
        if self.pending is not None and self.pending.is_alive():  # one release in flight: this one is not kept
            region.close()
            channel.close()
            return

        def when_gone() -> None:
            try:
                gone = _wait_for_end(channel, timeout_s=30.0)
            finally:
                channel.close()
            if not gone or (self.idle is not None and self.idle.size >= region.size):
                region.close()
                return
            region.zero()
            if self.idle is not None:
                self.idle.close()
            self.idle = region

        self.pending = threading.Thread(target=when_gone, name="region-back", daemon=True)
        self.pending.start()

    def close(self) -> None:
        if self.pending is not None:
            self.pending.join()
            self.pending = None
        if self.idle is not None:
            self.idle.close()
            self.idle = None


def _wait_for_end(channel: Channel, timeout_s: float) -> bool:
    """Whether the peer's end of `channel` closed (everything holding it ended) within `timeout_s`;
    whatever it still sends meanwhile is read and dropped."""
    deadline = time.monotonic() + timeout_s
    sock = channel.sock
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if not sock.recv(1 << 16):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True  # reset by the peer's end: it is gone
    return False


@dataclass
class RunnerSession:
    channel: Channel
    device: str
    cache: RegionCache | None = None  # the judge's region, lent to this runner; None: one of its own
    region: SharedRegion | None = None
    device_cache: RegionCache | None = None  # the judge's GPU region (`wire.device_region`), where it has one
    evidence: list[str] = field(default_factory=list)
    lost: bool = False
    rtt_s: float = 0.0
    meter: Meter | None = None  # the runner's kernel accounting, where the pool could open it
    kept_back: dict[str, dict] = field(default_factory=dict)  # hidden configurations: sent with their first request
    notes: list[str] = field(default_factory=list)  # what the judge's own side of the job had to say (its notes)
    stage: Callable[[str], contextlib.AbstractContextManager] = lambda _name: contextlib.nullcontext()  # the
    # harness's stage timer (`JobState.stage`, set by the judge's serve loop): the region's steps as stages

    def request(self, op: str, stage: str | None = None, fds: tuple[int, ...] = (), **fields) -> Reply:
        """Send one request and return its reply decoded (`wire.replies.REPLIES[op]`); raises RunnerLost,
        RunnerMisbehaved or CandidateError."""
        stage = stage or op
        told = self.kept_back.pop(fields.get("config"), None) if isinstance(fields.get("config"), str) else None
        try:
            self.channel.send({"op": op, "stage": stage, **fields, **(told or {})}, fds=fds)
            message, _, extra_fds = self.channel.receive(max_payload=0)
        except (ChannelClosed, OSError) as exc:
            self.lost = True
            raise RunnerLost(stage) from exc
        except ProtocolError as exc:
            raise RunnerMisbehaved(stage, str(exc)) from exc
        for fd in extra_fds:
            _close(fd)
        try:
            reply = decode(op, message)
        except MalformedReply as exc:
            raise RunnerMisbehaved(stage, exc.detail) from exc
        self.evidence += [e[:300] for e in reply.evidence[:20] if e[:300] not in self.evidence]
        if isinstance(reply, ErrorReply):
            raise CandidateError({"stage": stage, **reply.error.facts()})
        return reply

    def ping(self) -> float:
        started = time.perf_counter()
        self.request("ping")
        self.rtt_s = time.perf_counter() - started
        return self.rtt_s

    def ensure_region(self, size: int, on_device: bool = False) -> None:
        """A shared region of at least `size` bytes, sent to the runner (a new one if too small); `on_device`:
        in GPU memory where the judge can make one and the runner can map it (a PyTorch candidate's outputs
        then never cross host memory), else in host memory."""
        size = aligned(max(size, 4096))
        if self.region is not None and self.region.size >= size:
            return
        self.give_back_region()
        if on_device and self.device == "cuda" and self.device_cache is not None and self._device_region(size):
            return
        pin = self.device == "cuda"
        with self.stage("region.acquire"):
            self.region = (self.cache.acquire(size, pin) if self.cache is not None
                           else SharedRegion.create(size, pin=pin))
        with self.stage("region.lend"):
            self.request("region", size=self.region.size, fds=(self.region.fd,))

    def _device_region(self, size: int) -> bool:
        """Lend the runner a GPU region; False (and the host region serves) where the driver or the runner's
        sandbox refuses one: said once in the job's notes, never the candidate's fault."""
        from engine.wire.device_region import DeviceRegionUnavailable

        try:
            with self.stage("region.acquire"):
                region = self.device_cache.acquire(size, True)
        except (DeviceRegionUnavailable, RuntimeError, OSError) as exc:  # RuntimeError: CUDA out of memory
            return self._host_instead(None, f"no GPU region here ({exc})")
        try:
            with self.stage("region.probe"):
                token = region.probe()
        except RuntimeError as exc:
            return self._host_instead(region, f"the GPU region could not be written ({exc})")
        try:
            with self.stage("region.lend"):
                self.request("region", size=region.size, where="device", fds=(region.fd,))
        except CandidateError as exc:
            return self._host_instead(region, f"the runner could not map the GPU region ({exc})")
        except BaseException:
            region.close()
            raise
        if not region.echoed(token):
            return self._host_instead(region, "the runner's mapping of the GPU region did not echo the judge's token")
        self.region = region
        return True

    def _host_instead(self, region, why: str) -> bool:
        """No GPU region for this job: close the one tried (if any), note why, and let the host region serve."""
        if region is not None:
            region.close()
        self.device_cache = None
        self.notes.append(f"outputs through host memory: {why}")
        return False

    def _cache_of(self, region) -> RegionCache | None:
        """The judge's cache a region of this kind goes back to (None: it is closed instead)."""
        return self.device_cache if region.kind == "device" else self.cache

    def give_back_region(self, at_end: bool = False) -> None:
        """Close this job's region, or at the job's end hand it back to the judge's cache (which lends it
        again only after this runner has ended)."""
        if self.region is None:
            return
        cache = self._cache_of(self.region)
        if at_end and cache is not None:
            cache.release(self.region, self.channel)
        else:
            self.region.close()
        self.region = None

    def take(self, slots: list[ValueSlot | TensorSlot], stage: str) -> list[Returned]:
        """The runner's outputs (or inputs), decoded by their reply's model, as private copies on the judge's
        device; raises RunnerMisbehaved for a tensor that does not lie inside the shared region."""
        returned = []
        for item in slots:
            if isinstance(item, ValueSlot):
                returned.append(Returned(None, item.type[:80], item.value))
                continue
            try:
                tensor = self.region.take(RegionSlot.from_json(item.region_json()), self.device)
            except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as exc:  # RuntimeError: misaligned
                raise RunnerMisbehaved(stage, f"a tensor outside the shared region ({exc})") from exc
            returned.append(Returned(tensor, "Tensor", None, item.class_name[:80]))
        return returned

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.channel.send({"op": "bye"})
        if self.region is not None and self._cache_of(self.region) is not None:
            self.give_back_region(at_end=True)  # the cache closes the channel once the runner has ended
            return
        self.channel.close()
        self.give_back_region()


def _close(fd: int) -> None:
    import os

    with contextlib.suppress(OSError):
        os.close(fd)


def float_list(value: object, stage: str, length: int | None = None) -> list[float]:
    """A list of finite, non-negative numbers from a reply, or RunnerMisbehaved."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise RunnerMisbehaved(stage, f"expected {length if length is not None else 'a list of'} numbers")
    out = []
    for item in value:
        if not isinstance(item, int | float) or item != item or item < 0 or item == float("inf"):
            raise RunnerMisbehaved(stage, f"not a time: {item!r}")
        out.append(float(item))
    return out
