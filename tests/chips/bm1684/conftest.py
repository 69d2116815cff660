"""Every bm1684 API call made by these tests emits only the instruction kinds its op-table row
lists (OpRow.kinds): checked on every lowering, by wrapping the Context's pack step."""
import pytest

from bmk.bm1684 import Context
from bmk.isa import load_chip

CHIP = load_chip("bm1684")

ROWS = {name: row for row in Context.OPS for name in row.names}


def _kind(engine, fields):
    fmt = CHIP.engine(engine).format
    ins = fmt.instruction_of({**fmt.defaults, **fields})
    return f"{engine}.{ins.name}" if ins else f"{engine}.<no kind>"


@pytest.fixture(autouse=True)
def emitted_kinds_are_listed(monkeypatch):
    pack = Context._pack

    def checked(self, call, descriptors):
        row = ROWS.get(call)
        if row is not None:
            emitted = {_kind(engine, fields) for engine, fields in descriptors}
            assert emitted <= set(row.kinds), f"{call} emitted {sorted(emitted - set(row.kinds))}, not in its row's kinds"
        return pack(self, call, descriptors)
    monkeypatch.setattr(Context, "_pack", checked)
