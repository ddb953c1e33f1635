"""The support matrix as the tests read it: collectives/implementations.def (the one place that
declares every implementation name, what runs under it on each device and what each implements),
parsed line by line as CMake reads it (tests/gpu/implementations.cmake).

    from implementations import SUPPORT, names_of
    SUPPORT[("gpu", "ring")].collectives      # {"allreduce", ...}
    names_of("gpu", needs="nccl")             # ["nccl", "nccl-ring", ...] in the registry's order
"""
import os
import re
from collections import namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEF_FILE = os.path.join(ROOT, "collectives", "implementations.def")

# needs: always (our CPU code), mpi (the MPI library's own collectives), cuda (our kernels), nccl.
Support = namedtuple("Support", "name device needs by_default collectives")

_NAME = re.compile(r'^CCBENCH_IMPLEMENTATION\((\w+), "([\w-]+)"\)$')
_SUPPORT = re.compile(r'^CCBENCH_SUPPORT\((\w+), (cpu|gpu), (\w+), (default|optional), \w+, "([a-z,]+)", "')


def read_matrix(path=DEF_FILE):
    """[Support] in the file's order; ValueError naming the line where a row does not parse or
    names an id without a name."""
    names, rows = {}, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if line.startswith("CCBENCH_IMPLEMENTATION("):
                m = _NAME.match(line)
                if not m:
                    raise ValueError(f"{path}:{number}: not CCBENCH_IMPLEMENTATION(id, \"name\"): {line}")
                names[m.group(1)] = m.group(2)
            elif line.startswith("CCBENCH_SUPPORT("):
                m = _SUPPORT.match(line)
                if not m or m.group(1) not in names:
                    raise ValueError(f"{path}:{number}: a row that does not parse, or of an id without a name: {line}")
                ident, device, needs, selection, colls = m.groups()
                rows.append(Support(names[ident], device, needs, selection == "default", frozenset(colls.split(","))))
    if not rows:
        raise ValueError(f"{path}: no CCBENCH_SUPPORT rows")
    return rows


MATRIX = read_matrix()
SUPPORT = {(r.device, r.name): r for r in MATRIX}


def names_of(device, needs=None, by_default=None):
    """The names of `device`'s implementations in the registry's order, those of `needs` (or
    by_default) only where given."""
    return [r.name for r in MATRIX if r.device == device and (needs is None or r.needs == needs)
            and (by_default is None or r.by_default == by_default)]
