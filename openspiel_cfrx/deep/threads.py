"""How many torch intra-op threads a neural solver trains with on CPU.

torch's default is one intra-op thread per core. Deep CFR's networks are
small (tens to a few hundred units per layer, minibatches of a few thousand):
a training step or an inference batch takes about a millisecond, so extra
threads mostly add synchronisation, and on a machine shared with other
processes they wait for each other's time slices. `docs/decisions.md`
("Torch threads") has the measurements behind the rule below.

`WorkerSettings(num_threads="auto")` (the solvers' default): one thread when every hidden
layer is at most `SMALL_WIDTH` units wide; otherwise torch's thread count,
capped at the CPUs this process may run on (`os.sched_getaffinity`: a
container's or `taskset`'s limit, which torch does not read). An int sets the
count; None leaves torch's setting alone. The count is process-wide
(`torch.set_num_threads`), and a change is said once per process on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

SMALL_WIDTH = 128  # widest hidden layer trained on one thread by "auto"
_said: set[tuple[int, int]] = set()


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_num_threads(widths: Iterable[int], current: int) -> int:
    """The thread count "auto" picks for networks with these hidden widths,
    given torch's current count."""
    widths = [int(w) for w in widths]
    if not widths or max(widths) <= SMALL_WIDTH:
        return 1
    return max(1, min(int(current), usable_cpus()))


def apply_num_threads(num_threads, widths: Iterable[int], device) -> int:
    """Sets torch's intra-op thread count as `num_threads` asks (see the module
    doc) and returns it; "auto" on a CUDA device leaves it alone."""
    import torch

    current = torch.get_num_threads()
    if num_threads is None or (num_threads == "auto" and str(device).startswith("cuda")):
        return current
    wanted = auto_num_threads(widths, current) if num_threads == "auto" else int(num_threads)
    if wanted != current:
        torch.set_num_threads(wanted)
        if num_threads == "auto" and (current, wanted) not in _said:
            _said.add((current, wanted))
            why = (f"hidden layers <= {SMALL_WIDTH} units" if wanted == 1
                   else f"{usable_cpus()} CPUs usable by this process")  # fmt: skip
            print(f"torch intra-op threads {current} -> {wanted} ({why}; WorkerSettings(num_threads=) sets it, "
                  "None leaves it alone)", file=sys.stderr)  # fmt: skip
    return wanted
