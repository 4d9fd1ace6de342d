"""What a sandboxed child prints, read into bounded memory: its head and its tail, never all of it.

A child's output is as untrusted as the child: a compile that prints warnings without end, or a library
constructor that prints in a loop, would otherwise grow the trusted process that reads it until that
process dies (70 MB a second from one compile). `Bounded` keeps the first `head` and the last `tail` bytes
and counts what it left out between them; `Drain` is a thread that reads one pipe to its end into a
`Bounded`, so the child never blocks on a full pipe and the parent never holds more than the bound.
Every read of a sandboxed child's stdout or stderr goes through these two.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable

HEAD_BYTES = 1 << 20
TAIL_BYTES = 1 << 20
CHUNK = 1 << 16


def left_out_marker(count: int) -> bytes:
    return f"\n… {count} bytes left out …\n".encode()


class Bounded:
    """The first `head` and the last `tail` bytes of a stream, and how many bytes were left out between."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_limit, self.tail_limit = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            room = self.head_limit - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if not data or not self.tail_limit:
                return
            if len(data) >= self.tail_limit:
                self.tail[:] = data[-self.tail_limit:]
                return
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trimmed now and then, not at every chunk
                del self.tail[:-self.tail_limit]

    @property
    def left_out(self) -> int:
        with self._lock:
            return self.total - len(self.head) - min(len(self.tail), self.tail_limit)

    def value(self) -> bytes:
        """Everything, if it fit; else the head, a line saying how many bytes were left out, and the tail."""
        with self._lock:
            tail = bytes(self.tail[-self.tail_limit:]) if self.tail_limit else b""
            missing = self.total - len(self.head) - len(tail)
            return bytes(self.head) + (left_out_marker(missing) if missing else b"") + tail

    def text(self) -> str:
        return self.value().decode("utf-8", "replace")


class Drain(threading.Thread):
    """Reads the pipe `fd` to its end into `buffer` (a daemon thread; closes `fd` at the end). `watch`, if
    given, is called with the bytes read so far after each chunk (a caller stopping a job that floods)."""

    def __init__(self, fd: int, buffer: Bounded | None = None, watch: Callable[[int], None] | None = None,
                 name: str = "sandbox-output") -> None:
        super().__init__(name=name, daemon=True)
        self.fd = fd
        self.buffer = buffer if buffer is not None else Bounded()
        self.watch = watch

    @classmethod
    def of(cls, pipe, buffer: Bounded | None = None, watch: Callable[[int], None] | None = None,
           name: str = "sandbox-output") -> Drain:
        """Start draining `pipe` (a file object, e.g. a Popen's stdout, or a descriptor); the Drain owns it."""
        fd = pipe if isinstance(pipe, int) else os.dup(pipe.fileno())
        if not isinstance(pipe, int):
            pipe.close()
        drain = cls(fd, buffer, watch, name)
        drain.start()
        return drain

    def run(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self.fd, CHUNK)
                except InterruptedError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                self.buffer.add(chunk)
                if self.watch is not None:
                    self.watch(self.buffer.total)
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

    def finish(self, timeout_s: float = 10.0) -> bytes:
        """The bounded output, once the pipe ended (or after `timeout_s`: a writer that outlived its job)."""
        self.join(timeout_s)
        return self.buffer.value()
