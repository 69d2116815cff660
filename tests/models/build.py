"""Test-only writers of small bmodel / cvimodel files, from the facts (isa-facts/bmodel-format.md,
cvimodel-format.md), with the flatbuffers runtime's Builder: what the readers must read back.

A model is described with plain dicts; field ids are the schema's (the same numbers the
readers use, written out here again on purpose: a test that imported them from the reader
could not catch a wrong id).
"""
import hashlib
import struct

import flatbuffers
import numpy as np


class _Writer:
    def __init__(self):
        self.b = flatbuffers.Builder(1024)

    def string(self, s):
        return self.b.CreateString(s)

    def offsets(self, items):
        b = self.b
        b.StartVector(4, len(items), 4)
        for off in reversed(items):
            b.PrependUOffsetTRelative(off)
        return b.EndVector()

    def scalars(self, dtype, values):
        return self.b.CreateNumpyVector(np.array(values, dtype=dtype))

    def binaries(self, pairs):
        b = self.b
        b.StartVector(16, len(pairs), 8)
        for start, size in reversed(pairs):
            b.Prep(8, 16)
            b.PrependUint64(size)
            b.PrependUint64(start)
        return b.EndVector()

    def binary_refs(self, pairs):
        """The Nov 2023 SG2260 CoreCommands layout: a vector of offsets, each to one Binary struct."""
        b = self.b
        refs = []
        for start, size in pairs:
            b.Prep(8, 16)
            b.PrependUint64(size)
            b.PrependUint64(start)
            refs.append(b.Offset())
        return self.offsets(refs)

    def table(self, fields):
        """fields: {field id: (kind, value)}; kind: u8 u32 i32 u64 i64 f32 bool, off (an offset made
        before), bin ((start, size) struct)."""
        b = self.b
        b.StartObject(max(fields) + 1 if fields else 0)
        for fid, (kind, value) in sorted(fields.items()):
            if kind == "off":
                b.PrependUOffsetTRelativeSlot(fid, value, 0)
            elif kind == "bin":
                b.Prep(8, 16)
                b.PrependUint64(value[1])
                b.PrependUint64(value[0])
                b.PrependStructSlot(fid, b.Offset(), 0)
            else:
                put = {"u8": b.PrependUint8Slot, "u32": b.PrependUint32Slot, "i32": b.PrependInt32Slot,
                       "u64": b.PrependUint64Slot, "i64": b.PrependInt64Slot, "f32": b.PrependFloat32Slot,
                       "bool": b.PrependBoolSlot}[kind]
                put(fid, value, None)       # no default: always written
        return b.EndObject()

    def finish(self, root):
        self.b.Finish(root)
        return bytes(self.b.Output())


# ------------------------------------------------------------------------------------- bmodel

def tensor(name, dtype, shape, address, stmode=0, size=0, scale=1.0, zero_point=0):
    return dict(name=name, dtype=dtype, shape=shape, address=address, stmode=stmode, size=size, scale=scale,
                zero_point=zero_point)


def _bm_tensor(w, t):
    shape = w.table({0: ("off", w.scalars("<u8", list(t["shape"])))})
    shapes = w.offsets([shape])
    name = w.string(t["name"])
    return w.table({0: ("off", name), 1: ("u32", t["dtype"]), 2: ("i32", t["stmode"]), 3: ("u64", t["address"]),
                    4: ("u64", t["size"]), 5: ("off", shapes), 7: ("f32", t["scale"]), 10: ("i32", t["zero_point"])})


def _bm_group(w, g):
    return w.table({0: ("u32", g["bdc_num"]), 1: ("u32", g["gdma_num"]), 2: ("bin", g["bdc"]), 3: ("bin", g["gdma"]),
                    4: ("u32", g["bdc"][1]), 5: ("u32", g["gdma"][1])})


def _bm_subnet(w, s):
    fields = {0: ("i32", s.get("mode", 0)), 5: ("i32", s.get("dynamic", 0)), 10: ("i32", s.get("id", 0))}
    if s.get("groups") is not None:
        fields[1] = ("off", w.offsets([_bm_group(w, g) for g in s["groups"]]))
    if s.get("cores") is not None:
        cores = []
        for c in s["cores"]:
            groups = w.offsets([_bm_group(w, g) for g in c["groups"]])
            write = w.binary_refs if c.get("layout") == "refs" else w.binaries
            extra = {fid: ("off", write(c[name])) for name, fid in (("sdma", 1), ("hau", 2), ("cdma", 3))
                     if c.get(name)}
            cores.append(w.table({0: ("off", groups), **extra}))
        fields[14] = ("off", w.offsets(cores))
    if s.get("ir_len"):
        fields[7] = ("u32", s["ir_len"])
    for fid, key in ((3, "inputs"), (4, "outputs")):
        if s.get(key):
            fields[fid] = ("off", w.offsets([_bm_tensor(w, t) for t in s[key]]))
    if s.get("next") is not None:
        fields[11] = ("off", w.scalars("<i4", s["next"]))
    return w.table(fields)


def _bm_stage(w, st):
    fields = {0: ("off", w.offsets([_bm_tensor(w, t) for t in st["inputs"]])),
              1: ("off", w.offsets([_bm_tensor(w, t) for t in st["outputs"]])),
              2: ("u64", st.get("ctx_addr", 0)), 3: ("u64", st.get("ctx_size", 0))}
    if st.get("coeff") is not None:
        address, binary = st["coeff"]
        check = w.scalars("u1", list(st.get("check", range(32))))
        fields[4] = ("off", w.table({0: ("u64", address), 1: ("off", check), 2: ("bin", binary)}))
    if st.get("subnets") is not None:
        fields[12] = ("off", w.offsets([_bm_subnet(w, s) for s in st["subnets"]]))
    if st.get("groups") is not None:            # old files: the stage's own cmd_group
        fields[8] = ("off", w.offsets([_bm_group(w, g) for g in st["groups"]]))
    if st.get("core_num"):
        fields[16] = ("u32", st["core_num"])
    return w.table(fields)


def bmodel(chip, nets, binary=b"", kernel=None):
    """The bytes of a bmodel: nets = [{"name", "stages": [stage dicts]}]; binary: the binary area."""
    w = _Writer()
    net_offs = []
    for net in nets:
        for st in net["stages"]:    # the coefficients' sha256, as the vendor's compilers record it
            if st.get("coeff") is not None and "check" not in st:
                start, size = st["coeff"][1]
                st["check"] = hashlib.sha256(binary[start:start + size]).digest()
        stages = w.offsets([_bm_stage(w, st) for st in net["stages"]])
        name = w.string(net["name"])
        net_offs.append(w.table({0: ("off", name), 3: ("off", stages)}))
    nets_vec = w.offsets(net_offs)
    fields = {0: ("off", w.string("B")), 1: ("off", w.string("2.2")), 2: ("off", w.string("today")),
              3: ("off", w.string(chip)), 4: ("off", nets_vec), 5: ("u64", 0)}
    if kernel is not None:
        fields[6] = ("off", w.table({0: ("off", w.string(kernel[0])), 1: ("bin", kernel[1])}))
    fb = w.finish(w.table(fields))
    header = struct.pack("<IIIQ", 0xFF55AAEE, 64, len(fb), len(binary)) + bytes(44)
    return header + fb + binary


# ----------------------------------------------------------------------------------- cvimodel

def cvimodel(chip, cmdbuf, weight=b"", inputs=(("x", 6, (1, 4, 1, 1), 3 << 40),),
             outputs=(("y", 0, (1, 4, 1, 1), 4 << 40),)):
    """The bytes of a one-program cvimodel: a WEIGHT section and one CMDBUF section."""
    w = _Writer()
    tensors = []
    for name, dtype, shape, offset in tuple(inputs) + tuple(outputs):
        shp = w.table({0: ("off", w.scalars("<i8", list(shape)))})
        quant = w.table({0: ("u8", 0), 4: ("f32", 2.0)})
        tensors.append(w.table({1: ("off", w.string(name)), 2: ("i64", offset), 3: ("u8", dtype), 4: ("off", shp),
                                6: ("off", quant)}))
    tmap = w.offsets(tensors)
    ins = w.offsets([w.string(t[0]) for t in inputs])
    outs = w.offsets([w.string(t[0]) for t in outputs])
    tpu = w.table({0: ("off", w.string("subfunc_0"))})
    r_in = w.offsets([w.string(t[0]) for t in inputs])
    r_out = w.offsets([w.string(t[0]) for t in outputs])
    routine = w.table({0: ("u8", 0), 1: ("off", r_in), 2: ("off", r_out), 3: ("off", tpu)})
    program = w.table({0: ("u32", 1), 1: ("u32", 0), 2: ("off", ins), 3: ("off", outs), 4: ("off", tmap),
                       5: ("off", w.offsets([routine])), 6: ("u32", 64)})
    sections = w.offsets([
        w.table({0: ("u8", 0), 1: ("off", w.string("weight")), 2: ("u32", len(weight)), 3: ("u32", 0)}),
        w.table({0: ("u8", 1), 1: ("off", w.string("subfunc_0")), 2: ("u32", len(cmdbuf)), 3: ("u32", len(weight))}),
    ])
    weights = w.offsets([w.table({0: ("off", w.string("w")), 1: ("i64", (1 << 40) + 0), 2: ("u32", len(weight))})])
    name = w.string("tiny")
    fb = w.finish(w.table({1: ("off", name), 5: ("off", weights), 6: ("off", w.offsets([program])),
                           7: ("off", sections), 8: ("off", w.string(chip))}))
    header = b"CviModel" + struct.pack("<IBB", len(fb), 1, 4) + bytes(16) + chip.encode().ljust(16, b"\0") + b"AA"
    return header + fb + weight + cmdbuf
