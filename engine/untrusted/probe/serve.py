"""`python -m engine.untrusted.probe --serve MEMORY_MB`: probes many imported files in one sandbox, torch
imported once.

Requests come on stdin, one JSON line each: `{"id", "filename", "source", "configs": [{"name", "params"}],
"timeout_s", "threads"}`. Each is probed in a child forked from this warm process (torch, its meta
kernels and the FLOP formulas already loaded: a child starts in milliseconds), so a file's top-level
code, its monkeypatching and its crash stay with that file. A child past its time is killed with its
process group. Replies go to stdout, one JSON line each: `{"id", "configs": [...], "cpu_s"}` or
`{"id", "error", "cpu_s"}`; the first line says the server is ready (and what starting it cost).

A child's own output goes to a log beside it, never to the reply channel; only its last lines come
back, when it crashed.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

POLL_S = 0.01


@dataclass
class Child:
    request: dict
    pid: int
    folder: Path
    deadline: float


def _warm() -> float:
    """Load what every probe needs (torch, meta kernels, dispatch modes, FLOP formulas) before forking.
    Only meta tensors: no CPU op runs, so no thread pool exists to be lost across fork."""
    started = time.perf_counter()
    import torch

    from engine.untrusted.probe.forward import OpCounter
    from engine.untrusted.probe.rnn import rnn_on_meta

    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                    torch.nn.Linear(144, 8))
        lstm = torch.nn.LSTM(8, 8, batch_first=True)
        with torch.no_grad(), OpCounter() as counter, rnn_on_meta(counter):
            lstm(model(torch.randn(2, 3, 8, 8)).softmax(-1).unsqueeze(1))
    return time.perf_counter() - started


def _write(fd: int, message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _child(request: dict, folder: Path, reply_fd: int) -> None:
    """In the forked child: probe, write the result beside the log, and leave without running any
    cleanup of the parent's."""
    code = 0
    try:
        os.setpgid(0, 0)
        os.close(reply_fd)
        log = os.open(folder / "log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        import torch

        torch.set_num_threads(max(1, int(request.get("threads", 1))))
        from engine.untrusted.probe.forward import probe_file

        progress_path = folder / "progress"

        def progress(stage: str) -> None:
            progress_path.write_text(stage)

        results = probe_file(request["source"], request["filename"], request["configs"], progress)
        (folder / "result.json").write_text(json.dumps(results))
    except BaseException:  # noqa: BLE001 - anything at all: the parent reads the log
        traceback.print_exc()
        code = 70
    finally:
        os._exit(code)


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    kept = [ln.strip() for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(kept)[-600:]


def _progress(folder: Path) -> str:
    try:
        return folder.joinpath("progress").read_text()
    except OSError:
        return "starting"


def _status_words(status: int, memory_mb: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        text = f"was killed by {name}"
        if sig == signal.SIGKILL:
            text += f" (the import's memory limit is {memory_mb} MB)"
        return text
    return f"exited with status {os.WEXITSTATUS(status)}"


def _finish(child: Child, status: int | None, memory_mb: int) -> dict:
    reply = {"id": child.request["id"]}
    if status is None:
        timeout = float(child.request.get("timeout_s", 60))
        reply["error"] = f"timed out after {timeout:.0f} s in {_progress(child.folder)}"
        return reply
    result = child.folder / "result.json"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and result.is_file():
        try:
            reply["configs"] = json.loads(result.read_text())
            return reply
        except ValueError:
            pass
    tail = _tail(child.folder / "log")
    reply["error"] = (f"the probe {_status_words(status, memory_mb)} in {_progress(child.folder)}"
                      + (f": {tail}" if tail else ""))
    return reply


def _kill(child: Child):
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(child.pid, signal.SIGKILL)
    _, status, usage = os.wait4(child.pid, 0)
    return status, usage


def serve(memory_mb: int) -> int:
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # stray prints of ours can never reach the reply channel
    warm_s = _warm()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _write(reply_fd, {"ready": True, "seconds": warm_s, "cpus": len(os.sched_getaffinity(0)),
                      "cpu_s": usage.ru_utime + usage.ru_stime})
    root = Path(tempfile.mkdtemp(prefix="probes-"))
    children: dict[int, Child] = {}
    buffer, open_input, count = b"", True, 0
    while open_input or children:
        if open_input:
            ready, _, _ = select.select([0], [], [], POLL_S)
            if ready:
                chunk = os.read(0, 1 << 20)
                open_input = bool(chunk)
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in filter(None, (ln.strip() for ln in lines)):
                    request = json.loads(line)
                    count += 1
                    folder = root / str(count)
                    folder.mkdir()
                    sys.stdout.flush()
                    sys.stderr.flush()
                    pid = os.fork()
                    if pid == 0:
                        _child(request, folder, reply_fd)
                    deadline = time.monotonic() + float(request.get("timeout_s", 60))
                    children[pid] = Child(request, pid, folder, deadline)
        else:
            time.sleep(POLL_S)
        for pid, child in list(children.items()):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done == 0 and time.monotonic() < child.deadline:
                continue
            if done == 0:
                status, usage = _kill(child)
                reply = _finish(child, None, memory_mb)
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)  # whatever the file started and left behind
                reply = _finish(child, status, memory_mb)
            reply["cpu_s"] = usage.ru_utime + usage.ru_stime
            _write(reply_fd, reply)
            shutil.rmtree(child.folder, ignore_errors=True)
            del children[pid]
    return 0
