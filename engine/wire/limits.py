"""How large each part of a runner's reply may be: the runner keeps within these, the judge refuses what does not
(`replies`). Plain numbers, so the runner imports nothing more than it did to stay within them."""

from __future__ import annotations

MAX_RETURNED = 10_000  # values or tensors in one reply's outputs (or inputs)
MAX_DIMS = 64  # a tensor's dimensions (torch's own limit)
MAX_EXTENT = 2**48  # one dimension's size, or a byte offset into the shared region
MAX_TRIALS = 1_000_000  # claimed times in one timing block
MAX_REVEALED = 1_000  # timed calls whose outputs one reveal reply returns
MAX_CHUNKS = 256  # chunks one tensor output is committed in (wire.chunks lays them out from its size)
MAX_PROFILE_NAMES = 10_000  # ops or kernels in one profile
NAME_CHARS = 1_000  # a type, class, exception, op or stage name
KERNEL_NAME_CHARS = 20_000  # a kernel's (demangled, templated) name
MESSAGE_CHARS = 4_000  # an exception's message
TRACEBACK_CHARS = 8_000  # a traceback (the runner keeps its last 6000 characters)
EVIDENCE_ITEMS = 200  # what the runner's guards saw, per reply
EVIDENCE_CHARS = 2_000  # one item of it
INFO_ITEMS = 10_000  # names in an info reply (environment variables, cores)
