"""Rewrite a one-group TPU1686 bmodel (CV184X, BM1688) so the vendor's cmodel shows what bmk's
simulator should: the model cut after a TIU command, or one TIU command run on local-memory
bytes of our choosing. Run the result with the vendor's model_runner (tools/vendor_cmodel.py
says how) and with bmk, then compare the two neuron memories: the rewritten model's first
output covers all of it. How the CV184X softmax, division, window sums and bf16 convolutions
were pinned down (README "The vendor's cmodel as a reference").

    python tools/vendor_probe.py cut MODEL OUT T [--dump LADDR,C,H,W,FMT[,NEURON_OFFSET]]
    python tools/vendor_probe.py one BASE OUT --op MODEL:T [--set JSON] [--load LADDR,NBYTES,INPUT_OFFSET]...
                                 --dump LADDR,NBYTES,NEURON_OFFSET

cut: TIU commands 1..T-1 run (T is replaced by the end), GDMA up to the first command that waits
for TIU T or later; --dump adds a GDMA store of an aligned local tensor (n = 1, C channels from
lane 0, FMT a data_format code) into neuron memory (default offset: 256 KiB before its end).
one: BASE's streams become raw loads of every lane's bytes [LADDR, LADDR + NBYTES) from BASE's
input tensor (whose bytes you choose), MODEL's TIU command T (fields changed by --set), a raw
store of every lane's bytes into neuron memory, the ends.

The flatbuffer fields it changes (the first output's address, size and shape; the group's stream
sizes and command counts) are found by their values before the file's binaries (bmk's reader
does not write bmodels): it stops when a value is not where one copy of it is expected.
"""
import argparse
import json
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import bmk  # noqa: E402
from bmk.encoders import Record  # noqa: E402
from bmk.encoders.codec import codec_for  # noqa: E402
from bmk.isa import load_chip  # noqa: E402

LOCAL_TAG = 0x1F00                      # the high address bits of local memory as DMA sees it (chip.toml mirror)
SIZES = {0: 1, 1: 2, 2: 4, 3: 2, 4: 4, 5: 2}     # data_format code -> bytes (specs/<chip>/gdma.toml)


class Rewrite:
    """A bmodel's bytes with its one group's records, ready to be changed in place."""

    def __init__(self, path):
        self.m = bmk.load_model(str(path))
        if len(self.m.groups()) != 1:
            raise SystemExit(f"{path}: one command group only, not {len(self.m.groups())}")
        self.spec = load_chip(self.m.chip)
        self.stage = self.m.nets[0].stages[0]
        self.group = self.m.groups()[0]
        recs = self.m.records(self.group)
        self.tiu = [r for r in recs if r.engine == "tiu"]
        self.gdma = [r for r in recs if r.engine == "gdma"]
        self.data = bytearray(self.m.data)
        coeff = self.stage.coeff
        self.fb_end = min([self.group.parts["tiu"].offset] +
                          ([coeff.blob.offset] if coeff is not None and coeff.blob is not None else []))

    def find(self, value, lo=0, hi=None):
        hi = self.fb_end if hi is None else hi
        out, i = [], self.data.find(value, lo)
        while 0 <= i < hi:
            out.append(i)
            i = self.data.find(value, i + 1)
        return out

    def output_covers_neuron_memory(self):
        o0 = self.stage.outputs[0]
        size = int(np.prod(o0.shape)) * np.dtype(o0.dtype).itemsize
        n, base = self.stage.neuron.size, self.stage.neuron.address
        done = 0
        for at in self.find(struct.pack("<" + "Q" * len(o0.shape), *o0.shape)):
            sizes = self.find(struct.pack("<Q", size), max(0, at - 200), at)
            addrs = self.find(struct.pack("<Q", o0.address), max(0, at - 200), at)
            if sizes and addrs:
                struct.pack_into("<Q", self.data, sizes[-1], n)
                struct.pack_into("<Q", self.data, addrs[-1], base)
                shape = [1] * (len(o0.shape) - 1) + [n // np.dtype(o0.dtype).itemsize]
                struct.pack_into("<" + "Q" * len(shape), self.data, at, *shape)
                done += 1
        if not done:
            raise SystemExit("the first output's size, address and shape were not found together")

    def pack(self, engine, proto, fields):
        return codec_for(self.spec.fmt(engine, proto.cls)).pack(fields)

    def _binary(self, blob):
        """{binary area base: flatbuffer position of the size} of the Binary structs (start, size)
        that may name this blob: start + base = the blob's file offset."""
        out = {}
        for at in self.find(struct.pack("<Q", blob.size)):
            start = struct.unpack_from("<Q", self.data, at - 8)[0]
            out.setdefault(blob.offset - start, at)
        return out

    def streams(self, tiu_bytes, tiu_count, gdma_bytes, gdma_count):
        """Write the two streams from their starts and patch their sizes and counts (each stream's
        Binary struct: the (start, size) pair whose start puts both streams on one binary area)."""
        parts = self.group.parts
        found = [self._binary(parts[e]) for e in ("tiu", "gdma")]
        bases = set(found[0]) & set(found[1])
        if len(bases) != 1:
            raise SystemExit(f"the streams' Binary structs were not found once ({sorted(bases)})")
        base = bases.pop()
        for (engine, raw, count, old), where in zip((("tiu", tiu_bytes, tiu_count, self.tiu),
                                                     ("gdma", gdma_bytes, gdma_count, self.gdma)), found):
            blob = parts[engine]
            if len(raw) > blob.size:
                raise SystemExit(f"the new {engine} stream ({len(raw)} bytes) is longer than the old ({blob.size})")
            self.data[blob.offset:blob.offset + len(raw)] = raw
            size_at = where[base]
            counts = self.find(struct.pack("<I", len(old)))
            if not counts:
                raise SystemExit(f"the {engine} command count {len(old)} is not in the flatbuffer")
            struct.pack_into("<Q", self.data, size_at, len(raw))
            struct.pack_into("<I", self.data, min(counts, key=lambda p: abs(p - size_at)), count)

    def dma(self, to_local, local, global_addr, shape, fmt, wait):
        """A DMA_tensor between local memory (aligned, n = 1, channels from lane 0) and global."""
        proto = next(r for r in self.gdma if r.kind == "dma.tensor" and
                     r.fields.get("dst_start_addr_h13" if to_local else "src_start_addr_h13") == LOCAL_TAG)
        c, h, w, slot = shape
        loc = dict(start_addr_l32=local, start_addr_h13=LOCAL_TAG, nsize=1, csize=c, hsize=h, wsize=w, wstride=1,
                   hstride=w, cstride=slot, nstride=slot)
        glo = dict(start_addr_l32=global_addr & 0xFFFFFFFF, start_addr_h13=global_addr >> 32, nsize=1, csize=c,
                   hsize=h, wsize=w, wstride=1, hstride=w, cstride=h * w, nstride=c * h * w)
        src, dst = (glo, loc) if to_local else (loc, glo)
        f = dict(proto.fields)
        f.update({f"src_{k}": v for k, v in src.items()})
        f.update({f"dst_{k}": v for k, v in dst.items()})
        f.update(src_data_format=fmt, cmd_id_dep=(1 << 20) | wait)
        return self.pack("gdma", proto, f)

    def ends(self):
        end = next(r for r in self.tiu if r.kind == "sys.end")
        chain = self.gdma[-1]
        return self.pack("tiu", end, dict(end.fields)), self.pack("gdma", chain, dict(chain.fields))


def _dep(r):
    return r.fields.get("cmd_id_dep", 0) & 0xFFFFF


def cut(path, out, t_end, dump=None):
    """The model cut after TIU command t_end - 1 (module docstring)."""
    rw = Rewrite(path)
    need = max([_dep(r) for r in rw.tiu[:t_end - 1]] + [0])
    keep = next(k for k, r in enumerate(rw.gdma) if _dep(r) >= t_end or r.kind.startswith("dma.sys"))
    if need > keep:
        raise SystemExit(f"TIU 1..{t_end - 1} wait for GDMA {need}, which waits for TIU {t_end} or later: cut "
                         f"elsewhere")
    rw.output_covers_neuron_memory()
    tiu_end, gdma_end = rw.ends()
    blob_t, blob_g = rw.group.parts["tiu"], rw.group.parts["gdma"]
    tiu = bytes(rw.data[blob_t.offset:blob_t.offset + rw.tiu[t_end - 1].offset]) + tiu_end
    gdma = bytes(rw.data[blob_g.offset:blob_g.offset + rw.gdma[keep].offset])
    count = keep
    if dump:
        laddr, c, h, w, fmt, *rest = [int(x, 0) for x in dump.split(",")]
        off = rest[0] if rest else rw.stage.neuron.size - 0x40000
        size = SIZES[fmt]
        slot = -(-(h * w * size) // 64) * 64 // size
        gdma += rw.dma(False, laddr, rw.stage.neuron.address + off, (c, h, w, slot), fmt, t_end - 1)
        count += 1
        print(f"dump to neuron memory + 0x{off:x}")
    rw.streams(tiu, t_end, gdma + gdma_end, count + 1)
    Path(out).write_bytes(rw.data)


def one(base, out, op, changes, loads, dump):
    """BASE rewritten to run one command on chosen lane bytes (module docstring)."""
    rw = Rewrite(base)
    src, tid = op.rsplit(":", 1)
    om = bmk.load_model(src)
    rec = [r for r in om.records(om.groups()[0]) if r.engine == "tiu"][int(tid) - 1]
    rw.output_covers_neuron_memory()
    npu = rw.spec.param("npu_num")
    address = rw.stage.inputs[0].address
    gdma = b""
    for spec in loads:
        laddr, n, ioff = [int(x, 0) for x in spec.split(",")]
        gdma += rw.dma(True, laddr, address + ioff, (npu, 1, n, n), 0, 0)
    laddr, n, noff = [int(x, 0) for x in dump.split(",")]
    gdma += rw.dma(False, laddr, rw.stage.neuron.address + noff, (npu, 1, n, n), 0, 1)
    fields = dict(rec.fields)
    fields.update(json.loads(changes))
    fields["cmd_id_dep"] = (1 << 20) | len(loads)
    tiu_end, gdma_end = rw.ends()
    rw.streams(rw.pack("tiu", rec, fields) + tiu_end, 2, gdma + gdma_end, len(loads) + 2)
    Path(out).write_bytes(rw.data)
    return Record("tiu", rec.cls, rec.kind, fields)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cut")
    c.add_argument("model"), c.add_argument("out"), c.add_argument("t", type=int), c.add_argument("--dump")
    o = sub.add_parser("one")
    o.add_argument("base"), o.add_argument("out"), o.add_argument("--op", required=True)
    o.add_argument("--set", default="{}"), o.add_argument("--load", action="append", default=[])
    o.add_argument("--dump", required=True)
    a = ap.parse_args(argv)
    if a.what == "cut":
        cut(a.model, a.out, a.t, a.dump)
    else:
        one(a.base, a.out, a.op, a.set, a.load, a.dump)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
