"""SYS_TR_ACC (system_tr_wr.wr_imm): the TIU registers later commands read as operands.

Sources: isa-facts bm1688.json sync.sys_tr_acc (reg_idx0 <- imm0, reg_idx1 <- the low 32 bits of
imm1, reg_idx2 <- the high 32 bits; the order of imm1's halves as the shared tdl_models streams
show it: the low half carries local addresses and right shifts), tpu-mlir
python/debugger/target_1688/opparam.py (TGCR: which register each operand reads; chip params
tgcr_*, bmk/specs/<chip>/chip.toml).

The quantized conv, PorD and MM / MM2 commands have no field for their kernel zero point (opd4)
or requant parameters (opd5: an address, or the constant multiplier with the shift and output
zero point beside it): the TIU reads them from registers an earlier system_tr_wr.wr_imm of the
same TIU stream wrote. TIU commands run in stream order, so the value a command reads is known
from the stream alone: `prepare` walks each core's TIU records in order and gives every command
that requantizes (opt_rq) the registers it reads as fields tgcr_opd4, tgcr_opd5, tgcr_rq_shift
and tgcr_rq_yzp (None: no write before it in the buffer, which the semantics refuse by name).
The writes themselves then compute nothing (`KINDS`). A record that already carries them keeps
them: a core's stream is resolved whole, then cut into rounds (bmk/sim/cores.py).
"""
import attrs

from bmk.encoders.fields import as_dict
from bmk.errors import refused_field

WRITE = "system_tr_wr.wr_imm"
READS = ("opd4", "opd5", "rq_shift", "rq_yzp")         # chip params tgcr_<name>: register indexes
FIELDS_READ = tuple(f"tgcr_{r}" for r in READS)


def prepare(chip, records):
    """The records, each requantizing TIU command given the registers it reads (module docstring)."""
    index = {r: chip.param(f"tgcr_{r}") for r in READS if has_register(chip, r)}     # CV184X has no opd4
    regs, out = {}, []
    for rec in records:
        if rec.engine != "tiu":
            out.append(rec)
            continue
        f = rec.fields
        if rec.kind == WRITE:
            bank = regs.setdefault(rec.core, {})
            imm1 = f.get("imm1", 0)
            bank[f.get("reg_idx0", 0)] = f.get("imm0", 0)
            bank[f.get("reg_idx1", 0)] = imm1 & 0xFFFFFFFF
            bank[f.get("reg_idx2", 0)] = imm1 >> 32
        elif f.get("opt_rq", 0) and not any(name in f for name in FIELDS_READ):    # resolved once
            bank = regs.get(rec.core, {})
            rec = attrs.evolve(rec, fields=as_dict(f) | {f"tgcr_{r}": bank.get(k) for r, k in index.items()})
        out.append(rec)
    return out


def has_register(chip, name):
    """Whether the chip's commands read operand `name` from a register (CV184X has no opd4)."""
    return chip.param(f"tgcr_{name}", None) is not None


def register(f, name, kind):
    """The value of register tgcr_<name> a command read; SimulationError when none was written."""
    v = f.get(f"tgcr_{name}")
    if v is None:
        raise refused_field(f"{kind}: reads TIU register tgcr_{name}, which no {WRITE} before it in the "
                            f"buffer wrote", f"tgcr_{name}", None)
    return v


def check_written(f, kind, reads=("opd4", "opd5"), constants=True):
    """Refuse (before anything runs) a requantizing command that reads a register no write before
    it set: `reads`, plus the constant requant's shift and zero point when opt_opd5_const (and
    `constants`: a float rescale has neither, rq.py)."""
    if not f.get("opt_rq", 0):
        return
    names = tuple(reads) + (("rq_shift", "rq_yzp") if constants and f.get("opt_opd5_const", 0) else ())
    for name in (f"tgcr_{r}" for r in names):
        if name in f and f[name] is None:
            raise refused_field(f"{kind}: {name} (a TIU register it reads) must be written by a {WRITE} "
                                f"before it in the buffer, not left unwritten", name, None)


def write_registers(m, f):
    """Computes nothing when it runs: `prepare` gave its values to the commands that read them."""


KINDS = {WRITE: write_registers}
FIELDS = {WRITE: frozenset({"imm0", "imm1", "reg_idx0", "reg_idx1", "reg_idx2"})}
