"""Messages between the judge and a runner: a JSON header and optional raw bytes, over a Unix socket.

Frame: 4-byte header length, 8-byte payload length (network order), the JSON header, the payload.
Descriptors (the shared-memory region) travel with the first byte of a frame (SCM_RIGHTS). The
receiver bounds both lengths before reading, so a hostile peer cannot make it allocate without limit;
a peer that stops talking is the caller's deadline to enforce (the pool kills the runner).
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct

HEADER = struct.Struct("!IQ")
MAX_HEADER_BYTES = 64 * 2**20


class ChannelClosed(ConnectionError):  # noqa: N818 - the peer went away, not a programming error
    """The peer closed the socket (or died) before a whole message arrived."""


class ProtocolError(ValueError):
    """The peer sent something that is not a well-formed message within the limits."""


class Channel:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        return cls(socket.socket(fileno=fd))

    def send(self, message: dict, payload: bytes | memoryview = b"", fds: tuple[int, ...] = ()) -> None:
        header = json.dumps(message, separators=(",", ":")).encode()
        frame = HEADER.pack(len(header), len(payload)) + header
        if fds:
            self.sock.sendmsg([frame[:1]], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))])
            frame = frame[1:]
        self.sock.sendall(frame)
        if len(payload):
            self.sock.sendall(payload)

    def _exact(self, count: int, first: bytes = b"") -> bytes:
        chunks, have = [first], len(first)
        while have < count:
            chunk = self.sock.recv(min(count - have, 1 << 22))
            if not chunk:
                raise ChannelClosed("the peer closed the connection")
            chunks.append(chunk)
            have += len(chunk)
        return b"".join(chunks)

    def receive(self, max_payload: int = 0) -> tuple[dict, bytes, list[int]]:
        """(message, payload, descriptors); raises ChannelClosed or ProtocolError."""
        first, fds, _, _ = socket.recv_fds(self.sock, 1, 8)
        if not first:
            raise ChannelClosed("the peer closed the connection")
        head = self._exact(HEADER.size, first)
        header_len, payload_len = HEADER.unpack(head)
        if header_len > MAX_HEADER_BYTES or payload_len > max_payload:
            for fd in fds:
                _close(fd)
            raise ProtocolError(f"message of {header_len} + {payload_len} bytes is over the limit "
                                f"({MAX_HEADER_BYTES} + {max_payload})")
        try:
            message = json.loads(self._exact(header_len))
        except (ValueError, RecursionError) as exc:  # not JSON, an integer past 4300 digits, nesting past the stack
            raise ProtocolError(f"malformed message: {type(exc).__name__}: {str(exc)[:200]}") from exc
        if not isinstance(message, dict):
            raise ProtocolError("a message must be a JSON object")
        payload = self._exact(payload_len) if payload_len else b""
        return message, payload, list(fds)

    def close(self) -> None:
        self.sock.close()


def _close(fd: int) -> None:
    import os

    with contextlib.suppress(OSError):
        os.close(fd)
