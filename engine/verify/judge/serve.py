"""The judge process: one per GPU (or CPU slot), long-lived, told jobs by the pool over its control
socket, each with the socket of the runner that holds that job's candidate.

The judge outlives candidates (that is what lets it keep references and their answers across a
batch); a runner never outlives its candidate. Whatever a runner does, the judge answers the pool
with a verdict; an error in the judge itself is reported as such, never as the candidate's fault.
It also tells the pool when a job's stages start and end, so the pool (which, unlike the judge, sees
the machine's other processes) can say what else ran while the candidate was timed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

MAX_JOB_BYTES = 4 * 2**30
REFERENCES_KEPT = 4


def _split(payload: bytes, sizes: dict) -> dict[str, bytes]:
    blobs, offset = {}, 0
    for name, size in sizes.items():
        blobs[name] = payload[offset:offset + int(size)]
        offset += int(size)
    return blobs


class Judge:
    def __init__(self, device: str, scratch: Path, tell: Callable[[dict], None] | None = None) -> None:
        self.device, self.scratch, self.tell = device, scratch, tell
        self.references: OrderedDict[tuple, object] = OrderedDict()
        from engine.verify.judge.session import RegionCache

        self.regions = RegionCache()  # one page-locked region lent from runner to runner
        self.device_regions = None  # and one in GPU memory, for the outputs of PyTorch candidates on a GPU
        if device == "cuda":
            from engine.wire.device_region import DeviceRegion

            self.device_regions = RegionCache(make=DeviceRegion.create)

    def stage_said(self, job_id: str, stage: str, phase: str) -> None:
        """Tell the pool a stage started or ended (it times nothing by it; it only watches the machine)."""
        if self.tell is not None:
            with contextlib.suppress(OSError):
                self.tell({"type": "stage", "job_id": job_id, "stage": stage, "phase": phase})

    def reference_for(self, job):
        from engine.verify.judge.reference import TorchReference

        key = (job.reference_source, job.reference_path, job.init_seed)
        if key not in self.references:
            self.references[key] = TorchReference(job.reference_source, Path(job.reference_path).name, job.device,
                                                  job.init_seed)
            while len(self.references) > REFERENCES_KEPT:
                self.references.popitem(last=False)
        self.references.move_to_end(key)
        return self.references[key]

    def judge(self, job, blobs: dict[str, bytes], runner_fd: int, meter=None) -> tuple[dict, bool]:
        """(EvaluationResult JSON, whether the runner was lost); `meter`: the runner's kernel accounting."""
        from engine.schema.verdict import EvaluationResult, Verdict
        from engine.verify.judge.c_judge import CJudge
        from engine.verify.judge.outcome import malformed
        from engine.verify.judge.session import RunnerLost, RunnerMisbehaved, RunnerSession
        from engine.verify.judge.torch_judge import TorchJudge
        from engine.wire.channel import Channel

        session = RunnerSession(Channel.from_fd(runner_fd), job.device, cache=self.regions, meter=meter,
                                device_cache=self.device_regions)
        session.kept_back = {c.name: job.hidden_call(c.name) for c in job.configs if c.hidden}
        started = time.perf_counter()
        try:
            try:
                session.channel.send({"op": "job", "spec": job.candidate_spec().to_json()},
                                     payload=blobs.get("candidate", b""))
            except OSError as exc:
                session.lost = True
                raise RunnerLost("start") from exc
            if job.mode == "info":
                facts = session.request("info").model_dump(exclude={"evidence"})
                return facts, session.lost
            if job.kind == "pytorch":
                harness = TorchJudge(job, session, self.reference_for(job))
            else:
                harness = CJudge(job, session, self.scratch, blobs)
            harness.state.on_stage = lambda stage, phase: self.stage_said(job.job_id, stage, phase)
            session.stage = harness.state.stage  # the region's and the reveals' steps, timed as the job's stages
            result = harness.run()
        except RunnerLost as exc:
            result = EvaluationResult(Verdict.RUNTIME_ERROR, f"the candidate's process ended during {exc.stage}")
        except RunnerMisbehaved as exc:  # outside a harness's stages (an info job): still the candidate's
            result = EvaluationResult(Verdict.RUNTIME_ERROR, malformed(exc.stage, exc.detail).message)
        except Exception as exc:  # noqa: BLE001 - the judge's own failure, reported as the verifier's
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]
            result = EvaluationResult(Verdict.RUNTIME_ERROR, f"the verifier failed on this job "
                                      f"({type(exc).__name__}: {exc}); not the candidate's fault", log=text)
            result.notes.append("verifier error")
        finally:
            session.close()
        data = result.to_json()
        data["worker_seconds"] = time.perf_counter() - started
        return data, session.lost


def _runner_meter(layout: object, fds: list[int]):
    """The runner's accounting from the descriptors the pool sent beside its socket, if it sent them."""
    from engine.verify.judge.meters import RunnerMeter

    if not isinstance(layout, dict):
        return None
    try:
        return RunnerMeter(fds, layout)
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def main(argv: list[str]) -> int:
    import faulthandler

    faulthandler.enable(file=sys.stderr, all_threads=True)
    started = time.perf_counter()
    import torch

    from engine.verify.judge import clock
    from engine.verify.judge.job import Job
    from engine.wire.channel import Channel, ChannelClosed

    fd = int(argv[argv.index("--fd") + 1])
    control = Channel.from_fd(fd)
    cuda = torch.cuda.is_available() and "--cpu" not in argv
    name = None
    if cuda:
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        name = torch.cuda.get_device_name()
        from engine.wire import chunks

        chunks.fused_agrees(torch.cuda.current_device())  # the baselines' block commitments, compiled and tried
    judge = Judge("cuda" if cuda else "cpu", Path.cwd(), control.send)
    control.send({"type": "hello", "pid": os.getpid(), "cuda": cuda, "device": name, "torch": torch.__version__,
                  "startup_s": time.perf_counter() - started})
    while True:
        try:
            message, payload, fds = control.receive(max_payload=MAX_JOB_BYTES)
        except ChannelClosed:
            return 0
        if message.get("op") == "stop":
            return 0
        if message.get("op") != "job" or not fds:
            control.send({"type": "error", "message": "expected a job with its runner"})
            continue
        job = Job.from_json(message["job"])
        job.device = judge.device if job.device == "cuda" else job.device
        blobs = _split(payload, message.get("blobs", {}))
        clock.QUIET_LOOPS.seed(message.get("quiet_loops"))  # this problem's floors from its earlier judges
        result, lost = judge.judge(job, blobs, fds[0], _runner_meter(message.get("meters"), fds[1:]))
        for extra in fds[1:]:
            os.close(extra)
        control.send({"type": "result", "job_id": job.job_id, "result": result, "runner_lost": lost,
                      "quiet_loops": clock.QUIET_LOOPS.export()})
