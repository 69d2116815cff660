#!/usr/bin/env python3
"""Generate the spec folders of bmk/specs/ from the register facts in tools/facts/.

Dev-only tool, never imported by the package; run by hand after editing a fact file or
this script, and by tests/specs/test_specgen.py, which regenerates every spec into a
temporary folder and diffs it against bmk/specs/ byte for byte:

    python tools/specgen.py                      # every generated chip, into bmk/specs/
    python tools/specgen.py --out /tmp/s bm1684  # one chip, elsewhere

Every layout comes from the chip's fact file (tools/facts/<chip>.json, copied from the
project's isa-facts); the choices this script makes on top of the facts (renames of
names that are not identifiers, gap rows, class keys, instruction kind names, enums) are
written as comments into the generated files. Hand-tune the data here, not in the .toml.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bmk" / "specs"
FACTS = ROOT / "tools" / "facts"       # the fact files, kept in the repository (issue 17 item 5)

# tpu-mlir's own rule for turning register-sheet names into Python names
# (python/debugger/target_1684x/xlsx_to_py.py: match_illegal = "[（）& /()]" -> "_").
ILLEGAL = re.compile("[（）& /()]")
RESERVED_NAME = re.compile(r"^(rsvd\d*|reserved|Reserved|reserve)$")


# BM1684 L2 SRAM facts that isa-facts lacks (the vendor's public bm_config.h / memmap.h for
# BM1684): its size, and where the lookup tables sit (offsets from the L2 SRAM base, as TIU
# commands address them): EX_INT_TABLE_OFFSET = 0x300000, then each table after the previous
# one (256-entry SFU and int/uint-to-float tables, 64-entry taylor tables), as memmap.h chains
# them; the runtime copies the whole l2_sram_table (made by the vendor's public table
# generator) there at start-up. (The warp table that array ends with is left out: the array
# puts it at 0x301800, memmap.h's WARP_TABLE_OFFSET after 2048 serial-number words.) EX_INT,
# EX_TABLE, EX_TAILOR and INT2FLOAT_TABLE are confirmed by the opd1_addr of the lut / md_sfu
# taylor commands of the yolov5s and retinaface streams.
L2_SRAM_BYTES_1684 = 0x400000
L2_TABLES_1684 = (
    ("l2_sram_exp_int_table", 0x300000, "EX_INT_TABLE_OFFSET: float(i) at index i & 0xff, i in [-103, 88]"),
    ("l2_sram_exp_table", 0x300400, "EX_TABLE_OFFSET: exp(i) at index i & 0xff, i in [-103, 88]"),
    ("l2_sram_lnx_table", 0x300800, "LNX_TABLE_OFFSET: ln(2) * (i - 127), i the uint8 index"),
    ("l2_sram_exp_taylor_table", 0x300C00, "EX_TAILOR_OFFSET: taylor coefficients of exp(x) - 1"),
    ("l2_sram_lnx_taylor_table", 0x300D00, "LNX_TAILOR_OFFSET: taylor coefficients of ln(1 + x)"),
    ("l2_sram_arcsinx_taylor_table", 0x300E00, "ARCSINX_TAILOR_OFFSET: taylor coefficients of arcsin(x)"),
    ("l2_sram_uint2float_table", 0x300F00, "UINT2FLOAT_TABLE_OFFSET: float(i), i the uint8 index"),
    ("l2_sram_int2float_table", 0x301300, "INT2FLOAT_TABLE_OFFSET: float(i), i the int8 index"),
    ("l2_sram_sinx_taylor_table", 0x301700, "SINX_TAILOR_OFFSET: taylor coefficients of sin(x)"),
)
LUT_INDEX_BITS_1684 = 8

# BM1684X static memory: the lookup tables the vendor's cmodel writes there before a run
# (tpu-mlir python/debugger/target_1684x/cmodel.py `gen_lookup_table`, "firmware_runtime.c:340":
# EXP_TABLE 256 words, EXP_COEFF 32, LOG_COEFF 64, ERF_COEFF 16, SEQ_COEFF 64, ... each padded
# to a multiple of 16 words, in that order). Offsets in bytes from the static memory base, and
# the entries each holds; the golden yolov5s stream's tsbc.s_distribute reads SEQ at 1472.
STATIC_TABLES_1684X = (
    ("static_exp_table", 0, 192, "fp32 e^(i - 103), i < 192 (the rest of its 256 words 0)"),
    ("static_exp_coeff_table", 1024, 32, "fp32 1 / k!: the taylor coefficients of e^x"),
    ("static_log_coeff_table", 1152, 64, "fp32 0, then (-1)^(k+1) / k: the taylor coefficients of ln(1 + x)"),
    ("static_seq_table", 1472, 64, "int32 k: the sequence 0, 1, 2, ..."),
)
# BM1688 static memory (tpu-mlir python/debugger/target_1688/cmodel.py `gen_lookup_table`: EXP_COEFF
# 32 words, LOG_COEFF 64, ERF_COEFF 16, SEQ_COEFF 64, ... no EXP_TABLE; the shared tdl_models
# streams' tsbc.s_distribute reads SEQ at 448). Its TIU commands name a static operand by its
# offset in static memory (the debugger's memmap puts static memory at 0): tiu_static_offset.
STATIC_TABLES_1688 = (
    ("static_exp_coeff_table", 0, 32, "fp32 1 / k!: the taylor coefficients of e^x"),
    ("static_log_coeff_table", 128, 64, "fp32 0, then (-1)^(k+1) / k: the taylor coefficients of ln(1 + x)"),
    ("static_seq_table", 448, 64, "int32 k: the sequence 0, 1, 2, ..."),
)
# CV184X (MARS3) static memory: the TPU1686 kernel's layout for MARS3 (tpu-mlir
# third_party/ppl/runtime/mars3/TPU1686/kernel/include/memmap.h: EXP_BF16_TAYLOR 0, LOG_BF16_TAYLOR
# 32, ERF_BF16_TAYLOR 64 (16 shorts each), SERIAL_NUMBER 96 (64 ints), SERIAL_INT16_NUMBER 352
# (64 shorts), then the bf16 sin/cos/arcsin tables and DIV_BFP16_LUT, ending at 992). Its streams
# read what those names say: 7 bf16 coefficients broadcast from offset 0 into sfu.taylor (the
# vendor's EXP_BF16_COEFF, 1/k!, target_1688 gen_lookup_table), 8 int16 channel indexes
# distributed from 352 where the BM1688 build of the same network reads its int32 sequence, and
# 8 int32 k from 96 where the BM1688 build broadcasts 32 of its sequence (topformer_seg_motion's
# resize indexes, issue 29). The other tables are not written (no stream read of them is known).
STATIC_TABLES_CV184X = (
    ("static_exp_bf16_coeff_table", 0, 8, "bf16 1 / k!: read by tsbc.s_bc before every sfu.taylor"),
    ("static_seq_table", 96, 64, "int32 k: the sequence 0, 1, 2, ... (SERIAL_NUMBER)"),
    ("static_seq16_table", 352, 64, "int16 k: the sequence 0, 1, 2, ... (SERIAL_INT16_NUMBER)"),
)
# BM1690 (SG2260) static memory: the TPU1686 kernel's 128-byte aligned layout for 64-lane chips
# (atomic_def.h "Align with 128byte": EXP_TAYLOR 0, LOG_TAYLOR 128, SERIAL_NUMBER 512, ...,
# EXP_FP16_TAYLOR 1408; the firmware's load_lookup_tables writes EXP_FP16_COEFF there, 16 fp16
# 1 / k!). The shared f16/f32 yolov5s streams' tsbc.s_bc read 7 entries at 1408 (0x580).
STATIC_TABLES_1690 = (
    ("static_exp_coeff_table", 0, 32, "fp32 1 / k!: the taylor coefficients of e^x"),
    ("static_log_coeff_table", 128, 64, "fp32 0, then (-1)^(k+1) / k: the taylor coefficients of ln(1 + x)"),
    ("static_seq_table", 512, 64, "int32 k: the sequence 0, 1, 2, ..."),
    ("static_exp_fp16_coeff_table", 1408, 16, "fp16 1 / k!: the fp16 taylor coefficients of e^x"),
)
STATIC_TABLES = {"bm1688": STATIC_TABLES_1688, "cv184x": STATIC_TABLES_CV184X, "bm1690": STATIC_TABLES_1690}
TAYLOR_LEN_1684 = 64


# ----------------------------------------------------------------------------- helpers

def ident(name: str) -> str:
    out = ILLEGAL.sub("_", name)
    if keyword.iskeyword(out):
        out += "_"
    assert out.isidentifier(), name
    return out


def enum_key(text: str) -> str:
    """Identifier key for an enum value description: the text before ' (' or ' /'."""
    head = re.split(r" \(| /|（", text.strip())[0].strip()
    return ident(head)


def hexs(v: int) -> str:
    return f"0x{v:X}"


def num(v: int) -> str:
    return hexs(v) if v >= 1 << 20 and v != 0 else str(v)


class Field:
    def __init__(self, name, bit, width, *, default=None, reserved=False, enum=None, note=None, vendor=None):
        self.name, self.bit, self.width = name, bit, width
        self.default, self.reserved, self.enum, self.note = default, reserved, enum, note
        self.vendor = vendor

    def row(self, namew: int) -> str:
        parts = [f'name = {json.dumps(self.name) + ",":<{namew + 3}}', f"bit = {self.bit},".ljust(11),
                 f"width = {self.width}"]
        if self.default is not None:
            parts[-1] += ","
            parts.append(f"default = {num(self.default)}")
        if self.reserved:
            parts[-1] += ","
            parts.append("reserved = true")
        if self.enum:
            parts[-1] += ","
            parts.append(f'enum = "{self.enum}"')
        if self.vendor:
            parts[-1] += ","
            parts.append(f'vendor = "{self.vendor}"')
        return "{ " + " ".join(parts) + " }"


def build_fields(raw, nbits, *, head_names=(), defaults=None, enums=None, notes=None):
    """JSON field list -> Field list: identifiers, dedup, reserved flags, gap rows.

    notes collects one comment line per rename/gap so the toml records each choice.
    """
    defaults = defaults or {}
    enums = enums or {}
    out = []
    seen = set()
    for f in raw:
        name, bit, width = f["name"], f["offset"], f["width"]
        new = name
        # a head field whose sheet name carries a parenthetical (sDMA_masked_select's
        # "cmd_special_function(mask_mem)") keeps the head name the selector reads
        base = re.split(r"[(（]", name)[0]
        if name != base and base in head_names:
            new = base
        else:
            new = ident(name)
        if new in seen:
            new = f"{new}_{bit}"
        assert new not in seen, (name, bit)
        if new != name:
            notes.append(f'"{name}" at bit {bit} -> {new}')
        seen.add(new)
        reserved = bool(RESERVED_NAME.match(name)) or bool(f.get("reserved"))
        out.append(Field(new, bit, width, default=defaults.get(new), reserved=reserved,
                         enum=enums.get(new)))
    # gaps -> rsvd_<bit>
    out.sort(key=lambda f: f.bit)
    full = []
    pos = 0
    for f in out:
        assert f.bit >= pos, f"overlap at {f.name}"
        if f.bit > pos:
            full.append(Field(f"rsvd_{pos}", pos, f.bit - pos, reserved=True))
            notes.append(f"bits {pos}..{f.bit - 1} not in the sheet -> rsvd_{pos} (reserved)")
        full.append(f)
        pos = f.bit + f.width
    if pos < nbits:
        full.append(Field(f"rsvd_{pos}", pos, nbits - pos, reserved=True))
        notes.append(f"bits {pos}..{nbits - 1} not in the sheet -> rsvd_{pos} (reserved)")
    assert pos <= nbits
    for f in full:
        assert f.width <= 64 or f.reserved, f.name
        if f.default is not None:
            assert 0 <= f.default < 1 << f.width, f.name
    return full


def fields_block(key: str, fields, indent="") -> list[str]:
    w = max(len(json.dumps(f.name)) for f in fields)
    lines = [f"{indent}{key} = ["]
    lines += [f"{indent}  {f.row(w)}," for f in fields]
    lines.append(f"{indent}]")
    return lines


def inline(d: dict) -> str:
    return "{ " + ", ".join(f"{k} = {v if isinstance(v, str) and v.startswith('[') else json.dumps(v)}"
                            for k, v in d.items()) + " }"


def keys_line(keys) -> str:
    if len(keys) <= 1:
        return "keys = [" + ", ".join(inline(k) for k in keys) + "]"
    return "keys = [\n" + "".join(f"  {inline(k)},\n" for k in keys) + "]"


def instr_block(instrs, indent="", vendor=None) -> list[str]:
    """instructions = [...]; vendor: {kind: the vendor's spelling} of the kinds a family renamed."""
    if not instrs:
        return [f"{indent}instructions = []"]
    vendor = vendor or {}
    w = max(len(json.dumps(n)) for n, _ in instrs)
    lines = [f"{indent}instructions = ["]
    for n, m in instrs:
        tail = f', vendor = {json.dumps(vendor[n])}' if n in vendor else ""
        lines.append(f"{indent}  {{ name = {json.dumps(n) + ',':<{w + 1}} match = {inline(m)}{tail} }},")
    lines.append(f"{indent}]")
    return lines


def enums_block(enums: dict, notes: dict | None = None) -> list[str]:
    lines = []
    for ename, table in enums.items():
        lines.append("")
        if notes and ename in notes:
            lines.append(f"# {notes[ename]}")
        lines.append(f"[enums.{ename}]")
        for k, v in table.items():
            lines.append(f"{k} = {v}")
    return lines


def code_enum(codes: dict, *, skip=()) -> dict:
    """{"0": "desc"} -> {identifier: 0}; keys from the text before any comment."""
    out = {}
    for code, text in sorted(codes.items(), key=lambda kv: int(kv[0])):
        if int(code) in skip:
            continue
        k = enum_key(text)
        assert k not in out, (k, codes)
        out[k] = int(code)
    return out


# res0_str / opd*_str layout codes (isa-facts "short_str layout codes"): bm1684x's names; BM1688 and
# later list 0..3 and the SG classes' 4 (T4)
LAYOUT_ENUM = {"aligned": 0, "compact": 1, "offset": 2, "free": 3, "T4": 4, "T5": 5}
NEWER_LAYOUTS = 4


def composed_line(byname) -> list[str]:
    """The `composed` row of a class: every value the hardware splits into a low and a high
    field (`X_l32` + `X_h8` / `X_h13` / `X_h32`: 40- and 45-bit DMA addresses, 64-bit lane masks),
    low part first."""
    parts = {}
    for name in byname:
        if name.endswith("_l32"):
            stem = name[:-len("_l32")]
            high = next((stem + h for h in ("_h8", "_h13", "_h32") if stem + h in byname), None)
            if high is not None:
                parts[stem[:-len("_start_addr")] + "_addr" if stem.endswith("_start_addr") else stem] = [name, high]
        elif name.endswith("_h32") and name[:-len("_h32")] + "_l8" in byname:
            # DMA_matrix names its address halves the other way round: tpu-mlir's opparam reads
            # them as dma_addr(X_start_addr_l8, X_start_addr_h32) = l8 * 2**32 + h32
            stem = name[:-len("_h32")]
            parts[stem[:-len("_start_addr")] + "_addr"] = [name, stem + "_l8"]
    if not parts:
        return []
    return ["composed = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in parts.items()) + " }"]


def write(path: Path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip("\n") + "\n")


CMD_HDR = """\
# The cmd_hdr_t frame before every command in a bmk command buffer (8 bytes, same bit
# convention, rows copied from bm1880). The vendor toolchains have no cmd_hdr_t for this
# chip: the frame and its magic are bmk's own choice, a byte the vendor never writes (its
# cmd_hdr_t magics are 0xA5 BM1880v2/CV183X, 0xA6 CV182X, 0xA7 CV181X, 0xA8 CV180X:
# cvikernel bm_kernel.h) and never the first byte of UTF-8 text (0x80..0xBF): the low byte
# of the vendor's chip id. legacy_magics: bmk's magic for this chip before issue 18 (a vendor
# magic), still read when the chip is named (--chip), never picked by content.
[cmd_hdr]
name = "cmd_hdr"
bytes = 8
magic = {magic}
legacy_magics = [{legacy}]
fields = [
  {{ name = "magic",      bit = 0,  width = 8 }},
  {{ name = "len",        bit = 8,  width = 8 }},
  {{ name = "engine_id",  bit = 16, width = 4 }},
  {{ name = "deprecated", bit = 20, width = 4, reserved = true }},
  {{ name = "flags",      bit = 24, width = 8 }},
  {{ name = "mask",       bit = 32, width = 32 }},
]"""


def h(v: str) -> int:
    return int(v.split()[0], 16)


# ----------------------------------------------------------------------------- BM1684

BM1684_EU = {0: "mul", 1: "mac", 2: "add", 3: "sub", 4: "max", 5: "min", 6: "shift", 7: "and",
             8: "or", 9: "xor", 10: "select_gt", 11: "select_eq", 12: "divide", 13: "taylor",
             14: "fp32_to_int", 15: "int_normalize", 16: "fp32_normalize", 17: "rsqrt",
             18: "add_tree", 19: "copy", 20: "square_sum", 21: "square_diff", 22: "cmp",
             23: "select", 24: "cmp_select"}

# tsk_typ -> (kind prefix, "eu" = one kind per eu of the class | "one" = one kind for the class)
BM1684_TIU_KINDS = {
    0: ("conv", "one"), 1: ("pord", "pord"), 2: ("mm", "eu"), 3: ("arith", "eu"),
    4: ("mm2", "one"), 5: ("cc", "eu"), 6: ("lut", "one"), 7: ("md_sum", "one"),
    8: ("md_scalar", "eu"), 9: ("md_sfu", "eu"), 10: ("md_linear", "eu"),
    11: ("lmem_arrangement", "one"), 12: ("decompress", "one"), 13: ("md_cmp", "eu"),
    14: ("vc", "eu"),
}


def bm1684_defaults(reset: dict, fields) -> dict:
    names = [f["name"] for f in fields]
    out = {}
    for k, v in reset.items():
        if k == "tsk_lane_num":
            pass
        elif k in names:
            out[k] = v if isinstance(v, int) else int(v, 0)
        elif k.startswith("res0_n/c/h/w"):
            for op in ("res0", "opd0", "opd1"):
                for d in "nchw":
                    out[f"{op}_{d}"] = v
        elif k.startswith("all *_str"):
            for n in names:
                if re.fullmatch(r"\w+_[nchw]_str", n):
                    out[n] = v
        else:
            raise SystemExit(f"unknown reset default {k!r}")
    if "tsk_lane_num" in reset:
        assert reset["tsk_lane_num"].startswith("all ones")
        w = next(f["width"] for f in fields if f["name"] == "tsk_lane_num")
        out["tsk_lane_num"] = (1 << w) - 1
    return out


def storage_word_bytes(storage):
    """The bytes of the word N-packed local storage interleaves batches in ("4N (4 batches
    interleaved per 32-bit word); int16 2N")."""
    m = re.search(r"per (\d+)-bit word", storage)
    if m is None:
        raise SystemExit(f"int8_storage names no word size: {storage!r}")
    return int(m.group(1)) // 8


def gen_bm1684(facts: dict, out: Path):
    p = facts["params"]
    eng = facts["engines"]
    ops = facts["opcodes"]

    # ---- tiu.toml: one shared layout (every class of the JSON has the same field list)
    tiu = eng["tiu"]
    classes = tiu["classes"]
    layouts = {json.dumps(c["fields"]) for c in classes.values()}
    assert len(layouts) == 1, "bm1684 TIU classes are expected to share one layout"
    raw = next(iter(classes.values()))["fields"]
    defaults = bm1684_defaults(tiu["reset_defaults_vendor"], raw)
    prec_fields = [f["name"] for f in raw if re.fullmatch(r"opt_(res0|opd\d)_prec", f["name"])]
    str_fields = [f["name"] for f in raw if re.fullmatch(r"short_(res0|opd\d)_str", f["name"])]
    enums_of = {"tsk_typ": "tsk_typ", "tsk_eu_typ": "eu_typ"}
    enums_of.update({n: "prec" for n in prec_fields})
    enums_of.update({n: "short_str" for n in str_fields})
    notes = []
    fields = build_fields(raw, tiu["command_bits"], defaults=defaults, enums=enums_of, notes=notes)
    assert not notes, notes

    instrs = []
    by_typ = {c["tsk_typ"]: (cn, c) for cn, c in classes.items()}
    for typ in sorted(by_typ):
        cn, c = by_typ[typ]
        prefix, how = BM1684_TIU_KINDS[typ]
        eus = sorted(int(e) for e in c["tsk_eu_typ"])
        if how == "eu":
            for e in eus:
                instrs.append((f"{prefix}.{BM1684_EU[e]}", {"tsk_typ": typ, "tsk_eu_typ": e}))
        elif how == "pord":
            instrs.append(("pord.depthwise", {"tsk_typ": typ, "tsk_eu_typ": 1, "opt_opd1_const": 0}))
            instrs.append(("pord.avgpooling", {"tsk_typ": typ, "tsk_eu_typ": 1, "opt_opd1_const": 1}))
            instrs.append(("pord.maxpooling", {"tsk_typ": typ, "tsk_eu_typ": 4}))
            instrs.append(("pord", {"tsk_typ": typ}))
        else:
            instrs.append((prefix, {"tsk_typ": typ}))

    tsk_enum = {name: int(code) for code, name in sorted(ops["tiu_tsk_typ"].items(), key=lambda kv: int(kv[0]))}
    eu_enum = {ident(n): int(code) for code, n in sorted(ops["eu_type_names"].items(), key=lambda kv: int(kv[0]))}
    prec_enum = code_enum(ops["prec_codes (opt_res0_prec/opt_opd*_prec)"])
    str_enum = {"aligned": 0, "compact": 1, "offset": 2, "free": 3}

    lines = [
        "# GENERATED by tools/specgen.py from tools/facts/bm1684.json -- edit the script, not this file.",
        "# BM1684 TIU (BDC) command: 1024 bits, one layout shared by every tsk_typ.",
        "# Sources: tpu-mlir target_1684/regdef.py + profile_helper/bm1684_defs.py (see bm1684.json).",
        "# bit = offset in the command read as one little-endian integer; default = the vendor's",
        "# reset value (reset_defaults_vendor: tsk_opd_num 2, fp32 precisions, lane mask all ones,",
        "# shapes and n/c/h/w strides 1, ...).",
        "# Instruction kinds: tpu-mlir's BM1684 op names; first match wins.",
        "",
        'name = "tiu"',
        f"bytes = {tiu['command_bytes']}",
        "",
    ]
    lines += fields_block("fields", fields)
    lines.append("")
    lines += instr_block(instrs)
    lines += enums_block(
        {"tsk_typ": tsk_enum, "eu_typ": eu_enum, "prec": prec_enum, "short_str": str_enum},
        {"eu_typ": "tsk_eu_typ codes (one table for every tsk_typ); Python keywords get a trailing "
                   "'_' (and_, or_)",
         "short_str": "short_*_str layout codes: plausible (tpu-mlir Layout enum): 0 EU-aligned "
                      "(128-byte channel stride), 1 compact, 2 offset/per-channel, 3 free stride",
         "prec": "opt_res0_prec / opt_opd*_prec"})
    write(out / "bm1684" / "tiu.toml", lines)

    # ---- gdma.toml
    dma = eng["dma"]
    (dcn, dcls), = dma["classes"].items()
    dreset = {k: (v if isinstance(v, int) else int(v, 0)) for k, v in dma["reset_defaults_vendor"].items()}
    denums = {"direction": "direction", "special_func": "special_func", "src_data_format": "data_format",
              "dst_data_format": "data_format", "sys_mem_type": "sys_mem_type"}
    notes = []
    dfields = build_fields(dcls["fields"], dma["command_bits"], defaults=dreset, enums=denums, notes=notes)
    dinstrs = [(f"dma.{n}", {"special_func": code}) for code, n in
               [(0, "tensor"), (1, "trans"), (2, "lrn_shift"), (3, "format"), (4, "constant"),
                (5, "cw_trans"), (6, "winograd"), (7, "filter")]]
    for code, text in ops["gdma_special_func"].items():
        if int(code) < 8:
            assert text.split()[0] == dinstrs[int(code)][0].split(".", 1)[1] or int(code) == 0, text
    lines = [
        "# GENERATED by tools/specgen.py from tools/facts/bm1684.json -- edit the script, not this file.",
        f"# BM1684 GDMA descriptor (class {dcn}): a 1024-bit slot, bits 0..{dma['meaningful_bits'] - 1} defined.",
        "# src_hshift follows the vendor header and tpu-mlir's profiler: bit 608, 8 bits, with",
        "# 592..607 reserved (tpu-mlir's target_1684/regdef.py has it 24 bits wide at 592; see the",
        "# JSON 'quirk'; the golden vectors carry 0 in all of 592..615, so both read the same there).",
    ]
    lines += [f"# {n}" for n in notes]
    lines += [
        "",
        'name = "gdma"',
        f"bytes = {dma['command_bytes']}",
        "",
    ]
    lines += fields_block("fields", dfields)
    lines.append("")
    lines += instr_block(dinstrs)
    lines.append('composed = { src_addr = ["src_start_addr_l32", "src_start_addr_h8"], '
                 'dst_addr = ["dst_start_addr_l32", "dst_start_addr_h8"], '
                 'localmem_mask = ["localmem_mask_l32", "localmem_mask_h32"] }')
    lines += enums_block({
        "direction": {"S2L": 0, "L2S": 1, "S2S": 2, "L2L": 3},
        "special_func": code_enum(ops["gdma_special_func"], skip=(8,)),
        "data_format": code_enum(ops["gdma_data_format"]),
        "sys_mem_type": {"tensor": 0, "matrix": 1},
    }, {"special_func": "special_func codes (code 8 filter_res_counter exists only in the profiler enum; the field is 3 bits)",
        "sys_mem_type": "plausible: 0 neuron (tensor), 1 matrix",
        "direction": "S = system (global) memory, L = local memory"})
    write(out / "bm1684" / "gdma.toml", lines)

    # ---- chip.toml
    mm = p["debugger_memmap"]
    gl = [int(x, 16) for x in mm["G_global"]]
    l2 = [int(x, 16) for x in mm["L_l2sram"]]
    lines = [
        "# GENERATED by tools/specgen.py from tools/facts/bm1684.json and bm1684-memory.md.",
        "# BM1684 (OKKernel API; the vendor compiler tpu-mlir calls the TIU 'BDC').",
        "",
        'name = "bm1684"',
        "version = 0x1684              # the chip id the vendor runtime uses for BM1684 (BM1684X is 0x1686)",
        "seed_chip_version = 0x1684    # no seed names a chip_version for BM1684",
        "",
        "[params]",
        f"npu_num = {p['npu_num']}",
        f"eu_num = {p['eu_num_fp32']}                   # fp32 EUs per NPU: aligned channel strides round H*W up to this (32-bit elements)",
        f"eu_num_fp32 = {p['eu_num_fp32']}",
        f"eu_bytes = {p['eu_bytes']}",
        f"lmem_size = {p['local_mem_bytes_per_npu']}            # bytes per NPU lane",
        f"lmem_banks = {p['local_mem_banks']}",
        f"lmem_bank_size = {p['local_mem_bank_bytes']}",
        f"lmem_total_size = {p['local_mem_total_bytes']}",
        f"channel_align_bytes = {p['channel_align_bytes']}",
        f"gmem_alignment_bytes = {p['gmem_alignment_bytes']}",
        f"l2_sram_user_start = {hexs(h(p['l2_sram_user_start_addr']))}   # 0x10000000 + 0x22000 dynamic-IR area + 0x80000",
        f"l2_sram_lookup_tables_offset = {hexs(h(p['l2_sram_lookup_tables_offset']))}   # SFU / int2float / taylor tables, from the L2 SRAM base",
        "# The lookup tables the TIU reads from L2 SRAM (lut opd1 / md_sfu taylor opd1), as the L2 SRAM",
        "# offsets the commands carry in opd1_addr (the vendor's memmap.h layout: 256-entry fp32 SFU and",
        "# int/uint-to-float tables, 64-entry taylor tables; the yolov5s and retinaface streams read 0x300000,",
        "# 0x300400, 0x300C00 and 0x301300). The simulator writes these tables itself (bmk/sim/bm1684/tables.py).",
        *(f"{name} = {hexs(off)}   # {what}" for name, off, what in L2_TABLES_1684),
        f"lookup_table_index_bits = {LUT_INDEX_BITS_1684}   # lut opd1_h in the vendor stream: 256-entry tables",
        f"taylor_table_len = {TAYLOR_LEN_1684}           # SFU_TAILOR_L_TABLE_SIZE: num_series in [1, 64]",
        f"bdc_clock_mhz = {p['bdc_clock_mhz_profile']}           # tpu-mlir profiler clocks",
        f"gdma_clock_mhz = {p['gdma_clock_mhz_profile']}",
        f"storage_word_bytes = {storage_word_bytes(p['int8_storage'])}        # int8 local tensors are stored 4N (4 batches per word), int16 2N: their strides count words",
        "",
        "# Address spaces the commands address (base, size in bytes).",
        "[memory.local]                # debugger window 0x08000000..0x10000000; 64 lanes x 512 KiB are backed",
        f"base = {hexs(h(p['local_mem_base_addr']))}",
        f"size = {hexs(p['local_mem_total_bytes'])}",
        f"lane_bytes = {p['local_mem_bytes_per_npu']}",
        "",
        "# The debugger memmap window ends at the lookup tables (offset 0x300000); the SRAM itself is",
        "# L2_SRAM_SIZE = 4 MiB (vendor bm_config.h for BM1684), so the space covers the tables too.",
        "# TIU table operands (lut / md_sfu taylor opd1_addr) are offsets in this space.",
        "[memory.l2sram]",
        f"base = {hexs(l2[0])}",
        f"size = {hexs(max(l2[1] - l2[0], L2_SRAM_BYTES_1684))}",
        "",
        "[memory.dtcm]",
        f"base = {hexs(h(p['dtcm_base_addr']))}",
        f"size = {hexs(p['dtcm_bytes'])}",
        "",
        "[memory.global]               # debugger memmap 0x100000000..0x300000000",
        f"base = {hexs(gl[0])}",
        f"size = {hexs(gl[1] - gl[0])}",
        "",
        CMD_HDR.format(magic=CHIPS["bm1684"]["magic"], legacy=CHIPS["bm1684"]["legacy_magic"]),
        "",
        "# Engines: id in cmd_hdr_t (the vendor's engine numbers: eng0 = BD/TIU, eng1 = GDMA),",
        "# descriptor format, and the fields that carry ordering.",
        "# enable: constant on every command of the golden streams (tools/check_vectors.py).",
        "# inherit_wait: in the golden streams the wait id never decreases; a command with no new",
        "# dependency repeats the previous command's wait id.",
        "# stream: every command sits in a 128-byte slot; tpu-mlir stops at <= 128 trailing zero bytes.",
        "[engines.tiu]",
        "id = 0",
        'format = "tiu"',
        'aliases = ["bdc"]',
        'own_id = "cmd_id_tpu"',
        'wait_for = { gdma = "cmd_id_gdma" }',
        "enable = { cmd_en = 1, cmd_id_en = 1 }",
        "inherit_wait = true",
        "stream = { slot = 128, zero_tail = 128 }",
        "",
        *DISPLAY_1684_TIU,
        "",
        "[engines.gdma]",
        "id = 1",
        'format = "gdma"',
        'aliases = ["dma"]',
        'own_id = "cmd_id"',
        'wait_for = { tiu = "eng0_sync_id" }',
        "enable = { pio_gdma_enable = 1, barrier_enable = 1 }",
        "inherit_wait = true",
        "stream = { slot = 128, zero_tail = 128 }",
        "",
        *DISPLAY_GDMA.format(extra="", shown='shown = ["direction"]').splitlines(),
    ]
    write(out / "bm1684" / "chip.toml", lines)


# ----------------------------------------------------------------------------- BM1684X

# Display (issue 22.4): how the text tools show fields; no bit depends on it (bmk/text/views.py).
# Address fields: the TIU operand addresses (tpu-mlir regdef: res0/res1/opd0..opd3_addr); BM1684 TIU
# and every GDMA hold device addresses (the debugger's memmap: local memory from 0x8000000, the
# golden streams' values), BM1684X TIU local addresses below the local size (tpu-mlir get_value).
# Constants: opdN_addr holds the operand when opt_opdN_const / opdN_const is set, in the
# operand's precision (seed 003 "C" arguments; isa-facts bm1684x-lowering.md).
_OPS = ("res0", "res1", "opd0", "opd1", "opd2", "opd3")
DISPLAY_1684_TIU = [
    "# display: how the text tools show fields (specs/README.md \"Display\"; no bit depends on it).",
    "[engines.tiu.display]",
    'addresses = "device"',
    "address_fields = [" + ", ".join(f'"{o}_addr"' for o in _OPS) + "]",
    "constants = { " + ", ".join(f'opd{k} = ["opd{k}_addr", "opt_opd{k}_const", "opt_opd{k}_prec"]'
                                 for k in range(3)) + ' }',
]
DISPLAY_GDMA = """# display: 40-bit addresses joined, read as device addresses (local memory shown as local_addr_t).
[engines.gdma.display]
addresses = "device"
joined = ["src_addr", "dst_addr"{extra}, "localmem_mask"]
{shown}"""


def display_1684x_tiu(facts):
    """BM1684X TIU display table; the rounding modes from the facts' rounding_mode_t, in
    opd2_n_str on the kinds the facts name (AR but div, whose opd2_n_str counts iterations:
    bmk/sim/bm1684x/ar.py; PorD; RQ&DQ; VC mulDHR)."""
    key = next(k for k in facts["opcodes"] if k.startswith("rounding_mode_t"))
    modes = {v.split()[0].removeprefix("RM_").lower(): int(c) for c, v in facts["opcodes"][key].items()}
    kinds = ([k for k in X_TIU_KINDS["AR"].values() if k != "arith.div"] + list(X_TIU_KINDS["PorD"].values())
             + list(X_TIU_KINDS["RQ&DQ"].values()) + ["vc.mulDHR"])
    return [
        "# display: how the text tools show fields (specs/README.md \"Display\"; no bit depends on it).",
        "[engines.tiu.display]",
        'addresses = "local"',
        "address_fields = [" + ", ".join(f'"{o}_addr"' for o in _OPS) + "]",
        "constants = { " + ", ".join(f'opd{k} = ["opd{k}_addr", "opd{k}_const", "opd{k}_prec"]' for k in range(3))
        + ', opd3 = ["opd3_addr", "opd3_const"] }',
        "rounding = { field = \"opd2_n_str\", kinds = [" + ", ".join(f'"{k}"' for k in kinds) + "], modes = { "
        + ", ".join(f"{n} = {c}" for n, c in modes.items()) + " } }",
    ]


AR_KINDS = ["mul", "not", "add", "sub", "max", "min", "logicShift", "and", "or", "xor",
            "selectGreat", "selectEqual", "div", "selectLess", "cast", "adds", "subs", "clamp",
            "mac", "copy", "muls", "ashift", "cshift", "mulDHR", "euIdxGen", "npuIdxGen", "abs",
            "fsubabs", "copyMb", "getFirstOne", "getFirstZero"]

X_TIU_KINDS = {
    "CONV": {0: "conv.normal", 1: "conv.wrq", 2: "conv.wrqrelu"},
    "PorD": {0: "pord.depthwise", 1: "pord.avgpooling", 2: "pord.depthwiserelu", 4: "pord.maxpooling",
             5: "pord.roiDepthwise", 6: "pord.roiavgpooling", 7: "pord.roimaxpooling"},
    "MM": {1: "mm.normal", 2: "mm.wrq", 3: "mm.wrqrelu"},
    "MM2": {4: "mm2.nn", 5: "mm2.nt", 6: "mm2.tt"},
    "AR": {i: f"arith.{n}" for i, n in enumerate(AR_KINDS)},
    "RQ&DQ": {0: "quant.rq0", 1: "quant.rq1", 2: "quant.rq2", 3: "quant.dq0", 4: "quant.dq1", 5: "quant.dq2"},
    "TRANS&BC": {0: "tsbc.cw_ts", 1: "tsbc.wc_ts", 2: "tsbc.l_copy", 3: "tsbc.l_bc", 4: "tsbc.s_bc",
                 5: "tsbc.s_distribute"},
    "SG": {i: f"sg.{n}" for i, n in enumerate(
        ["pl_gather_d1coor", "pl_gather_d2coor", "pl_gather_rec", "pl_scatter_d1coor", "pl_scatter_d2coor",
         "pe_s_gather_d1coor", "pe_s_scatter_d1coor", "pe_m_gather_d1coor", "pe_s_mask_select",
         "pe_s_nonzero", "pe_s_scatter_pp_d1coor", "pl_gather_perw", "pl_scatter_perw",
         "pe_s_gather_hzd", "pe_s_scatter_hzd", "pe_s_mask_selhzd", "pe_s_nonzero_hzd"])},
    "SGL": {17: "sgl.pe_s_gather_line", 18: "sgl.pe_s_scatter_line"},
    "LAR": {i: f"lar.{n}" for i, n in enumerate(AR_KINDS)},
    "SFU": {12: "sfu.taylor_4x", 13: "sfu.taylor", 15: "sfu.normalize", 17: "sfu.rsqrt"},
    "LIN": {1: "lin.mac", 20: "lin.square_sum", 21: "lin.square_diff"},
    "CMP": {22: "cmp.gt_and_sel", 23: "cmp.sel_gt", 24: "cmp.sel_eq", 25: "cmp.lt_and_sel", 26: "cmp.sel_lt"},
    "VC": {0: "vc.mul", 2: "vc.add", 3: "vc.sub", 4: "vc.max", 5: "vc.min", 7: "vc.and", 8: "vc.or",
           9: "vc.xor", 10: "vc.select_gt", 11: "vc.select_eq", 12: "vc.div", 13: "vc.select_lt",
           15: "vc.add_satu", 16: "vc.sub_satu", 20: "vc.mul_satu", 23: "vc.mulDHR"},
    "SYSID": {0: "sys.intr_barrier", 1: "sys.spb", 2: "sys.swr", 3: "sys.swr_from_lmem",
              4: "sys.swr_collect_from_lmem", 5: "sys.data_barrier", 30: "sys.nop", 31: "sys.end"},
    "SEG": {},
}

# class (alias) -> [(kind, cmd_special_function or None = the whole class)]
X_DMA_KINDS = {
    "DMA_tensor": [("dma.tensor", 0), ("dma.tensor.transpose", 1), ("dma.tensor.collect", 2),
                   ("dma.tensor.broadcast", 3), ("dma.tensor.distribute", 4),
                   ("dma.tensor.4bank_copy", 5), ("dma.tensor.4bank_broadcast", 6)],
    "DMA_matrix": [("dma.matrix", 0), ("dma.matrix.transpose", 1)],
    "DMA_masked_select": [("dma.masked_select", None)],
    "DMA_general": [("dma.general", 0), ("dma.general.broadcast", 1)],
    "DMA_cw_transpose": [("dma.cw_transpose", None)],
    "DMA_nonzero": [("dma.nonzero", None)],
    "DMA_sys": [("dma.sys", 0), ("dma.sys.nop", 1)],
    "DMA_gather": [("dma.gather", None)],
    "DMA_scatter": [("dma.scatter", None)],
}


def long_name(cls: str) -> str:
    """sRQ&sDQ -> RQ&DQ, sAR -> AR, sDMA_sys -> DMA_sys."""
    if cls.startswith("s") and cls[1:2].isupper():
        return "&".join(part[1:] if part.startswith("s") and part[1:2].isupper() else part
                        for part in cls[1:].split("&"))
    return cls


def gen_bm1684x(facts: dict, out: Path):
    p = facts["params"]
    eng = facts["engines"]
    ops = facts["opcodes"]

    # prec_codes (res0_prec/opd*_prec) of the JSON, with identifier names
    assert len(ops["prec_codes (res0_prec/opd*_prec)"]) == 8
    prec_enum = {"int8": 0, "fp16": 1, "fp32": 2, "int16": 3, "int32": 4, "bf16": 5, "int4": 6, "fp8": 7}
    layout_enum = LAYOUT_ENUM

    # ---------------- TIU
    tiu = eng["tiu"]
    head_raw = tiu["head"]
    head_names = [f["name"] for f in head_raw]
    tsk_enum = code_enum(ops["tiu_tsk_typ"])
    enums_of = {"tsk_typ": "tsk_typ"}
    classes = tiu["classes"]
    for cn, c in classes.items():
        for f in c["fields"]:
            if re.fullmatch(r"(res0|opd\d)_prec", f["name"]):
                enums_of[f["name"]] = "prec"
            if re.fullmatch(r"(res0|opd\d)_str", f["name"]):
                enums_of[f["name"]] = "layout"

    # keys: (cmd_short, tsk_typ) unless two classes share it, then explicit eu lists
    pair_count = {}
    for cn, c in classes.items():
        if c["tsk_typ"] is None:
            continue
        pair_count[(c["cmd_short"], c["tsk_typ"])] = pair_count.get((c["cmd_short"], c["tsk_typ"]), 0) + 1

    tiu_lines = [
        "# GENERATED by tools/specgen.py from tools/facts/bm1684x.json -- edit the script, not this file.",
        "# BM1684X TIU (BDC) commands: 30 classes (tpu-mlir target_1684x/regdef.py, from the vendor",
        "# sheets TIU Reg6.5). Variable length: the head picks the class, the class gives the length.",
        "# bit = offset in the command read as one little-endian integer. No reset defaults: the",
        "# facts give none for BM1684X.",
        "# Class keys: (cmd_short, tsk_typ); MM/MM2 and SG/SGL share a tsk_typ and are told apart",
        "# by explicit tsk_eu_typ lists; LAR and SYSID accept either cmd_short; SEG/sSEG have no",
        "# decoder entry (keys = []).",
        "# Head caveat: LAR has no cmd_short/cmd_id/cmd_id_dep/cmd_id_en (its bits 0..40 are",
        "# operands: opd0_w_str sits at bit 0) and SYSID has rsvd0 at bit 0; both carry tsk_typ and",
        "# tsk_eu_typ at the head bits, which is all the selector needs besides cmd_short.",
        "# Instruction kinds: tpu-mlir's opdef names; short classes use their long class's names.",
        "",
        'name = "tiu"',
        'selector = ["cmd_short", "tsk_typ", "tsk_eu_typ"]',
    ]
    hf = [Field(f["name"], f["offset"], f["width"], enum=enums_of.get(f["name"])) for f in head_raw]
    tiu_lines += fields_block("head", hf)
    tiu_lines += enums_block({"tsk_typ": tsk_enum, "prec": prec_enum, "layout": layout_enum},
                             {"tsk_typ": "tsk_typ codes; 2 = MM (eu 1-3) / MM2 (eu 4-6), 6 = SG (eu 0-16) / SGL (eu 17-18)",
                              "prec": "res0_prec / opd*_prec (and GDMA src_data_format): 7 fp8 only on later TPU1686 chips",
                              "layout": "res0_str / opd*_str: 0 64-byte EU-aligned, 1 compact, 2 offset, 3 free (n/c/h/w strides from *_str fields);\n"
                                        "# SG/SGL opd0_str also takes 4 (T4: one row plane per NPU, shared by its channels) and 5 (T5)\n"
                                        "# (tpu-mlir opparam sSG: pe_m_gather reads opd0_str 4 as T4, else T5)"})
    for cn in sorted(classes, key=lambda n: (long_name(n), n)):
        c = classes[cn]
        notes = []
        fields = build_fields(c["fields"], c["command_bits"], head_names=head_names, enums=enums_of, notes=notes)
        byname = {f.name: f for f in fields}
        missing = [hn for hn in head_names if hn not in byname]
        for hfld in head_raw:
            f = byname.get(hfld["name"])
            if f:
                assert (f.bit, f.width) == (hfld["offset"], hfld["width"]), (cn, f.name)
        lname = long_name(cn)
        kinds = X_TIU_KINDS[lname]
        eus = sorted(int(e) for e in c["tsk_eu_typ"] if e.isdigit())
        if c["tsk_typ"] is None:
            keys = []
        else:
            base = {} if c["cmd_short"] == "either" else {"cmd_short": c["cmd_short"]}
            base["tsk_typ"] = c["tsk_typ"]
            if pair_count.get((c["cmd_short"], c["tsk_typ"]), 0) > 1:
                keys = [dict(base, tsk_eu_typ=e) for e in eus]
            else:
                keys = [base]
        if lname not in ("LAR", "SEG"):
            assert set(kinds) <= set(eus), (cn, sorted(kinds), eus)
            unnamed = [e for e in eus if e not in kinds]
            if unnamed:  # SYSID eu 6: data_barrier in the profiler enum only, no opdef name
                notes.append(f"tsk_eu_typ {unnamed} in the sheet notes but without an opdef name: no kind")
        instrs = [(k, {"tsk_eu_typ": e}) for e, k in sorted(kinds.items())]
        tiu_lines += ["", "[[classes]]"]
        if missing:
            tiu_lines.append(f"# lacks head field(s) {', '.join(missing)} (see the head caveat above)")
        tiu_lines += [f"# {n}" for n in notes]
        tiu_lines += [f"name = {json.dumps(cn)}", f"bytes = {c['command_bits'] // 8}",
                      keys_line(keys)]
        tiu_lines += fields_block("fields", fields)
        tiu_lines += instr_block(instrs)
    write(out / "bm1684x" / "tiu.toml", tiu_lines)

    # ---------------- GDMA
    dma = eng["dma"]
    dhead_raw = [f for f in dma["head"] if not RESERVED_NAME.match(f["name"])]
    dep = {"name": "cmd_id_dep", "offset": 64, "width": 20}
    dhead_raw.append(dep)
    dhead_names = [f["name"] for f in dhead_raw]
    denums = {"cmd_type": "cmd_type", "src_data_format": "data_format"}
    dma_lines = [
        "# GENERATED by tools/specgen.py from tools/facts/bm1684x.json -- edit the script, not this file.",
        "# BM1684X GDMA descriptors: 13 classes (tpu-mlir target_1684x/regdef.py, from the vendor",
        "# sheets GDMA DES REG v7.7). Variable length; class key = (cmd_short, cmd_type).",
        "# Class names: the JSON 'alias' where the sheet name has odd characters",
        "# ('DMA_tensor（0x000）' -> DMA_tensor, 'sDMA_masked_select ' -> sDMA_masked_select).",
        "# Field names that are not identifiers get tpu-mlir's own rule (xlsx_to_py.py: each of",
        "# '（）& /()' -> '_'); a repeated name keeps its first occurrence and the later ones get",
        "# '_<bit>'; each rename is listed above its class. The head's reserved bits 29..31 are",
        "# named 'Reserved' in every class and are left out of the head.",
        "# No reset defaults: the facts give none for BM1684X.",
        "",
        'name = "gdma"',
        'selector = ["cmd_short", "cmd_type", "cmd_special_function"]',
    ]
    hf = [Field(f["name"], f["offset"], f["width"], enum=denums.get(f["name"])) for f in dhead_raw]
    dma_lines += fields_block("head", hf)
    dma_lines += enums_block({"cmd_type": code_enum(ops["dma_cmd_type"]),
                              "data_format": code_enum(ops["gdma_value_format (src_data_format)"])},
                             {"data_format": "src_data_format codes (the TIU prec codes)"})
    pairs = {}
    for cn, c in dma["classes"].items():
        pairs.setdefault((c["cmd_short"], c["cmd_type"]), []).append(cn)
    assert all(len(v) == 1 for v in pairs.values()), pairs
    for cn in sorted(dma["classes"], key=lambda n: (dma["classes"][n]["cmd_short"], dma["classes"][n]["cmd_type"])):
        c = dma["classes"][cn]
        name = c.get("alias", cn)
        notes = []
        fields = build_fields(c["fields"], c["command_bits"], head_names=dhead_names, enums=denums, notes=notes)
        byname = {f.name: f for f in fields}
        for hfld in dhead_raw:
            f = byname[hfld["name"]]
            assert (f.bit, f.width) == (hfld["offset"], hfld["width"]), (cn, f.name)
        kinds = X_DMA_KINDS[long_name(name)]
        instrs = [(k, {"cmd_special_function": sf} if sf is not None else {"cmd_type": c["cmd_type"]})
                  for k, sf in kinds]
        sfs = sorted(int(s) for s in c["cmd_special_function"])
        assert all(sf is None or sf in sfs for _, sf in kinds), (cn, sfs)
        keys = [{"cmd_short": c["cmd_short"], "cmd_type": c["cmd_type"]}]
        dma_lines += ["", "[[classes]]"]
        if name != cn:
            dma_lines.append(f"# sheet name {json.dumps(cn, ensure_ascii=False)}")
        dma_lines += [f"# {n}" for n in notes]
        if any(sf is None for _, sf in kinds):
            dma_lines.append("# one kind for the whole class: its match is the class's own cmd_type")
        dma_lines += [f"name = {json.dumps(name)}", f"bytes = {c['command_bits'] // 8}",
                      keys_line(keys)]
        dma_lines += fields_block("fields", fields)
        dma_lines += instr_block(instrs)
        dma_lines += composed_line(byname)
    write(out / "bm1684x" / "gdma.toml", dma_lines)

    # ---------------- chip.toml
    mm = p["debugger_memmap"]
    gl = [int(x, 16) for x in mm["G_global"]]
    l2 = [int(x, 16) for x in mm["L_l2sram"]]
    st = [int(x, 16) for x in mm["S_static"]]
    eu = p["eu_num"]
    lines = [
        "# GENERATED by tools/specgen.py from tools/facts/bm1684x.json and bm1684x-memory.md.",
        "# BM1684X (TPU-Kernel API).",
        "",
        'name = "bm1684x"',
        "version = 0x1686              # the vendor's id for BM1684X (its kernel tree is TPU1686; runtime chip id 0x1686)",
        "seed_chip_version = 0x1686    # no seed names a chip_version for BM1684X",
        "",
        "[params]",
        f"npu_num = {p['npu_num']}",
        f"eu_num = {eu['8bit']}                   # 8-bit elements per EU row (eu_bytes); per dtype: eu_num_<bits>bit",
        f"eu_num_4bit = {eu['4bit']}",
        f"eu_num_8bit = {eu['8bit']}",
        f"eu_num_16bit = {eu['16bit']}",
        f"eu_num_32bit = {eu['32bit']}",
        f"eu_bytes = {p['eu_bytes']}",
        f"ic_parallel_int8 = {p['ic_parallel_int8']}",
        f"lmem_size = {p['local_mem_bytes_per_npu']}            # bytes per NPU lane",
        f"lmem_banks = {p['local_mem_banks']}",
        f"lmem_bank_size = {p['local_mem_bank_bytes']}",
        f"lmem_total_size = {p['local_mem_total_bytes']}",
        f"channel_align_bytes = {p['channel_align_bytes']}",
        f"gmem_alignment_bytes = {p['gmem_alignment_bytes']}",
        f"l2_sram_usable_bytes = {p['l2_sram_usable_bytes']}      # of the 2 MiB window",
        "# Lookup tables in static memory before any command runs (offset in bytes from its base,",
        "# entries): tpu-mlir target_1684x/cmodel.py gen_lookup_table",
        *(line for name, off, n, what in STATIC_TABLES_1684X
          for line in (f"{name} = {off:<6}   # {what}", f"{name}_len = {n}")),
        "",
        "# Address spaces the commands address (base, size in bytes).",
        "[memory.local]",
        f"base = {hexs(h(p['local_mem_base_addr']))}",
        f"size = {hexs(p['local_mem_total_bytes'])}",
        f"lane_bytes = {p['local_mem_bytes_per_npu']}",
        "",
        "[memory.static]               # plausible: the debugger takes it from the BM1688 memmap header",
        f"base = {hexs(st[0])}",
        f"size = {hexs(st[1] - st[0])}",
        "",
        "[memory.l2sram]",
        f"base = {hexs(l2[0])}",
        f"size = {hexs(l2[1] - l2[0])}",
        "",
        "[memory.global]               # debugger memmap 0x100000000..0x300000000",
        f"base = {hexs(gl[0])}",
        f"size = {hexs(gl[1] - gl[0])}",
        "",
        CMD_HDR.format(magic=CHIPS["bm1684x"]["magic"], legacy=CHIPS["bm1684x"]["legacy_magic"]),
        "",
        "# Engines: id in cmd_hdr_t (bmk's choice: tiu 0, gdma 1, as for BM1684), descriptor format,",
        "# and the fields that carry ordering. Each engine's cmd_id is its own counter; cmd_id_dep",
        "# names the other engine's id it waits for.",
        "# enable: cmd_id_en = 1 on every command of the golden streams except the closing SYSID",
        "# end, which the vendor leaves at 0. LAR (128-bit) has no cmd_id_en, cmd_id or cmd_id_dep.",
        "# inherit_wait: in the golden streams cmd_id_dep never decreases and a command with no new",
        "# dependency repeats the previous one's; only the closing sys.end / dma.sys carry 0.",
        "# stream: commands back to back, closed by the end kind; the TIU stream is then",
        "# zero-padded to a multiple of 128 bytes (112 bytes in the golden stream); the GDMA stream",
        "# is not padded (every GDMA class is a multiple of 16 bytes, so pad_to = 16 adds nothing).",
        "# end_enable = false: the vendor's closing sys.end has cmd_id_en = 0 (dma.sys has 1).",
        "[engines.tiu]",
        "id = 0",
        'format = "tiu"',
        'aliases = ["bdc"]',
        'own_id = "cmd_id"',
        'wait_for = { gdma = "cmd_id_dep" }',
        "enable = { cmd_id_en = 1 }",
        "inherit_wait = true",
        'stream = { end = "sys.end", end_enable = false, pad_to = 128, zero_tail = 128 }',
        "# inert: fields that never change what a command computes: the power step, the host interrupt",
        "# when it ends, and SYSID's ids of engines 1..3 (they order commands only)",
        'inert = ["pwr_step", "intr_en", "cmd_id_eng1", "cmd_id_eng2", "cmd_id_eng3"]',
        "",
        *display_1684x_tiu(facts),
        "",
        "[engines.gdma]",
        "id = 1",
        'format = "gdma"',
        'aliases = ["dma"]',
        'own_id = "cmd_id"',
        'wait_for = { tiu = "cmd_id_dep" }',
        "enable = { cmd_id_en = 1 }",
        "inherit_wait = true",
        'stream = { end = "dma.sys", pad_to = 16, zero_tail = 128 }',
        'inert = ["intr_en"]                  # the host interrupt when the descriptor ends',
        "",
        *DISPLAY_GDMA.format(extra=', "mask_addr", "index_addr"',
                             shown='direction = { src = "src_addr", dst = "dst_addr", '
                                   'spaces = { global = "S", local = "L" } }').splitlines(),
    ]
    write(out / "bm1684x" / "chip.toml", lines)


# ------------------------------------------------- BM1688, BM1690, CV184X (decode-only, positional ids)

# Per chip: what the facts give in prose only (newer-chips.md 1; <chip>.json "sync"), as data.
# messages: (kind, field, (id bit, width), (count bit, width)) per engine, from
#   sync.multi_core_messages ("imm: msg_id = bits 0..6, count = bits 16..18", "constant_value: ...").
# wait_mask: the engines' dependency_mask ("only the low 20 bits count").
# version: bmk's label for the chip (the vendor's chip id where one is known).
# magic: bmk's own cmd_hdr_t magic (the vendor has no cmd_hdr_t for these chips): never a vendor
#   magic (0xA5..0xA8) nor a byte that starts UTF-8 text; the low byte of the chip's number.
# Per chip: what the facts give in prose only, as data: tools/facts/chips.json (magic, version,
# title, cores, messages), read by generate(). messages: (kind, field, (id bit, width), (count bit,
# width)) per engine; wait_mask: the engines' dependency_mask ("only the low 20 bits count").
CHIPS: dict = {}
NEWER_ENGINE_IDS = {"tiu": 0, "gdma": 1, "sdma": 2, "cdma": 3, "hau": 4}     # bmk's cmd_hdr_t engine ids
# CDMA classes whose selector bits carry other data (bm1690.json notes): one kind for the class
NEWER_CLASS_KINDS = {"CDMA_tcp_send": "cdma.tcp_send", "CDMA_tcp_receive": "cdma.tcp_receive"}


class FamilyError(ValueError):
    """A row of tools/facts/families.json that specgen refuses (it names no field or kind, or collides)."""


class Renames:
    """A chip's rows of tools/facts/families.json: one name per register across a chip family.

    fields / kinds: {engine: {vendor spelling: family name}}. A field row renames that field in
    every class of the engine that has it (the spec keeps the vendor's spelling as `vendor`, what
    listings print); a kind row renames that kind in every class. `check` refuses a row that
    named no field (kind) of the chip, and `field` / `kind` refuse a family name that collides
    with another field (kind) of the class or a head field."""

    def __init__(self, chip: str, table: dict | None, reference: str = ""):
        table = table or {}
        self.chip = chip
        self.reference = reference
        self.fields = {e: dict(m) for e, m in table.get("fields", {}).items()}
        self.kinds = {e: dict(m) for e, m in table.get("kinds", {}).items()}
        self.used = set()

    def apply_fields(self, engine: str, cls: str, fields, head_names=()):
        rows = self.fields.get(engine, {})
        names = {f.name for f in fields}
        for f in fields:
            new = rows.get(f.name)
            if new is None:
                continue
            if f.name in head_names:
                raise FamilyError(f"families.json {self.chip} {engine}: {f.name!r} is a head field (the selector "
                                  f"reads it): not renamed")
            if new in names:
                raise FamilyError(f"families.json {self.chip} {engine} class {cls}: renaming {f.name!r} to {new!r} "
                                  f"collides with its field {new!r}")
            self.used.add(("field", engine, f.name))
            names.add(new)
            f.vendor, f.name = f.name, new
        return fields

    def kind(self, engine: str, name: str) -> str:
        new = self.kinds.get(engine, {}).get(name)
        if new is None:
            return name
        self.used.add(("kind", engine, name))
        return new

    def field(self, engine: str, name: str) -> str:
        """A field reference (chip.toml) under its family name."""
        return self.fields.get(engine, {}).get(name, name)

    def apply_kinds(self, engine: str, cls: str, instrs, all_kinds):
        """[(family kind, match)], {family kind: vendor spelling}; all_kinds: every vendor kind of the engine."""
        out, vendor = [], {}
        for k, m in instrs:
            new = self.kind(engine, k)
            if new != k:
                if new in all_kinds or new in vendor:
                    raise FamilyError(f"families.json {self.chip} {engine} class {cls}: renaming kind {k!r} to "
                                      f"{new!r} collides with the kind {new!r}")
                vendor[new] = k
            out.append((new, m))
        return out, vendor

    def check(self):
        for what, table in (("field", self.fields), ("kind", self.kinds)):
            for engine, rows in table.items():
                for old in rows:
                    if (what, engine, old) not in self.used:
                        raise FamilyError(f"families.json {self.chip} {engine}: the {what} row {old!r} names no "
                                          f"{what} of {self.chip}'s {engine}")


FAMILIES: dict = {}     # tools/facts/families.json, read by generate()


def renames_of(chip: str) -> Renames:
    """The family rename rows of `chip` (none: no renames)."""
    for fam in FAMILIES.get("families", {}).values():
        if chip in fam.get("chips", {}):
            return Renames(chip, fam["chips"][chip], fam["reference"])
    return Renames(chip, None)


def _class_name(cn: str, c: dict) -> str:
    return c.get("alias", cn.strip())


def _newer_engine(facts_engine: dict, engine: str, sub: str, enums_of: dict, fam: Renames):
    """One engine file (tiu, gdma or cdma) of a newer chip: (lines, {class name: kinds}); fam:
    the family renames (fields and kinds under bm1684x's names, the vendor's kept as `vendor`)."""
    head_raw = facts_engine["head"]
    short = facts_engine.get("short_field")
    opcode, subop = facts_engine["opcode_field"], facts_engine["subopcode_field"]
    selector = [n for n in (short, opcode, subop) if n]
    head = [f for f in head_raw if f["name"] in selector]
    alts = facts_engine.get("alternate_heads", [])
    alt_of = {cls: "short_" + ident(a["applies_to"][0]).lower() for a in alts for cls in a["applies_to"]}
    classes = facts_engine["classes"]
    pair_count = {}
    for c in classes.values():
        if c.get(opcode) is not None:
            key = (c.get("cmd_short"), c[opcode])
            pair_count[key] = pair_count.get(key, 0) + 1
    lines = [f'name = "{engine}"', f"selector = {json.dumps(selector)}"]
    lines += fields_block("head", [Field(f["name"], f["offset"], f["width"], enum=enums_of.get(f["name"]))
                                   for f in head])
    for a in alts:
        name = alt_of[a["applies_to"][0]]
        lines += ["", f"# {a['rule']}", "[[alternates]]", f'name = "{name}"',
                  f"selector = {json.dumps([f['name'] for f in a['fields']])}"]
        lines += fields_block("head", [Field(f["name"], f["offset"], f["width"], enum=enums_of.get(f["name"]))
                                       for f in a["fields"]])
    kinds_of = {}
    all_kinds = {v for c in classes.values() for k, v in (c.get(sub) or {}).items() if k.isdigit()}
    for cn in sorted(classes, key=lambda n: (long_name(_class_name(n, classes[n])), _class_name(n, classes[n]))):
        c = classes[cn]
        name = _class_name(cn, c)
        notes = []
        fields = build_fields(c["fields"], c["command_bits"], head_names=selector, enums=enums_of, notes=notes)
        have = {f.name for f in fields}
        chead = [f for a in alts if cn in a["applies_to"] for f in a["fields"]] or head
        for hf in chead:
            f = next((f for f in fields if f.name == hf["name"]), None)
            assert f is None or (f.bit, f.width) == (hf["offset"], hf["width"]), (cn, hf["name"])
        codes = {int(k): v for k, v in (c.get(sub) or {}).items() if k.isdigit()}
        if c.get(opcode) is None:
            keys = []
        else:
            base = {}
            if short and c.get("cmd_short") in (0, 1) and short in have and cn not in alt_of:
                base[short] = c["cmd_short"]
            base[opcode] = c[opcode]
            if pair_count[(c.get("cmd_short"), c[opcode])] > 1:
                keys = [dict(base, **{subop: e}) for e in sorted(codes)]
            else:
                keys = [base]
        if name in NEWER_CLASS_KINDS:
            instrs = [(NEWER_CLASS_KINDS[name], {opcode: c[opcode]})]
            notes.append(f"{subop} is not in this class (its bits carry other data): one kind, matched on {opcode}")
        elif subop in have:
            instrs = [(kind, {subop: e}) for e, kind in sorted(codes.items())]
        else:
            instrs = []
        if not instrs and c.get(opcode) is None:
            notes.append("the facts give no selector values: never picked by decoding (keys = [])")
        fam.apply_fields(engine, name, fields, head_names=selector + [f["name"] for a in alts for f in a["fields"]])
        instrs, vendor_kinds = fam.apply_kinds(engine, name, instrs, all_kinds)
        kinds_of[name] = [k for k, _ in instrs]
        lines += ["", "[[classes]]"]
        if name != cn:
            lines.append(f"# sheet name {json.dumps(cn, ensure_ascii=False)}")
        lines += [f"# {n}" for n in notes + [str(x) for x in c.get("notes", [])]]
        lines += [f"name = {json.dumps(name)}", f"bytes = {c['command_bits'] // 8}"]
        if cn in alt_of:
            lines.append(f'head = "{alt_of[cn]}"')
        lines.append(keys_line(keys))
        if engine != "tiu":     # DMA addresses and lane masks split in two fields
            lines += composed_line(dict.fromkeys(f.name for f in fields))
        lines += fields_block("fields", fields)
        lines += instr_block(instrs, vendor=vendor_kinds)
    return lines, kinds_of


def gen_newer(chip: str):
    """BM1688 / BM1690 / CV184X: TIU and GDMA (BM1690: also SDMA, CDMA, HAU) from <chip>.json."""
    def gen(facts: dict, out: Path):
        conf = CHIPS[chip]          # read when generating: generate() loads tools/facts/chips.json
        p, eng, ops = facts["params"], facts["engines"], facts["opcodes"]
        src = f"tools/facts/{chip}.json"
        prec = {ident(v): int(k) for k, v in sorted(ops[next(k for k in ops if k.startswith("prec_codes"))].items(),
                                                     key=lambda kv: int(kv[0]))}
        head_lines = [
            f"# GENERATED by tools/specgen.py from {src} -- edit the script, not this file.",
            f"# {conf['title']}: decode-only.",
        ]
        files = {}
        # ---- TIU
        tiu = eng["tiu"]
        enums_of = {"tsk_typ": "tsk_typ"}
        for c in tiu["classes"].values():
            for f in c["fields"]:
                if re.fullmatch(r"opt_(res0|opd\d)_prec", f["name"]):
                    enums_of[f["name"]] = "prec"
                if re.fullmatch(r"short_(res0|opd\d)_str", f["name"]):
                    enums_of[f["name"]] = "layout"
        layouts = {k: v for k, v in LAYOUT_ENUM.items() if v <= NEWER_LAYOUTS}
        fam = renames_of(chip)
        lines, tiu_kinds = _newer_engine(tiu, "tiu", "tsk_eu_typ", enums_of, fam)
        files["tiu"] = head_lines + [
            f"# TIU (BDC): {len(tiu['classes'])} classes of {sorted({c['command_bits'] // 8 for c in tiu['classes'].values()})} "
            "bytes, back to back; the head (cmd_short, tsk_typ, tsk_eu_typ) picks the class.",
            "# Class keys: (cmd_short, tsk_typ) where the class has cmd_short, with explicit tsk_eu_typ lists",
            "# where two classes share them (MM/MM2, SG/SGL); instruction kinds: the vendor's op names.",
            "# Field names: the sheet's, made identifiers by tpu-mlir's rule; a repeated name gets '_<bit>'.",
            *_family_note(fam, "tiu"),
            "",
        ] + lines + enums_block({"tsk_typ": code_enum(ops["tiu_tsk_typ"]), "prec": prec, "layout": layouts},
                                {"tsk_typ": "tsk_typ codes (the first class named for each)",
                                 "prec": "opt_res0_prec / opt_opd*_prec",
                                 "layout": "short_res0_str / short_opd*_str layout codes (4: the SG classes' T4)"})
        # ---- GDMA (and SDMA: the same classes)
        dma = eng["dma"]
        denums = {"cmd_type": "cmd_type"}
        formats = p.get(next((k for k in p if k.startswith("gdma_value_format")), ""), {})
        if formats:     # GDMA element formats (params.gdma_value_format): src/mask/index_data_format
            denums.update({n: "data_format" for n in ("src_data_format", "mask_data_format", "index_data_format")})
        lines, dma_kinds = _newer_engine(dma, "gdma", "cmd_special_function", denums, fam)
        cmd_type = {ident(_class_name(v, dma["classes"].get(v, {}))): int(k)
                    for k, v in sorted(ops["dma_cmd_type"].items(), key=lambda kv: int(kv[0]))}
        data_format = {ident(v): int(k) for k, v in sorted(formats.items(), key=lambda kv: int(kv[0]))}
        files["gdma"] = head_lines + [
            f"# GDMA descriptors: {len(dma['classes'])} classes, back to back; the head (cmd_short, cmd_type,",
            "# cmd_special_function) picks the class; keys (cmd_short, cmd_type) where the class has cmd_short.",
            "# Class names: the JSON 'alias' where the sheet name has odd characters.",
            *_family_note(fam, "gdma"),
            "",
        ] + lines + enums_block({"cmd_type": cmd_type, **({"data_format": data_format} if data_format else {})},
                                {"cmd_type": "cmd_type codes (class names)",
                                 "data_format": "src_data_format codes (params.gdma_value_format)"})
        if "cdma" in eng:
            cdma = eng["cdma"]
            lines, cdma_kinds = _newer_engine(cdma, "cdma", "cmd_special_function", {"cmd_type": "cmd_type"},
                                                 fam)
            ctype = {ident(_class_name(v, cdma["classes"].get(v, {}))): int(k)
                     for k, v in sorted(ops["cdma_cmd_type"].items(), key=lambda kv: int(kv[0]))}
            files["cdma"] = head_lines + [
                f"# CDMA (chip-to-chip DMA) descriptors: {len(cdma['classes'])} classes, back to back; the head",
                "# (cmd_type, cmd_special_function) picks the class (no short bit); keys: cmd_type.",
                "",
            ] + lines + enums_block({"cmd_type": ctype}, {"cmd_type": "cmd_type codes (class names)"})
        for name, lines in files.items():
            write(out / chip / f"{name}.toml", lines)

        # ---- chip.toml
        eu = p["eu_num"]
        cores = conf["cores"]
        mask = tiu.get("dependency_mask")
        lines = head_lines + [
            "",
            f'name = "{chip}"',
            f"version = {conf['version']}              # bmk's label for the chip",
            "",
            "[params]",
            f"npu_num = {p['npu_num']}",
            f"eu_num = {eu['8bit']}                   # 8-bit elements per EU row; per dtype: eu_num_<bits>bit",
            *(f"eu_num_{b} = {eu[b]}" for b in ("4bit", "8bit", "16bit", "32bit")),
            f"eu_bytes = {p['eu_bytes']}",
            f"lmem_size = {p['local_mem_bytes_per_npu']}            # bytes per NPU lane",
            f"lmem_banks = {p['local_mem_banks']}",
            f"lmem_bank_size = {p['local_mem_bank_bytes']}",
            f"lmem_total_size = {p['local_mem_total_bytes']}",
            f"gmem_alignment_bytes = {p['gmem_alignment_bytes']}",
            f"cores = {cores}                     # TPU cores a program's groups may run on",
            f"ic_parallel_int8 = {p['ic_parallel_int8']}    # int8 input channels a conv reads at once",
            *_timing_lines(p),
            *_register_lines(p),
            *_older_wait_lines(p),
            *_fp8_lines(p),
            *_static_lines(chip),
            "",
        ]
        lines += _memory_newer(chip, p)
        lines += ["", CMD_HDR_NEWER.format(magic=conf["magic"]), ""]
        lines += [
            "# Engines: bmk's cmd_hdr_t ids; ids implicit: no command carries its own id, a command's id",
            "# is its 1-based position in its stream (per engine, core and command group; facts id_rule).",
            "# cmd_id_dep: the position on the other engine that a command waits for (0: none).",
            *(["# wait_mask: only the low 20 bits of cmd_id_dep count (dependency_mask; bit 20's meaning is unknown)."]
              if mask else []),
            "# missing_wait = next: a class without cmd_id_dep (SYS_TR_ACC, LAR) waits as the next command",
            "# that has one (the vendor disassembler lends it that dependency).",
            "# stream: each stream ends with its sys end command, zero-padded to a multiple of 128 bytes;",
            "# at most 128 zero bytes follow the last command (facts end_rule).",
        ]
        if conf["messages"]:
            lines += ["# messages: multi-core send/wait (newer-chips.md 1); [field, first bit, width] of the message",
                      "# id and count inside the named field (facts sync.multi_core_messages)."]

        def engine_block(name, fmt, waits, end, extra=()):
            out = [f"[engines.{name}]", f"id = {NEWER_ENGINE_IDS[name]}", f'format = "{fmt}"']
            if name == "gdma":
                out.append('aliases = ["dma"]')
            if name == "tiu":
                out.append('aliases = ["bdc"]')
            out.append('ids = "implicit"')
            if waits:
                out.append("wait_for = { " + ", ".join(f'{k} = "{fam.field(fmt, v)}"' for k, v in waits.items()) + " }")
                if mask:
                    out.append(f"wait_mask = 0x{int(mask, 16):X}")
            out += list(extra)
            m = conf["messages"].get(fmt if name != "sdma" else "gdma")
            if m:
                kind_s, kind_w, fld, (ib, iw), (cb, cw) = m
                feng = fmt if name != "sdma" else "gdma"
                kind_s, kind_w, fld = fam.kind(feng, kind_s), fam.kind(feng, kind_w), fam.field(feng, fld)
                out.append(f'messages = {{ send = "{kind_s}", wait = "{kind_w}", id = ["{fld}", {ib}, {iw}], '
                           f'count = ["{fld}", {cb}, {cw}] }}')
            out.append(f'stream = {{ end = "{fam.kind(fmt, end)}", pad_to = 128, zero_tail = 128 }}')
            fe = eng["tiu" if fmt == "tiu" else "dma" if fmt == "gdma" else fmt]
            have = {fam.field(fmt, f["name"]) for c in fe["classes"].values() for f in c["fields"]}
            inert = [n for n in ("pwr_step", "intr_en") if n in have]
            if inert:
                out.append(f"inert = {json.dumps(inert)}           # power step, host interrupt: compute nothing")
            return out + [""]

        lines += [""] + engine_block("tiu", "tiu", {"gdma": "cmd_id_dep"}, "system.end", ['missing_wait = "next"'])
        lines += engine_block("gdma", "gdma", {"tiu": "cmd_id_dep"}, "dma.sys.chain_end")
        if "sdma" in eng:
            lines += ["# SDMA: one stream per core, read with the GDMA classes (facts engines.sdma.rule); its",
                      "# cmd_id_dep waits for nothing bmk knows (0 in every public stream), so no wait_for."]
            lines += engine_block("sdma", "gdma", {}, "dma.sys.chain_end")
        if "cdma" in eng:
            lines += ["# CDMA: no dependency field (facts dependency_field null)."]
            lines += engine_block("cdma", "cdma", {}, "cdma.chain_end")
        if "hau" in eng:
            lines += ["# HAU: no public register layout (facts engines.hau.notes): its streams are kept as bytes.",
                      "[engines.hau]", f"id = {NEWER_ENGINE_IDS['hau']}", "opaque = true"]
            if eng["hau"].get("barrier"):
                lines += ["# It takes part in every message barrier (facts engines.hau.barrier): the TIU, GDMA and",
                          "# SDMA waits count it; bmk runs none of its bytes (bmk/sim/cores.py).", "barrier = true"]
        write(out / chip / "chip.toml", lines)
        fam.check()

    return gen


def _family_note(fam: Renames, engine: str) -> list[str]:
    nf, nk = len(fam.fields.get(engine, {})), len(fam.kinds.get(engine, {}))
    if not nf and not nk:
        return []
    return [f"# Family names (tools/facts/families.json): {nf} field and {nk} kind names are the family's",
            f"# ({fam.reference}'s); `vendor` keeps the vendor's spelling, which listings print and the "
            "assembler reads."]


CMD_HDR_NEWER = """\
# The cmd_hdr_t frame before every command in a bmk command buffer (8 bytes, rows as bm1880's).
# The vendor has no cmd_hdr_t for this chip: the magic is bmk's own, a byte the vendor never
# writes (its magics are 0xA5..0xA8, cvikernel bm_kernel.h) and never the first byte of UTF-8
# text (0x80..0xBF). A command longer than 255 bytes (a 768-byte DMA descriptor) has len = 0
# and its length in mask, as the cmd_hdr_t convention allows.
[cmd_hdr]
name = "cmd_hdr"
bytes = 8
magic = {magic}
fields = [
  {{ name = "magic",      bit = 0,  width = 8 }},
  {{ name = "len",        bit = 8,  width = 8 }},
  {{ name = "engine_id",  bit = 16, width = 4 }},
  {{ name = "deprecated", bit = 20, width = 4, reserved = true }},
  {{ name = "flags",      bit = 24, width = 8 }},
  {{ name = "mask",       bit = 32, width = 32 }},
]"""


def _memory_newer(chip, p):
    """chip.toml's [memory] of a newer chip from tools/facts/chips.json: each space's keys are
    hex literals or the names of the chip's params facts (lane_bytes a plain count)."""
    conf = CHIPS[chip]["memory"]
    lines = [f"# {line}" for line in conf["about"]]
    for k, (name, note, keys) in enumerate(conf["spaces"]):
        head = f"[memory.{name}]"
        lines += ([""] if k else []) + [f"{head.ljust(30)}# {note}" if note else head]
        for key, value in keys.items():
            if key == "_why":                       # comment lines on the keys after them
                continue
            if isinstance(value, bool):
                lines += [f"# {line}" for line in keys.get("_why", ())] + [f"{key} = {str(value).lower()}"]
            elif value.startswith("0x"):
                lines.append(f"{key} = {value}")
            else:
                lines.append(f"{key} = {p[value] if key == 'lane_bytes' else hexs(p[value])}")
    return lines




# ---------------------------------------- CV18xx: CV183X (BM1880v2), CV182X (BM1822), CV181X, CV180X

# Instruction kinds and enum names: bmk's bm1880 names (bmk/specs/bm1880, hand-written from the
# same BM1880v2 facts), so the CV18xx family reads like bm1880. TIU kinds match (tsk_typ[, eu]
# [, flag]); first match wins.
CV18XX_TIU_KINDS = {
    # cv183x = BM1880v2 (bm1880.json enums): mdsum and the int8 lookup keep eu 0 and set a flag
    "bm1880v2": [("mdsum", {"tsk_typ": 3, "tsk_eu_typ": 0, "tens_mdsum": 1}),
                 ("lut", {"tsk_typ": 3, "tsk_eu_typ": 0, "tens_lookup": 1}),
                 *((k, {"tsk_typ": 3, "tsk_eu_typ": e}) for e, k in enumerate(
                     ["mul", "mac", "add", "sub", "max", "min", "arith_shift", "and", "or", "xor", "copy"])),
                 ("conv", {"tsk_typ": 0}), ("max_pool", {"tsk_typ": 1, "tsk_eu_typ": 0}),
                 ("avg_pool", {"tsk_typ": 1, "tsk_eu_typ": 1}), ("depthwise", {"tsk_typ": 1, "tsk_eu_typ": 2}),
                 ("matrix_mac", {"tsk_typ": 2})],
    # cv181x.json classes: TENSOR_ARITH eu 0..12 (11 ge, 12 lookup_table), DEPTHWISE_POOL eu 0..3
    "cv181x": [*((k, {"tsk_typ": 3, "tsk_eu_typ": e}) for e, k in enumerate(
                   ["mul", "mac", "add", "sub", "max", "min", "arith_shift", "and", "or", "xor", "copy", "ge", "lut"])),
               ("conv", {"tsk_typ": 0}), ("max_pool", {"tsk_typ": 1, "tsk_eu_typ": 0}),
               ("avg_pool", {"tsk_typ": 1, "tsk_eu_typ": 1}), ("depthwise", {"tsk_typ": 1, "tsk_eu_typ": 2}),
               ("min_pool", {"tsk_typ": 1, "tsk_eu_typ": 3}), ("matrix_mac", {"tsk_typ": 2})],
}
CV18XX_TDMA_KINDS = [
    ("load", {"trans_dir": 0, "spec_func": 0}), ("load_tp", {"trans_dir": 0, "spec_func": 1}),
    ("fill", {"trans_dir": 0, "spec_func": 4}), ("store", {"trans_dir": 1, "spec_func": 0}),
    ("store_tp", {"trans_dir": 1, "spec_func": 1}), ("copy_gmem", {"trans_dir": 2, "spec_func": 0}),
    ("copy_gmem_tp", {"trans_dir": 2, "spec_func": 1}), ("copy_lmem", {"trans_dir": 3, "spec_func": 0}),
]
CV18XX_ENUMS = {
    "tiu": {"tsk_typ": {"conv": 0, "depthwise_pool": 1, "fc": 2, "tensor_arith": 3}},
    "tdma": {"trans_dir": {"g2l": 0, "l2g": 1, "g2g": 2, "l2l": 3}, "sys_dtype": {"tensor": 0, "matrix": 1},
             "spec_func": {"copy": 0, "transpose": 1, "const_fill": 4}},
}
# CV183X = BM1880v2: bm1880's short_*_str enum (bm1880.json enums "tiu.short_*_str": the encoder's
# four operand layouts), one table for the four fields.
CV183X_TIU_ENUMS = {**CV18XX_ENUMS["tiu"], "short_str": {"aligned": 0, "weight": 1, "bias": 2, "explicit": 3}}
CV183X_FIELD_ENUMS = {f"short_{slot}_str": "short_str" for slot in ("res0", "opd0", "opd1", "opd2")}
# CV181X / CV180X / CV182X: the same short_*_str values (cvikernel src/cv181x/tiu_convolution.c writes
# short_res0_str = 3, "Manual instead of h/w", for the explicit strides) and opt_*_seg, the operand's
# planes: 1 one 8-bit plane (bf16 too: one plane), 0 two 8-bit planes b_str apart (tiu_add.c, tiu_sub.c:
# opt_res0_seg = (res_high == NULL)).
CV18XX_TIU_ENUMS = {**CV183X_TIU_ENUMS, "seg": {"int16": 0, "int8": 1}}
CV18XX_FIELD_ENUMS = {**CV183X_FIELD_ENUMS, **{f"opt_{slot}_seg": "seg" for slot in ("res0", "opd0", "opd1", "opd2")}}
# CV181X / CV180X / CV182X TDMA src_fmt / dst_fmt: 1 an 8-bit integer, 2 bf16 (cvikernel src/cv181x/tdma.c
# FMT_FIX8B_TYP 1, FMT_BF16_TYP 2; fill_g2l_fmt: `(fmt == CVK_FMT_BF16) ? 2 : 1`).
CV18XX_TDMA_ENUMS = {**CV18XX_ENUMS["tdma"], "fmt": {"fix8b": 1, "bf16": 2}}
CV18XX_TDMA_FIELD_ENUMS = {"src_fmt": "fmt", "dst_fmt": "fmt"}
CV18XX_COMPOSED = ('composed = { src_c_stride = ["src_c_stride_low", "src_c_stride_high"], '
                   'dst_c_stride = ["dst_c_stride_low", "dst_c_stride_high"], '
                   'src_addr = ["src_base_addr_low", "src_base_addr_high"], '
                   'dst_addr = ["dst_base_addr_low", "dst_base_addr_high"] }')
# chip -> (its row in cv181x.json params.per_chip, title)
CV18XX = {
    "cv181x": ("cv181x", "CV181X (Milk-V Duo 256M, reCamera; cvikernel cv181x)"),
    "cv180x": ("cv180x", "CV180X (Milk-V Duo; cvikernel cv180x)"),
    "cv182x": ("bm1822 (cv182x)", "CV182X = BM1822 (cvikernel bm1822)"),
}


def _cv18xx_engine(name, nbytes, fields, kinds, enums, src, extra=(), field_enums=None, family=()):
    """field_enums: {field: enum} for enums not named after their field; family: comment lines."""
    enums_of = {f.name: f.name for f in fields if f.name in enums}
    enums_of.update(field_enums or {})
    for f in fields:
        f.enum = enums_of.get(f.name)
    lines = [f"# GENERATED by tools/specgen.py from {src} -- edit the script, not this file.",
             f"# {name.upper()} descriptor: {nbytes} bytes, one layout (LSB first inside little-endian 32-bit words);",
             "# default = the vendor encoder's reset value. Instruction kinds: bmk's bm1880 names, first match wins.",
             *family, "", f'name = "{name}"', f"bytes = {nbytes}", ""]
    lines += fields_block("fields", fields)
    lines.append("")
    lines += instr_block(kinds)
    lines += list(extra)
    lines += enums_block(enums)
    return lines


def _cv18xx_chip(chip, title, src, params, magic, version, detect=True, seed=None):
    lines = [f"# GENERATED by tools/specgen.py from {src} -- edit the script, not this file.",
             f"# {title}: decode-only; cvikernel cmd_hdr_t command buffers (cvimodel CMDBUF sections).", "",
             f'name = "{chip}"', f"version = {version}"]
    if seed is not None:
        lines.append(f"seed_chip_version = {seed}")
    lines += ["", "[params]"] + [f"{k} = {v}" for k, v in params.items()]
    return lines


def _cv18xx_tail(magic, detect, global_base, global_size, lmem_total=None, lane=None, local_base=0):
    lines = []
    if lmem_total is not None:
        lines += ["", "[memory.local]", f"base = {hexs(local_base)}", f"size = {hexs(lmem_total)}",
                  f"lane_bytes = {lane}"]
    lines += ["", "[memory.global]", f"base = {hexs(global_base)}", f"size = {hexs(global_size)}"]
    if global_base:
        lines.append("address_mask = 0xFFFFFFFFFF")
    lines += [
        "",
        "# The vendor's cmd_hdr_t (cvikernel bm_kernel.h): magic, len (0: the length is in mask),",
        "# engine_id (0 TIU, 1 CPU, 2 TDMA), flags, mask; the magic names the chip.",
    ]
    if not detect:
        lines += ["# detect = false: 0xA5 is also bm1880's magic (the same BM1880v2 encoder); a 0xA5 buffer read",
                  "# without a chip name is bm1880's, `--chip cv183x` reads it as CV183X."]
    lines += ["[cmd_hdr]", 'name = "cmd_hdr"', "bytes = 8", f"magic = {magic}"]
    if not detect:
        lines.append("detect = false")
    lines += [
        "fields = [",
        '  { name = "magic",      bit = 0,  width = 8 },',
        '  { name = "len",        bit = 8,  width = 8 },',
        '  { name = "engine_id",  bit = 16, width = 4 },',
        '  { name = "deprecated", bit = 20, width = 4, reserved = true },',
        '  { name = "flags",      bit = 24, width = 8 },',
        '  { name = "mask",       bit = 32, width = 32 },',
        "]",
        "",
        "# Engines: the vendor's ids; explicit sync ids counted from 1 per engine in cmdbuf order",
        "# (cvikernel's acquisition rewrite): TIU cmd_id_tpu waits for TDMA cmd_id_gdma, TDMA cmd_id",
        "# waits for TIU wait_id_tpu; cmd_id_en / bar_en are set with them. inherit_wait: a TDMA",
        "# descriptor with no new wait repeats the previous one's (as bm1880).",
        "[engines.tiu]", "id = 0", 'aliases = ["bdc"]', 'format = "tiu"', 'own_id = "cmd_id_tpu"',
        'wait_for = { tdma = "cmd_id_gdma" }', "enable = { cmd_id_en = 1 }", "inherit_wait = false", "",
        "[engines.cpu]", "id = 1", "",
        "[engines.tdma]", "id = 2", 'aliases = ["gdma"]', 'format = "tdma"', 'own_id = "cmd_id"',
        'wait_for = { tiu = "wait_id_tpu" }', "enable = { bar_en = 1 }", "inherit_wait = true",
    ]
    return lines


def gen_cv18xx(chip: str):
    """CV181X / CV180X / CV182X from cv181x.json (one shared TIU layout, the TDMA layout)."""
    row, title = CV18XX[chip]

    def gen(facts: dict, out: Path):
        src = "tools/facts/cv181x.json"
        p = facts["params"]["per_chip"][row]
        tiu = facts["engines"]["tiu"]
        layouts = {json.dumps(c["fields"]) for c in tiu["classes"].values()}
        assert len(layouts) == 1, "cv181x TIU classes are expected to share one layout"
        raw = next(iter(tiu["classes"].values()))["fields"]
        notes = []
        tfields = build_fields(raw, tiu["command_bits"], defaults={f["name"]: f["default"] for f in raw if f["default"]},
                               notes=notes)
        assert not notes, notes
        fam = renames_of(chip)
        fam.apply_fields("tiu", "tiu", tfields, head_names=("cmd_en", "tsk_typ", "tsk_eu_typ"))
        write(out / chip / "tiu.toml", _cv18xx_engine("tiu", tiu["command_bits"] // 8, tfields,
                                                      CV18XX_TIU_KINDS["cv181x"], CV18XX_TIU_ENUMS, src,
                                                      field_enums=CV18XX_FIELD_ENUMS, family=_family_note(fam, "tiu")))
        tdma = facts["engines"]["tdma"]
        (dcls,) = tdma["classes"].values()
        draw = dcls["fields"]
        dfields = build_fields(draw, tdma["command_bits"], defaults={f["name"]: f["default"] for f in draw if f["default"]},
                               notes=notes)
        assert not notes, notes
        fam.apply_fields("tdma", "tdma", dfields)
        write(out / chip / "tdma.toml", _cv18xx_engine("tdma", tdma["command_bits"] // 8, dfields, CV18XX_TDMA_KINDS,
                                                       CV18XX_TDMA_ENUMS, src, ["", CV18XX_COMPOSED],
                                                       field_enums=CV18XX_TDMA_FIELD_ENUMS))
        params = {"npu_num": p["npu_num"], "eu_num": p["eu_num"], "lmem_size": p["local_mem_bytes_per_npu"],
                  "lmem_banks": p["local_mem_banks"], "lmem_bank_size": p["local_mem_bank_bytes"]}
        lines = _cv18xx_chip(chip, title, src, params, p["cmd_hdr_magic"], p["version_code"])
        lines += ["", "# Global memory from 0 (addresses emitted as given; *_base_reg_sel picks a base register the",
                  "# runtime adds: params.tdma_address_encoding). Local memory: npu_num lanes of lmem_size",
                  "# bytes; a TDMA local address is lane * lmem_size + offset (as bm1880's) in its own space",
                  "# (trans_dir says which), so its base here is bmk's, above the global window (host access)."]
        lines += _cv18xx_tail(p["cmd_hdr_magic"], True, int(p["global_mem_start_addr"], 16),
                              int(p["global_mem_bytes"], 16), p["npu_num"] * p["local_mem_bytes_per_npu"],
                              p["local_mem_bytes_per_npu"], int(p["global_mem_bytes"], 16))
        write(out / chip / "chip.toml", lines)
        fam.check()

    return gen


def gen_cv183x(facts: dict, out: Path):
    """CV183X = BM1880v2: bm1880's layouts and kinds under its own name (bm1880.json)."""
    src = "tools/facts/bm1880.json"
    cp = facts["chip_params"]
    for name, kinds, enums, extra in (("tiu", CV18XX_TIU_KINDS["bm1880v2"], CV183X_TIU_ENUMS, ()),
                                      ("tdma", CV18XX_TDMA_KINDS, CV18XX_ENUMS["tdma"], ["", CV18XX_COMPOSED])):
        eng = facts[name]
        defaults = eng["reset_defaults"]
        raw = [{"name": f["name"], "offset": f["bit"], "width": f["width"], "reserved": f.get("reserved", False)}
               for f in eng["fields"]]
        notes = []
        fields = build_fields(raw, eng["bytes"] * 8, defaults=defaults, notes=notes)
        assert not notes, notes
        for f in fields:          # bm1880's spec writes no default of 0
            if f.default == 0:
                f.default = None
        write(out / "cv183x" / f"{name}.toml", _cv18xx_engine(name, eng["bytes"], fields, kinds, enums, src, extra,
                                                              CV183X_FIELD_ENUMS))
    params = {"npu_num": cp["npu_num"], "eu_num": cp["eu_num"], "lmem_size": cp["lmem_size"],
              "lmem_banks": cp["lmem_banks"], "lmem_bank_size": cp["lmem_bank_size"]}
    lines = _cv18xx_chip("cv183x", "CV183X = BM1880v2 (the encoder bmk's bm1880 API follows)", src, params,
                         CHIPS["cv183x"]["magic"], cp["version"])
    lines += ["", "# As bm1880: TDMA writes a gmem address as (addr & address_mask) + base (gmem_address_encoding)."]
    lines += _cv18xx_tail(CHIPS["cv183x"]["magic"], False, cp["gmem_start"], (1 << 40) - cp["gmem_start"],
                          cp["npu_num"] * cp["lmem_size"], cp["lmem_size"])
    write(out / "cv183x" / "chip.toml", lines)


# chip -> (its fact file in tools/facts/, the generator)
GENERATORS = {
    "bm1684": ("bm1684.json", gen_bm1684),
    "bm1684x": ("bm1684x.json", gen_bm1684x),
    "bm1688": ("bm1688.json", gen_newer("bm1688")),
    "bm1690": ("bm1690.json", gen_newer("bm1690")),
    "cv184x": ("cv184x.json", gen_newer("cv184x")),
    "cv181x": ("cv181x.json", gen_cv18xx("cv181x")),
    "cv180x": ("cv181x.json", gen_cv18xx("cv180x")),
    "cv182x": ("cv181x.json", gen_cv18xx("cv182x")),
    "cv183x": ("bm1880.json", gen_cv183x),
}


def generate(out: Path = OUT, facts: Path = FACTS, chips=None) -> list[Path]:
    """Write the spec folders of `chips` (default: every generated chip) under `out`; the written files."""
    written = []
    FAMILIES.clear()
    CHIPS.clear()
    CHIPS.update({k: v for k, v in json.loads((facts / "chips.json").read_text()).items() if not k.startswith("_")})
    fam_file = facts / "families.json"
    if fam_file.is_file():
        FAMILIES.update(json.loads(fam_file.read_text()))
    for chip in chips or GENERATORS:
        fact_file, gen = GENERATORS[chip]
        gen(json.loads((facts / fact_file).read_text()), out)
        written += sorted((out / chip).glob("*.toml"))
    return written



def _static_lines(chip):
    """[params] lines of a newer chip's static memory tables (STATIC_TABLES) and operand form."""
    tables = STATIC_TABLES.get(chip)
    if not tables:
        return []
    return ["# Lookup tables in static memory before any command runs (offset in bytes from its base,",
            "# entries); a TIU static operand (tsbc.s_bc / s_distribute opd0_addr) is an offset there",
            "tiu_static_offset = 1"] + [line for name, off, n, what in tables
                                        for line in (f"{name} = {off:<6}   # {what}", f"{name}_len = {n}")]


def _register_lines(p):
    """[params] lines of the TIU registers that SYS_TR_ACC (system_tr_wr.wr_imm) writes and later
    commands read as operands (params.tiu_registers): tgcr_<operand> = register index."""
    regs = p.get("tiu_registers")
    if not regs:
        return []
    return ["# TIU registers (params.tiu_registers) system_tr_wr.wr_imm writes and the quantized conv, PorD and",
            "# MM / MM2 read: opd4 (kernel zero point), opd5 (requant parameters: an address or the",
            "# multiplier), the constant requant's shift and output zero point"] \
        + [f"tgcr_{k} = {v}" for k, v in regs.items() if k != "source"]


def _older_wait_lines(p):
    """[params] line of the wait mask of a chip's older builds (params.older_wait_mask), read by
    bmk/models/chips.py model_spec."""
    older = p.get("older_wait_mask")
    if not older:
        return []
    return ["# older_wait_mask: the Nov/Dec 2023 SG2260 builds keep a wait's position in the low 16 bits of",
            "# cmd_id_dep and mark it with bit 16 (the later builds: 20 bits and bit 20); a model whose waits",
            "# carry bit 16 and never bit 20 is read with this mask (facts params.older_wait_mask)",
            f"older_wait_mask = 0x{older['mask']:X}"]


def _fp8_lines(p):
    """[params] line saying the chip computes in fp8 (params.fp8): prec 7 is data, not a reserved code."""
    if not p.get("fp8"):
        return []
    return ["# fp8: prec 7 (E5M2 / E4M3 by the sign bit) is a data type here (facts params.fp8)", "fp8 = 1"]


def _timing_lines(p):
    """[params] lines of a chip's timing facts (params.timing): clocks, bandwidth and the vendor
    profile's record layout, read by bmk/timing (the cost model, `bmk profile`)."""
    t = p.get("timing")
    if not t:
        return []
    lines = ["# timing (params.timing): clocks in MHz, GDMA bandwidth in MB/s, iter*.profile block types,",
             "# record bytes and id bits per engine"]
    return lines + [f"{k} = {v}" for k, v in t.items() if k != "source"]

def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="tools/specgen.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=Path, default=FACTS, help="fact files (default: tools/facts)")
    ap.add_argument("--out", type=Path, default=OUT, help="specs folder to write (default: bmk/specs)")
    ap.add_argument("chips", nargs="*", metavar="CHIP", help=f"chips to generate (default: all of {list(GENERATORS)})")
    args = ap.parse_args(argv[1:])
    unknown = [c for c in args.chips if c not in GENERATORS]
    if unknown:
        ap.error(f"unknown chips {unknown}: expected some of {list(GENERATORS)}")
    for path in generate(args.out, args.facts, args.chips or None):
        print("wrote", path)


if __name__ == "__main__":
    main(sys.argv)
