"""The runner process: warm up, announce itself, take one candidate, answer the judge's requests, exit.

Started by the pool inside its own sandbox before any candidate exists (torch imported, CUDA context
made), so the next candidate does not wait for that; it serves exactly one candidate and is then
killed with everything it started, so nothing one candidate leaves behind can reach the next.

Its only channel is the socket to the judge (descriptor `--fd`); stdout and stderr go to a log the
user reads. Every reply is data for the judge to check; nothing here decides a verdict.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from engine.untrusted.runner import knockout

own_clock = time.perf_counter  # taken before any candidate code loads; what it reads is evidence, never a verdict

MAX_ARTIFACT_BYTES = 2 * 2**30  # the candidate's library or its load_inline build, as a tar


def _place(region, outputs: list, inputs: list) -> tuple[list, list, str | None]:
    """Copy tensors into the shared region: (output slots, input slots, error if they do not fit)."""
    import torch

    from engine.wire.limits import NAME_CHARS
    from engine.wire.shared import aligned, dtype_name

    slots_out, slots_in, offset = [], [], 0

    def place(value) -> dict:
        nonlocal offset
        if not isinstance(value, torch.Tensor):
            plain_value = value if isinstance(value, int | float | bool) or value is None else None
            return {"kind": "value", "type": type(value).__name__[:NAME_CHARS], "value": plain_value}
        kind = type(value).__name__[:NAME_CHARS]
        with torch._C.DisableTorchFunctionSubclass():
            tensor = value.as_subclass(torch.Tensor) if type(value) is not torch.Tensor else value
            nbytes = tensor.numel() * tensor.element_size()
            if region is None or offset + nbytes > region.size:
                raise OverflowError(f"{dtype_name(tensor.dtype)} tensor of shape {list(tensor.shape)}")
            slot = region.put(offset, tensor.contiguous())
        offset = aligned(offset + nbytes)
        return {"kind": "tensor", "class": kind, **slot.to_json()}

    try:
        slots_out = [place(v) for v in outputs]
        slots_in = [place(v) for v in inputs]
    except OverflowError as exc:
        return [], [], f"the outputs do not fit the space the judge expects ({exc})"
    return slots_out, slots_in, None


def _with_slots(calls: list[list[dict]], slots: list[dict]) -> list[list[dict]]:
    """A reveal's records with each chunk's place in the outputs replaced by its slot in the region."""
    for records in calls:
        for record in records:
            if "chunks" in record:
                record["chunks"] = [slots[place] for place in record["chunks"]]
    return calls


def _guard_report(guard) -> list[str]:
    from engine.untrusted.runner import audit
    from engine.wire.limits import EVIDENCE_CHARS, EVIDENCE_ITEMS

    patched, flags, threads = guard.check()
    report = [f"replaced {name}" for name in patched] + [f"changed {flag}" for flag in flags]
    report += [f"started thread {name}" for name in threads] + audit.take_events()
    return [item[:EVIDENCE_CHARS] for item in report[:EVIDENCE_ITEMS]]


def _bounded(error: dict) -> dict:
    """A failure report within the judge's limits (wire.limits): a long message is cut, not refused."""
    from engine.wire.limits import MESSAGE_CHARS, NAME_CHARS, TRACEBACK_CHARS

    cut = {"message": MESSAGE_CHARS, "syntax_message": MESSAGE_CHARS, "stage": NAME_CHARS, "exception": NAME_CHARS}
    for key, chars in cut.items():
        if isinstance(error.get(key), str):
            error[key] = error[key][:chars]
    if isinstance(error.get("traceback"), str):
        error["traceback"] = error["traceback"][-TRACEBACK_CHARS:]
    return error


def serve(channel, scratch: Path, device: str) -> int:
    from engine.untrusted.runner.failures import CandidateFailure
    from engine.untrusted.runner.guards import ProcessGuard
    from engine.wire.candidate import CandidateSpec

    message, payload, _ = channel.receive(max_payload=MAX_ARTIFACT_BYTES)
    if message.get("op") != "job":
        return 2
    spec = CandidateSpec.from_json(message["spec"])
    spec.device = device if spec.device == "cuda" else spec.device
    if spec.kind == "pytorch":
        from engine.untrusted.runner.torch_candidate import EXTENSIONS_ROOT, TorchCandidate

        if payload and spec.extensions_name:
            _unpack_extensions(payload, EXTENSIONS_ROOT)
        guard = ProcessGuard()
        candidate = TorchCandidate(spec, scratch, guard, EXTENSIONS_ROOT)
    else:
        from engine.untrusted.runner.c_candidate import CCandidate

        guard = ProcessGuard()
        candidate = CCandidate(spec, scratch, payload)
    region = None
    while True:
        try:
            request, _, fds = channel.receive(max_payload=0)
        except ConnectionError:
            print("the judge closed the connection", file=sys.stderr, flush=True)
            return 0
        op = request.get("op")
        if op == "bye":
            return 0
        if isinstance(request.get("config_call"), dict):  # a hidden configuration, told when it runs
            spec.reveal_config(request["config_call"])
        started = time.perf_counter()
        try:
            reply = _dispatch(op, request, candidate, fds, region)
            if op == "region":
                region, reply = reply
            if "_outputs" in reply:  # any reply with tensors: they go through the region, never the JSON
                outputs, inputs = reply.pop("_outputs"), reply.pop("_inputs", [])
                out_slots, in_slots, error = _place(region, outputs, inputs)
                if error:
                    reply = {"ok": False, "error": {"stage": request.get("stage", op), "message": error,
                                                    "exception": None, "traceback": "", "too_large": True}}
                elif "calls" in reply:  # a reveal: its records name their chunks by place in the outputs
                    reply["calls"] = _with_slots(reply["calls"], out_slots)
                else:
                    reply.update(outputs=out_slots, inputs=in_slots)
        except CandidateFailure as failure:
            reply = {"ok": False, "error": _bounded(failure.to_json())}
        except Exception as exc:  # noqa: BLE001 - in the candidate's process anything may be its doing: reported
            traceback.print_exc()
            reply = {"ok": False, "error": _bounded({"stage": request.get("stage", op), "exception": type(exc).__name__,
                                                     "message": f"{exc}", "traceback": traceback.format_exc()})}
        reply.setdefault("ok", True)
        reply["evidence"] = _guard_report(guard)
        reply["runner_seconds"] = time.perf_counter() - started
        channel.send(reply)


def _dispatch(op: str, request: dict, candidate, fds: list[int], region):
    from engine.wire.shared import SharedRegion

    if op == "region":
        if region is not None:
            region.close()
        if not fds:
            return None, {"ok": False, "error": {"message": "no region descriptor"}}
        if request.get("where") == "device":  # the judge's GPU memory: outputs copied in device to device
            from engine.wire.device_region import DeviceRegion, DeviceRegionUnavailable

            try:
                mapped = DeviceRegion.attach(fds[0], int(request["size"]))
                mapped.echo()
                return mapped, {"ok": True}
            except (DeviceRegionUnavailable, ValueError, RuntimeError) as exc:
                return None, {"ok": False, "error": {"message": f"the GPU region cannot be mapped here: {exc}"}}
        # Not page-locked on this side: pinning costs 0.39 s a GiB, more than the pageable copies of one
        # candidate's outputs (the judge pins its side once and keeps it)
        return SharedRegion.attach(fds[0], int(request["size"]), pin=False), {"ok": True}
    if op == "ping":
        return {}
    if op == "info":
        return _info()
    if op == "load":
        return candidate.load()
    if op == "construct":
        return candidate.construct(request["config"], int(request["init_seed"]))
    if op == "call" and candidate.kind == "pytorch":
        outputs, changed, seconds = candidate.call(request["config"], int(request["seed"]), bool(request["reuse"]),
                                                   bool(request.get("check_inputs", True)))
        return {"seconds": seconds, "_outputs": outputs, "inputs_changed": changed}
    if op == "call":
        outputs, inputs, seconds = candidate.call(request["config"], int(request["seed"]), bool(request["reuse"]))
        return {"seconds": seconds, "_outputs": outputs, "_inputs": inputs if request.get("want_inputs") else []}
    if op == "knockout" and candidate.kind == "pytorch":
        with knockout.SWITCH.skipped_launches():
            outputs, _, _ = candidate.call(request["config"], int(request["seed"]), False, False)
        return {"_outputs": outputs, "skipped": knockout.SWITCH.skipped, "launches": knockout.SWITCH.launches}
    if op == "profile":
        return {"profile": candidate.profile(request["config"], int(request["seed"]))}
    if op == "time":
        started = own_clock()
        times, digests = candidate.time_block(request["config"], int(request["seed"]), int(request["trials"]),
                                              int(request.get("warmup", 0)), int(request["flush_bytes"]))
        return {"times_us": times, "digests": digests, "loop_us": (own_clock() - started) * 1e6}
    if op == "reveal":
        picks = [[[int(c) for c in chunks] for chunks in call] for call in request["chunks"]]
        calls, tensors = candidate.reveal([int(p) for p in request["positions"]], picks)
        return {"calls": calls, "_outputs": tensors}
    if op == "loop":
        return {"calls": candidate.loop(request["config"], [int(s) for s in request["seeds"]],
                                        float(request["seconds"]))}
    return {"ok": False, "error": {"message": f"unknown request {op!r}"}}


def _info() -> dict:
    """What this process runs under, as it sees it (the judge passes it on for tests and diagnosis)."""
    import resource

    names = ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_CORE")
    limits = {name: list(resource.getrlimit(getattr(resource, name))) for name in names}
    return {"env": sorted(os.environ), "cwd": os.getcwd(), "uid": os.getuid(), "pid": os.getpid(),
            "limits": limits, "hostname": os.uname().nodename, "cpus": sorted(os.sched_getaffinity(0))}


def _unpack_extensions(payload: bytes, root: str) -> None:
    """The load_inline build made ahead of time, put back at the path it was built at (ninja then
    finds every object up to date and torch loads the library without compiling)."""
    import io
    import tarfile

    Path(root).mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(payload)) as archive:
        archive.extractall(root, filter="data")


def warm_up(device: str, gate: Callable[[], None] | None = None) -> dict:
    """Import what candidates use and make the CUDA context, before any candidate exists.

    `gate` (a GPU runner's) is called once the imports are done, before anything touches the GPU: it returns
    when the slot lets this runner onto the GPU, which is never during a timing (a warming runner's context
    and first kernels are time-sliced with the kernel being timed). So the imports, most of a warm-up's CPU
    work, go on beside a timing instead of waiting for it to end.

    Each step's wall and CPU seconds go in the hello: a GPU slot takes a fresh runner every candidate, so
    how fast runners warm (and what of it is CPU work the cores share) bounds the slot's throughput."""
    started = time.perf_counter()
    phases: dict[str, list[float]] = {}
    mark = [started, time.process_time()]

    def phase(name: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        phases[name] = [round(now - mark[0], 4), round(cpu - mark[1], 4)]
        mark[:] = [now, cpu]

    import torch
    import torch.autograd.profiler  # noqa: F401 - loaded before the guard's snapshot, not inside a job

    from engine.wire import chunks
    from engine.wire.profiling import profile_call

    if device == "cuda":
        with contextlib.suppress(Exception):  # importing CuPy touches no GPU; a CuPy candidate then says why not
            import cupy  # noqa: F401
    phase("imports")
    if gate is not None:
        gate()
        phase("gate")
    cuda = device == "cuda" and torch.cuda.is_available()
    name = None
    if cuda:
        torch.cuda.init()
        probe = torch.zeros(1024, device="cuda")
        name = torch.cuda.get_device_name()
        phase("context")
        with contextlib.suppress(Exception):  # CuPy candidates then fail at import with the reason
            import cupy

            kernel = cupy.RawKernel('extern "C" __global__ void warm(float* x) { x[threadIdx.x] += 1.f; }', "warm")
            kernel((1,), (32,), (probe.data_ptr(),))  # NVRTC and the driver's module loading, ahead of time
        phase("cupy")
        chunks.fused_agrees(torch.cuda.current_device())  # the block commitments' kernel, compiled and tried
        phase("digest")
        profile_call(lambda: torch.relu(probe), True)  # the profiler's first start (CUPTI) costs a second
        torch.cuda.synchronize()
        phase("profiler")
        knockout.install()  # before any candidate code: the wrappers are part of what the guards snapshot
        phase("knockout")
    return {"cuda": cuda, "device": name, "torch": torch.__version__, "startup_s": time.perf_counter() - started,
            "startup_phases": phases}


def wait_for_the_gpu(channel) -> None:
    """Say the imports are done and wait until the slot lets this runner onto the GPU (`warm_up`'s gate)."""
    channel.send({"type": "imported"})
    channel.receive()  # the slot's go-ahead; the judge's job comes only after the hello


def main(argv: list[str]) -> int:
    from engine.untrusted.runner import audit
    from engine.wire.channel import Channel, ChannelClosed

    fd = int(argv[argv.index("--fd") + 1])
    device = argv[argv.index("--device") + 1] if "--device" in argv else "cpu"
    faulthandler.enable(file=sys.stderr, all_threads=True)
    os.dup2(2, 1)  # the candidate's prints go to the log
    channel = Channel.from_fd(fd)
    try:
        hello = warm_up(device, (lambda: wait_for_the_gpu(channel)) if device == "cuda" else None)
    except (ChannelClosed, BrokenPipeError, ConnectionResetError):
        return 0  # retired before it was let onto the GPU
    scratch = Path.cwd()
    audit.install([str(scratch), "/refinery/ext", os.environ.get("TMPDIR", str(scratch))])
    channel.send({"type": "hello", "pid": os.getpid(), **hello})
    try:
        return serve(channel, scratch, "cuda" if hello["cuda"] else "cpu")
    except (ChannelClosed, BrokenPipeError, ConnectionResetError):
        print("the judge closed the connection", file=sys.stderr, flush=True)
        return 0
