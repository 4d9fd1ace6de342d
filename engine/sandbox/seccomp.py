"""The seccomp filter every sandboxed process runs under, as the BPF program bubblewrap loads.

Default allow, then deny what a candidate needs only to attack its surroundings: tracing or reading
other processes, mounting, new namespaces (the boundary's own walls), kernel modules and BPF,
keyrings, io_uring (whose operations bypass the filter) and every socket but AF_UNIX. Denied calls
fail with EPERM rather than killing the process, so a library that probes (e.g. for a socket) gets
an error it can handle, and an attack gets a clear "Operation not permitted" in its log. `clone3`
answers ENOSYS: its flags sit behind a pointer the filter cannot read, and the C library then
falls back to `clone`, whose namespace flags the filter does check.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile

DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig",
    "unshare", "setns",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "syslog", "settimeofday", "clock_settime", "adjtimex",
)
NAMESPACE_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
                   | 0x00000080)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
AF_UNIX = 1


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is missing: the sandbox runs without a syscall filter."""


def _library():
    try:
        import pyseccomp
    except (ImportError, OSError, AttributeError, TypeError) as exc:
        raise SeccompUnavailable(f"libseccomp could not be loaded ({type(exc).__name__}: {exc})") from exc
    return pyseccomp


@functools.cache
def filter_program() -> bytes:
    """The compiled filter (classic BPF), built once per process; raises SeccompUnavailable."""
    sc = _library()
    rules = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            rules.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            continue  # a call this kernel's architecture does not have
    rules.add_rule(sc.ERRNO(errno.EPERM), "socket", sc.Arg(0, sc.NE, AF_UNIX))
    rules.add_rule(sc.ERRNO(errno.EPERM), "socketpair", sc.Arg(0, sc.NE, AF_UNIX))
    for flag in _single_flags(NAMESPACE_FLAGS):
        rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as handle:
        rules.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def _single_flags(mask: int) -> list[int]:
    return [1 << bit for bit in range(64) if mask & (1 << bit)]


def program_fd() -> int:
    """A readable descriptor holding the filter, for `bwrap --seccomp FD` (the caller closes it)."""
    program = filter_program()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end
