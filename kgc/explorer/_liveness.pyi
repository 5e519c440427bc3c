"""Types of the liveness kernel (kgc/explorer/native/scc.c). Arrays go in as buffers (``array``,
``memoryview``, ``bytes``) and come back as ``bytes`` of int32 or uint64."""

from typing_extensions import Buffer

def components(offsets: Buffer, targets: Buffer, /) -> tuple[bytes, int, int, int]: ...
def whole_fair(
    offsets: Buffer, targets: Buffer, classes: Buffer, nclasses: int, comp: Buffer, ncomps: int, level: int, /
) -> bytes: ...
def fair_parts(
    offsets: Buffer,
    targets: Buffer,
    classes: Buffer,
    nclasses: int,
    bad: Buffer,
    level: int,
    comp: Buffer | None = None,
    whole: Buffer | None = None,
    /,
) -> tuple[bytes, int]: ...
def project(
    keys: Buffer,
    mode: int,
    vecs: Buffer | None,
    consumers: int,
    i: int,
    comp: Buffer | None,
    status: Buffer | None,
    /,
) -> tuple[bytes, bytes]: ...
def bad_states(comp: Buffer, idx: Buffer, goal: Buffer, /) -> bytes: ...
