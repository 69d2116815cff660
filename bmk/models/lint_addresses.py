"""`bmk lint`'s address rules (issue 33 item 3): every command's device addresses inside the
model's regions or their memory, every local operand inside local memory's lanes. Called by
bmk/models/lint.py with a subnet's decoded streams.

Operands. A GDMA operand is each composed `*_addr` row of its class in the chip's spec (src, dst,
index, mask, ...), at the memory the memory map (specs [memory.*]) puts its address in; its
layout (sizes n, c, h, w, byte strides, element bytes) is the simulator's reading of the kind
(bmk/sim/bm1684x/gdma.py, dma_index.py; strides count elements of src_data_format, its bytes
the bits its enum member names / 8): dma.tensor* (X_*size, X_*stride; dst takes src's sizes when
nchw_copy or unset; the special functions' shapes; BM1684's 4N / 2N local sides: `_tensor_layouts`),
dma.general (src_cstride_move_length_ elements; the broadcast's dst_csize
NPUs), dma.matrix (long class: the non-local side (H, W) with row stride X_hstride, the local side
(rows, ceil(cols / X_wsize), 1, X_wsize)), dma.gather / dma.scatter (src (1, C, H, W), the index
(1, index_csize, rows, 1) uint32, dst (1, C', rows, W); stride_enable 0: the default layouts). A
CV18xx TDMA operand (bmk/sim/bm1880/tdma.py, cv181x/tdma.py): trans_dir (g2l, l2g, g2g, l2l) names
each side's memory; a global side's address is an offset from the base register
`X_base_reg_sel` selects, which as a model address is that region's tag above REGION_TAG_BITS
(bmk/models/regions.py; cvimodel-format.md); sizes src (src_n, src_c, src_h, src_w), dst
(N, dst_c, dst_h, dst_w) with the element count of src, matrices (sys_dtype) as rows x columns;
strides are bytes (the w stride the element: 2 for bf16).

- address: an operand in global memory must start inside one of its stage's regions and end
  (its last byte: start + sum of (size - 1) * stride + element bytes) inside one. The regions:
  the coefficients (CoeffMem), the neuron memory (NeuronMem), each io tensor's bytes (io tensors
  may sit apart from the neuron memory: tpu-mlir's io_alone) and, for a cvimodel, the shared and
  private memories its Program sizes (shared_gmem tag 0, private_gmem tag 2). On bm1688 / bm1690
  a global address carries tag bits that select its region (isa-facts bm1688.json
  params.address_encoding); the model's own region addresses carry the same tags, so comparing
  whole addresses against the regions is the tag-aware comparison and no tag layout is spelled
  here. A stage without a coefficient memory (a copy whose weights were stripped) is not checked.
  An operand in another memory than global and local (static memory, L2 SRAM, DTCM) must end
  inside that memory; an address in no memory of the map is a finding. A tsbc.s_bc /
  tsbc.s_distribute command's static vector (res0_w / res0_c elements of res0_prec at opd0_addr,
  an offset in static memory where params.tiu_static_offset says so: bmk/sim/bm1684x/tsbc.py)
  must lie inside static memory. The finding names the field, the address and the region or
  memory it left (the nearest region).
- lanes: an operand in local memory (the spec's `local` space, `lane_bytes` per NPU, `npu_num`
  NPUs) must end inside its lane: start NPU s = offset // lane_bytes, the channels c take
  ceil((s + c) / npu_num) channel slots (bmk/lmem.py's placement), the last byte of a lane is lane
  offset + (n - 1) * n stride + (slots - 1) * c stride + (h - 1) * h stride + (w - 1) * w stride +
  element bytes. A TIU command's result (res0: res0_addr, res0_n/c/h/w, res0_prec, layout res0_str:
  aligned or compact strides from eu_num_<bits>bit as bmk/sim/bm1684x/operands.py lays them out,
  free strides from res0_*_str) must end inside its lane (the NPU with the most channel slots),
  and so must the sources whose shape the simulator takes from the fields (`_sources`: arith
  opd0 / opd1 in the result's shape, with tsk_opd_num 2 for opd1; cmp opd0..3; sfu opd0; lin
  opd0 and its per-channel opd1 / opd2; conv and windowed pord inputs (n, opd0_c or c, opd0_h,
  opd0_w); a conv's kernel (ceil(IC / q), OC, kh * kw, q), q = ic_parallel_int8 * 8 / bits
  input channels side by side (1 for 32-bit types); a depthwise or average pool's kernel (1, C,
  kh, kw) compact; mm.*'s three matrices (rows, ceil(columns / w), 1, w) and mm2.*'s (1, rows,
  1, columns), aligned; constants skipped); the first result and the first source of a stream
  past their lane are reported. BM1684 (seed 003's fields: opt_res0_prec, short_res0_str): the
  result of conv, pord, arith, md_linear and lut commands, an arith kind's tensor sources and a
  conv's or pooling's input, laid out by its simulator's static views (bmk/sim/bm1684/
  elementwise.py `static_view`: 8- and 16-bit tensors as 4N / 2N words; opd_neq1 one batch;
  offset one value per channel). CV18xx (the bm1880 lineage's fields): every TIU result and the
  element-wise, lookup, convolution and pooling sources, laid out by its simulator (`_Cv18xx`).

Not checked: the other TIU kinds' sources (gather/scatter, roi pooling, tsbc ...), biases and
per-channel requant parameters (their element type is the kind's rule, not a field), int4
operands, other layouts (offset, T4, T5), bm1684's kernels, biases and matrices, cv18xx matrix
operands and per-channel quantization parameters, the short dma.matrix class, the other GDMA
kinds (cw_transpose, masked_select, nonzero; bm1684's trans and constant ends, its matrix,
common_mode and implicit-stride tensor forms), 4bank copies' extra banks, opaque engines (bm1690
HAU), bm1880 TDMA global addresses (no base register field).
"""
import attrs

from bmk import layout
from bmk.errors import SimulationError, SpecError
from bmk.util import printable

_DIMS = "nchw"


@attrs.frozen
class _Region:
    name: str
    start: int
    end: int


@attrs.frozen
class _Operand:
    """One memory operand of a command: its field, the address as written, its space (a memory of
    the chip's map, or None), `at` (the region-comparable address in global memory, else the offset
    in its space) and its layout (sizes n, c, h, w; byte strides; element bytes) or None."""
    name: str
    address: int
    space: object
    at: int
    layout: "tuple | None"


def stage_regions(st):
    """[_Region] of a stage's device memory, or None when its coefficient memory is not recorded."""
    if st.coeff is None or st.coeff.address is None:
        return None
    from bmk.models.regions import REGION_TAG_BITS, SIZED_REGIONS
    out = [_Region("coefficients", st.coeff.address, st.coeff.address + (st.coeff.size or 0))]
    if st.neuron is not None and st.neuron.address is not None:
        out.append(_Region("neuron memory", st.neuron.address, st.neuron.address + (st.neuron.size or 0)))
    for key, (name, tag) in SIZED_REGIONS.items():      # cvimodel: regions known by size and tag only
        if st.extra.get(key):
            out.append(_Region(name, tag << REGION_TAG_BITS, (tag << REGION_TAG_BITS) + st.extra[key]))
    for role, ts in (("input", st.inputs), ("output", st.outputs)):
        for t in ts:
            if t.address is not None and t.size:
                out.append(_Region(f"{role} {printable(t.name)!r}", t.address, t.address + t.size))
    return out


def _nearest(regions, a):
    return min(regions, key=lambda r: r.start - a if a < r.start else a - r.end + 1)


def _elem_bytes(spec, engine, cls, code):
    """Bytes of a DMA src_data_format code: its enum member's bits (int8, fp16, float32 ...) / 8,
    1 for a code the enum does not name."""
    return spec.derived(("lint elem bytes", engine, cls), _elem_table, spec, engine, cls).get(code, 1)


def _elem_table(spec, engine, cls):
    try:
        members = spec.members(engine, "src_data_format", cls)
    except SpecError:                               # an engine without that enum: bytes as bytes
        return {}
    out = {}
    for code, name in members.items():
        digits = "".join(ch for ch in name if ch.isdigit())
        out[code] = max(1, int(digits) // 8) if digits else 1
    return out


def _end(layout):
    """One past the last byte a layout reaches from its start (0)."""
    (n, c, h, w), (ns, cs, hs, ws), e = layout
    return (n - 1) * ns + (c - 1) * cs + (h - 1) * hs + (w - 1) * ws + e


def _lane_end(layout, offset, lane, npu):
    """One past the last lane byte a local operand takes: channels from the start NPU, in
    ceil((start + c) / npu_num) channel slots (bmk/lmem.py's placement)."""
    (n, c, h, w), (ns, cs, hs, ws), e = layout
    start_npu, at = divmod(offset, lane)
    slots = -(-(start_npu % npu + c) // npu)
    return at + _end(((n, slots, h, w), (ns, cs, hs, ws), e))


def check_stream(spec, label, engine, recs, regions, out, finding):
    """Append the address and lane findings of one decoded DMA stream (module docstring)."""
    if spec.engine(engine).opaque:
        return                                          # kept as bytes: no fields to read
    local = next((m for m in spec.memory if m.name == "local"), None)
    lane = local.lane_bytes if local is not None else None
    npu = spec.param("npu_num") if local is not None else None
    reported = set()                                    # one finding per (rule, operand) per stream
    for i, r in enumerate(recs):
        fmt = spec.fmt(r.engine, r.cls)
        ops = _tdma_operands(spec, fmt, r) if "trans_dir" in fmt.by_name else _gdma_operands(spec, fmt, r)
        for op in ops:
            why = _address_why(r, op, regions) if ("address", op.name) not in reported else None
            if why is not None:
                reported.add(("address", op.name))
                out.append(finding("address", label, engine, i, why))
            if op.space is not None and op.space.name == "local" and lane and op.layout is not None \
                    and ("lanes", op.name) not in reported:
                end = _lane_end(op.layout, op.at, lane, npu)
                if end > lane:
                    reported.add(("lanes", op.name))
                    out.append(finding("lanes", label, engine, i,
                                       f"{r.kind} {op.name} 0x{op.address:x} ends at lane byte {end}, past the "
                                       f"{lane}-byte lane of local memory ({npu} NPUs)"))


def _address_why(r, op, regions):
    """Why a non-local operand leaves its memory, or None."""
    where = f"{r.kind} {op.name} 0x{op.address:x}"
    if op.space is None:
        return f"{where} lies in none of the chip's memories (the spec's memory map)"
    if op.space.name == "local":
        return None
    if op.space.name != "global":                       # static memory, L2 SRAM ...: the space's own bounds
        if op.layout is None or op.at + _end(op.layout) <= op.space.size:
            return None
        base = op.address - op.at
        return (f"{where} runs to 0x{op.address + _end(op.layout):x}, past the end of the {op.space.name} memory "
                f"[0x{base:x}, 0x{base + op.space.size:x})")
    if regions is None:
        return None
    a = op.at
    inside = [rg for rg in regions if rg.start <= a < rg.end]
    if not inside:
        rg = _nearest(regions, a)
        return f"{where} leaves the {rg.name} [0x{rg.start:x}, 0x{rg.end:x})"
    if op.layout is None:
        return None
    end = a + _end(op.layout)
    if any(end <= rg.end for rg in inside):
        return None
    rg = max(inside, key=lambda rg: rg.end)
    return f"{where} runs to 0x{end:x}, past the end of the {rg.name} [0x{rg.start:x}, 0x{rg.end:x})"


# ------------------------------------------------------------------------------------ GDMA

def _gdma_operands(spec, fmt, r):
    f = r.fields
    out = []
    for name, parts in fmt.composed:
        if not name.endswith("_addr") or not any(p in f for p in parts):
            continue
        side = name[:-len("_addr")]
        if name == "src_addr" and (f.get("fill_constant_en") or r.kind == "dma.constant"):
            continue                                    # a constant fill: the source is not read (bm1684's kind)
        a = fmt.compose(name, f)
        space = spec.space_of(a)
        at = a if space is None or space.name == "global" else a - space.base
        out.append(_Operand(name, a, space, at, None))
    laid = {op.name[:-len("_addr")]: op for op in out}
    shapes = _gdma_layouts(spec, r, {s: op.space for s, op in laid.items()})
    return [attrs.evolve(op, layout=shapes.get(s)) for s, op in laid.items()]


def _gdma_layouts(spec, r, spaces):
    """{side: (sizes, byte strides, element bytes)} of the sides a GDMA kind's fields describe
    (the simulator's reading: bmk/sim/bm1684x/gdma.py, dma_index.py); sides left out are not known."""
    f, kind = r.fields, r.kind or ""
    e = _elem_bytes(spec, r.engine, r.cls, f.get("src_data_format", 0))
    out = {}
    if kind.startswith("dma.tensor"):
        out.update(_tensor_layouts(spec, f, kind, spaces, e))
    elif kind in ("dma.general", "dma.general.broadcast"):
        n = f.get("src_cstride_move_length_", 0)
        if n:
            out["src"] = ((1, 1, 1, n), (0, 0, 0, e), e)
            c = f.get("dst_csize", 0) if kind == "dma.general.broadcast" else 1
            out["dst"] = ((1, c, 1, n), (0, 0, 0, e), e) if c else None
    elif kind in ("dma.matrix", "dma.matrix.transpose"):
        out.update(_matrix_layouts(f, kind.endswith("transpose"), spaces, e))
    elif kind in ("dma.gather", "dma.scatter"):
        out.update(_gather_layouts(spec, f, kind == "dma.gather", spaces, e))
    return {s: v for s, v in out.items() if v is not None and min(v[0]) >= 1}


def _tensor_layouts(spec, f, kind, spaces, e):
    """dma.tensor and its special functions (bmk/sim/bm1684x/gdma.py `_tensor_copy`): src
    (src_*size), dst (dst_*size, or src's when nchw_copy or unset); transpose dst (C, N, H, W),
    collect / distribute (N, W, H, C), broadcast src (N, 1, H, W) to dst (N, dst_csize, H, W);
    a special function's w strides 1; stride_enable 0: the default layouts. BM1684's dma.tensor
    (bmk/sim/bm1684/gdma.py): an 8- or 16-bit local side with chw_copy 0 is 4N / 2N (batches
    packed in words of params.storage_word_bytes, strides in words); its matrix, linear
    (common_mode) and implicit-stride forms are left out."""
    src = tuple(f.get(f"src_{d}size", 0) for d in _DIMS)
    dst = tuple(f.get(f"dst_{d}size", 0) for d in _DIMS)
    if f.get("nchw_copy") or not any(dst):
        dst = src
    special = kind[len("dma.tensor."):] or None
    if special == "transpose":
        dst = (src[1], src[0], src[2], src[3])
    elif special in ("collect", "distribute"):
        dst = (src[0], src[3], src[2], src[1])
    elif special in ("broadcast", "4bank_broadcast"):
        src, dst = (src[0], 1, src[2], src[3]), (src[0], f.get("dst_csize", 0), src[2], src[3])
    if "sys_mem_type" in f:                                 # BM1684: chw_copy 1, dst takes src's sizes
        plain = not f.get("common_mode") and f.get("stride_enable", 1) \
            and spec.member("gdma", "sys_mem_type", f["sys_mem_type"]) == "tensor"
        if not plain:
            return {}
        dst = src if f.get("chw_copy", 1) else tuple(f.get(f"dst_{d}size", 0) for d in _DIMS)
        word = spec.param("storage_word_bytes")
        out = {}
        for side, shp in (("src", src), ("dst", dst)):
            st = tuple(f.get(f"{side}_{d}stride", 0) for d in _DIMS)
            local = spaces.get(side) is not None and spaces[side].name == "local"
            if local and e < word and not f.get("chw_copy", 1):     # 4N / 2N: word // e batches a word
                out[side] = ((-(-shp[0] // (word // e)),) + shp[1:], tuple(t * word for t in st), word)
            else:
                out[side] = (shp, tuple(t * e for t in st), e)
        return out
    implicit = not f.get("stride_enable", 1)
    out = {}
    for side, shp in (("src", src), ("dst", dst)):
        if implicit:
            st = _default_strides(spec, spaces.get(side), shp, e)
            if st is None:
                continue
        else:
            st = tuple(f.get(f"{side}_{d}stride", 0) for d in "nch") + \
                (1 if special else f.get(f"{side}_wstride", 0),)
        out[side] = (shp, tuple(t * e for t in st), e)
    return out


def _matrix_layouts(f, transpose, spaces, e):
    """dma.matrix: the non-local side an (H, W) array with row stride X_hstride, the local side
    (rows, ceil(cols / X_wsize), 1, X_wsize) with strides (X_nstride, X_cstride, -, 1)
    (bmk/sim/bm1684x/dma_index.py, opparam DMA_matrix_t_converter). The long class only."""
    if "src_hstride_dst_hstride" in f or spaces.get("src") is None or spaces.get("dst") is None:
        return {}
    src_local = spaces["src"].name == "local" and not f.get("fill_constant_en")
    loc, glob = ("src", "dst") if src_local else ("dst", "src")
    h, w, per = f.get(f"{glob}_hsize", 0), f.get(f"{glob}_wsize", 0), f.get(f"{loc}_wsize", 0)
    if min(h, w, per) < 1:
        return {}
    rows, cols = (w, h) if transpose else (h, w)
    return {glob: ((1, 1, h, w), (0, 0, f.get(f"{glob}_hstride", 0) * e, e), e),
            loc: ((rows, -(-cols // per), 1, per), (f.get(f"{loc}_nstride", 0) * e, f.get(f"{loc}_cstride", 0) * e,
                                                    0, e), e)}


def _gather_layouts(spec, f, gather, spaces, e):
    """dma.gather / dma.scatter: src (1, C, H, W), the index (1, index_csize, rows, 1) of uint32,
    dst (1, C', rows, W), strides (0, X_cstride, X_hstride, 1) or, for a gather with
    stride_enable 0, the default layouts (bmk/sim/bm1684x/dma_index.py)."""
    c, h, w, ic = (f.get(k, 0) for k in ("src_csize", "src_hsize", "src_wsize", "index_csize"))
    rows = (h if f.get("nchw_copy") else f.get("dst_hsize", 0)) if gather else f.get("dst_hsize", 0)
    shapes = {"src": (1, c, h, w), "index": (1, ic, rows if gather else h, 1), "dst": (1, max(c, ic) if gather
                                                                                      else c, rows, w)}
    implicit = gather and not f.get("stride_enable", 1)
    out = {}
    for side, shp in shapes.items():
        b = 4 if side == "index" else e
        if implicit:
            st = _default_strides(spec, spaces.get(side), shp, b)
        else:
            st = (0, f.get(f"{side}_cstride", 0), f.get(f"{side}_hstride", 1 if side == "index" else 0), 1)
        if st is not None:
            out[side] = (shp, tuple(t * b for t in st), b)
    return out


def _default_strides(spec, space, shape, e):
    """stride_enable 0: aligned from the start NPU in local memory (start NPU taken as 0: the
    lane check adds it), contiguous elsewhere (bmk/sim/bm1684x/gdma.py default_strides)."""
    if space is None:
        return None
    n, c, h, w = shape
    if space.name != "local":
        return (c * h * w, h * w, w, 1)
    try:
        eu = spec.param(f"eu_num_{8 * e}bit")
    except (SpecError, KeyError):
        return None
    cs = -(-(h * w) // eu) * eu
    return (-(-c // spec.param("npu_num")) * cs, cs, w, 1)


# ------------------------------------------------------------------------------------ TDMA

def _tdma_operands(spec, fmt, r):
    """CV18xx / BM1880 TDMA: trans_dir (g2l, l2g, g2g, l2l) names each side's memory. A global
    side's address is an offset from the base register *_base_reg_sel selects: as a model
    address, the region tag above REGION_TAG_BITS (bmk/models/regions.py); a chip without the
    field (bm1880) is not compared with the regions. A local address is lane * lane_bytes + offset.
    Strides are bytes (w: the element, 2 for bf16; bmk/sim/bm1880/tdma.py, bmk/sim/cv181x/tdma.py)."""
    from bmk.models.regions import REGION_TAG_BITS
    f = r.fields
    direction = spec.member(r.engine, "trans_dir", f.get("trans_dir", 0), r.cls) or ""
    if len(direction) != 3:
        return []
    out = []
    for side, where in (("src", direction[0]), ("dst", direction[2])):
        if side == "src" and r.kind == "fill":
            continue                                    # a constant fill reads nothing
        raw = fmt.compose(f"{side}_addr", f)
        if where == "l":
            space = spec.space("local")
            out.append(_Operand(f"{side}_addr", raw, space, raw, _tdma_layout(spec, r, side, False)))
        elif f"{side}_base_reg_sel" in f:
            tagged = f[f"{side}_base_reg_sel"] << REGION_TAG_BITS | raw
            out.append(_Operand(f"{side}_addr", raw, spec.space("global"), tagged, _tdma_layout(spec, r, side, True)))
    return out


def _tdma_layout(spec, r, side, gmem):
    f = r.fields
    e = 2 if spec.member(r.engine, f"{side}_fmt", f.get(f"{side}_fmt", 0), r.cls) == "bf16" else 1
    fmt = spec.fmt(r.engine, r.cls)
    n_st, c_st, h_st = f.get(f"{side}_n_stride", 0), fmt.compose(f"{side}_c_stride", f), f.get(f"{side}_h_stride", 0)
    src = tuple(f.get(f"src_{d}", 0) for d in _DIMS)
    if spec.member(r.engine, "sys_dtype", f.get("sys_dtype", 0), r.cls) == "matrix":
        if gmem:        # rows x cols with the c stride as row stride: src (src_n, src_w), dst (dst_c, dst_w)
            rows, cols = (src[0], src[3]) if side == "src" else (f.get("dst_c", 0), f.get("dst_w", 0))
            return ((rows, 1, 1, cols), (c_st, 0, 0, e), e)
        if side == "src":
            return ((src[0], src[1], 1, src[3]), (n_st, c_st, 0, e), e)
        rows = src[3] if (r.kind or "").endswith("_tp") else src[0]
        return ((rows, f.get("dst_c", 0), 1, f.get("dst_w", 0)), (n_st, c_st, 0, e), e)
    if side == "src":
        shape = src
    elif r.kind == "fill":
        shape = (src[0],) + tuple(f.get(f"dst_{d}", 0) for d in "chw")
    else:
        chw = f.get("dst_c", 0) * f.get("dst_h", 0) * f.get("dst_w", 0)
        total = src[0] * src[1] * src[2] * src[3]
        if not chw or total % chw:
            return None
        shape = (total // chw, f.get("dst_c", 0), f.get("dst_h", 0), f.get("dst_w", 0))
    if min(shape) < 1:
        return None
    return (shape, (n_st, c_st, h_st, e), e)


# ------------------------------------------------------------------------------------- TIU

def _sources(r):
    """[(operand, shape, layout or None for its X_str, precision field)] of the sources a TIU
    kind reads in a shape its fields give (the simulator's reading: bmk/sim/bm1684x/ar.py
    `_inputs`, cmp.py, sfu.py, lin.py, conv.py, pord.py, mm.py); [] for the other kinds. A layout
    may be a function (spec, bits) -> (shape, element strides) where the shape depends on the
    element size (conv weights)."""
    f, kind = r.fields, r.kind or ""
    shape = tuple(f.get(k, 0) for k in _KEYS["res0"][5])
    if kind.startswith("arith.") and kind not in ("arith.euIdxGen", "arith.npuIdxGen", "arith.copyMb"):
        one = kind in _ONE_OPERAND or f.get("tsk_opd_num", 2) < 2
        return [(name, shape, None, f"{name}_prec") for name in (("opd0",) if one else ("opd0", "opd1"))]
    if kind.startswith("cmp."):
        b_prec = "opd1_prec" if "opd1_prec" in f else "opd0_prec"      # the short class: opd0's
        return [("opd0", shape, None, "opd0_prec"), ("opd1", shape, None, b_prec),
                ("opd2", shape, "aligned", "opd2_prec"), ("opd3", shape, "aligned", "opd2_prec")]
    if kind.startswith("sfu."):
        return [("opd0", shape, "aligned", "opd0_prec")]
    if kind.startswith("conv."):           # the input (n, opd0_c, opd0_h, opd0_w) in its own layout (conv.py)
        ic = f.get("opd0_c", 0)
        return [("opd0", (shape[0], ic, f.get("opd0_h", 0), f.get("opd0_w", 0)), None, "opd0_prec"),
                ("opd1", shape, _conv_weights(ic, shape[1], f.get("opd1_h", 0) * f.get("opd1_w", 0)), "opd0_prec")]
    if kind in _WINDOWED:                  # the input (n, c, opd0_h, opd0_w), aligned (pord.py `_inputs`)
        out = [("opd0", (shape[0], shape[1], f.get("opd0_h", 0), f.get("opd0_w", 0)), "aligned", "opd0_prec")]
        if kind in ("pord.depthwise", "pord.depthwiserelu", "pord.avgpooling"):    # the kernel (pord.py `_kernel`)
            out.append(("opd1", (1, shape[1], f.get("opd1_h", 0), f.get("opd1_w", 0)), "compact", "opd0_prec"))
        return out
    if kind.startswith("lin."):
        per = (1, shape[1], 1, 1)
        out = [("opd0", shape, "aligned", "res0_prec"), ("opd1", per, "compact", "res0_prec")]
        return out + [("opd2", per, "compact", "res0_prec")] if kind == "lin.mac" else out
    if kind in ("mm.normal", "mm.wrq", "mm.wrqrelu"):
        return _mm_operands(f)
    if kind in ("mm2.nn", "mm2.nt", "mm2.tt"):
        mc, nw, kc, kw = f.get("res0_c", 0), f.get("res0_w", 0), f.get("opd1_c", 0), f.get("opd1_w", 0)
        rows, cols = {"mm2.nn": (mc, kc), "mm2.nt": (mc, kw), "mm2.tt": (kw, mc)}[kind]
        return [("opd0", (1, rows, 1, cols), "aligned", "opd0_prec"), ("opd1", (1, kc, 1, kw), "aligned", "opd0_prec"),
                ("res0", (1, mc, 1, nw), "aligned", "res0_prec")]
    return []


def _mm_operands(f):
    """mm.*'s matrices (mm.py `_mm`): opd0 the stored left matrix (opd0_n rows, (opd0_c - 1) *
    opd0_w + opd1_w columns, opd0_w to a channel), opd1 the right one (its rows the left's
    columns, or its rows when left_tran; res0_c * res0_w columns, res0_w to a channel) and res0
    (the product's rows, res0_w to a channel), all aligned."""
    c0, w0, lw, rows, rw = (f.get(k, 0) for k in ("opd0_c", "opd0_w", "opd1_w", "opd0_n", "res0_w"))
    n_cols = f.get("res0_c", 0) * rw
    if min(c0, w0, lw, rows, rw) < 1:
        return []
    cols = (c0 - 1) * w0 + lw
    k, out_rows = (rows, cols) if f.get("left_tran", 0) else (cols, rows)
    per_channel = -(-n_cols // rw)
    return [("opd0", (rows, -(-cols // w0), 1, w0), "aligned", "opd0_prec"),
            ("opd1", (k, per_channel, 1, rw), "aligned", "opd0_prec"),
            ("res0", (out_rows, per_channel, 1, rw), "aligned", "res0_prec")]


def _conv_weights(ic, oc, taps):
    """A conv's kernel layout (conv.py `weights`): (ceil(IC / q), OC, kh * kw, q) with q input
    channels side by side (q = ic_parallel_int8 * 8 / bits, 1 for 32-bit types)."""
    def layout(spec, bits):
        q = 1 if bits >= 32 else spec.param("ic_parallel_int8") * 8 // bits
        blocks = -(-ic // q)
        return (blocks, oc, taps, q), (q * taps, blocks * q * taps, q, 1)
    return layout


_WINDOWED = {"pord.depthwise", "pord.avgpooling", "pord.depthwiserelu", "pord.maxpooling"}
# the one-operand arith kinds read opd0 only (ar.py FIELDS' _ONE)
_ONE_OPERAND = {"arith.not", "arith.copy", "arith.abs", "arith.getFirstOne", "arith.getFirstZero", "arith.cast",
                "arith.clamp"}


def check_tiu(spec, label, engine, recs, out, finding):
    """Append the lane findings of a TIU stream: the first command whose result, and the first
    whose source operand, ends past its lane (module docstring), and the first tsbc.s_* static
    vector outside static memory."""
    local = next((m for m in spec.memory if m.name == "local"), None)
    if local is None or not local.lane_bytes:
        return
    lane = local.lane_bytes
    done = set()
    bm1684 = cv18xx = None
    for i, r in enumerate(recs):
        if "res0_b_str" in r.fields:                    # the bm1880 lineage's operand fields (CV18xx)
            cv18xx = cv18xx or _Cv18xx(spec)
            ends = cv18xx.ends(r)
        elif "opt_res0_prec" in r.fields:               # bm1684's operand fields (seed 003)
            bm1684 = bm1684 or _Bm1684(spec)
            ends = bm1684.ends(r)
        else:
            ends = None
        if ends is not None:
            for role, name, end in ends:
                if role not in done and end > lane:
                    done.add(role)
                    out.append(finding("lanes", label, engine, i, _past_lane(spec, r, name, end, lane)))
            continue
        if "res0_prec" not in r.fields:
            continue                                    # sys commands: other operand fields
        if r.kind in _STATIC_COUNT and "static" not in done:
            why = _static_why(spec, r)
            if why is not None:
                done.add("static")
                out.append(finding("address", label, engine, i, why))
        shape = tuple(r.fields.get(k, 0) for k in _KEYS["res0"][5])
        operands = _sources(r)
        if not any(op[0] == "res0" for op in operands):     # mm / mm2 give their result's matrix layout
            operands.insert(0, ("res0", shape, None, "res0_prec"))
        for name, shp, layout, prec in operands:
            role = "result" if name == "res0" else "source"
            if role in done:
                continue
            end = _operand_end(spec, r, name, shp, lane, layout, prec)
            if end is not None and end > lane:
                done.add(role)
                out.append(finding("lanes", label, engine, i, _past_lane(spec, r, name, end, lane)))
        if len(done) == 3:
            return                                      # one each per stream: the rest often follow from it


def _past_lane(spec, r, name, end, lane):
    return (f"{r.kind} {name}_addr 0x{r.fields[f'{name}_addr']:x} ends at lane byte {end}, past the {lane}-byte "
            f"lane of local memory ({spec.param('npu_num')} NPUs)")


class _Bm1684:
    """BM1684's TIU lane ends, laid out as its simulator lays them (bmk/sim/bm1684: the static
    views of elementwise.py's overlap check; 8- and 16-bit tensors in 4N / 2N words): the result
    of every kind whose result takes the res0 fields' shape and layout (conv, pord, arith,
    md_linear, lut: common.storer's default), an arith kind's tensor sources and the input of a conv
    or pooling."""

    RESULT_KINDS = ("conv", "pord.", "arith.", "md_linear.", "lut")

    def __init__(self, spec):
        from bmk.sim.bm1684 import common, elementwise
        self.m = common.Static(spec)
        self.view, self.eu = elementwise.static_view, elementwise.EU
        self.lane, self.npu = spec.space("local").lane_bytes, spec.param("npu_num")

    def ends(self, r):
        """[(role, operand, one past its last lane byte)] of a command."""
        kind, f = r.kind or "", r.fields
        if not kind.startswith(self.RESULT_KINDS):
            return []
        shape = tuple(f.get(f"res0_{d}", 0) for d in _DIMS)
        if min(shape) < 1:
            return []
        slots = [("result", "res0", shape)]
        eu = kind.split(".")[1] if kind.startswith("arith.") else None
        if eu in self.eu:
            slots += [("source", s, shape) for s in self.eu[eu][1] if not (eu == "taylor" and s == "opd1")]
        elif kind.startswith(("conv", "pord.")):     # the input, in its fields' layout (nn.py conv, `_pord`)
            ch = f.get("opd0_c", 0) if kind.startswith("conv") else shape[1]
            slots.append(("source", "opd0", (shape[0], ch, f.get("opd0_h", 0), f.get("opd0_w", 0))))
        out = []
        for role, slot, shp in slots:
            v = self.view(self.m, f, slot, shp) if min(shp) > 0 else None
            if v is not None:
                out.append((role, slot, layout.lane_extent(v, self.lane, self.npu)[1]))
        return out


class _Cv18xx:
    """CV18xx's (the bm1880 lineage's) TIU lane ends, laid out as its simulator lays them: an integer
    operand by bm1880/common.py `operand` (short_X_str: aligned, bias, weight or the explicit byte
    strides; a 16-bit one's high plane X_b_str bytes above the low one, but a matrix result's, whose
    planes are blocks of rows), a bf16 one (opd_typ 1) by cv181x/bf16.py (2-byte elements), each in
    its own fields' shape. Checked: every result; opd0 of the element-wise, lookup, convolution and
    pooling kinds (bm1880/tiu.py: `_ab`, copy, lut, conv_acc, depthwise_acc, `_pool_windows`); opd1
    of the binary element-wise kinds (not a constant) and of convolutions (the kernel)."""

    OPD0 = {"mul", "mac", "add", "sub", "max", "min", "and", "or", "xor", "ge", "copy", "lut", "conv",
            "depthwise", "max_pool", "avg_pool", "min_pool"}
    OPD1 = {"mul", "mac", "add", "sub", "max", "min", "and", "or", "xor", "ge", "conv", "depthwise"}

    def __init__(self, spec):
        from bmk.sim.bm1880 import common
        from bmk.sim.cv181x import as_bm1880, bf16
        self.common, self.as_bm1880, self.bf16 = common, as_bm1880, bf16
        self.m = _Machine(spec)
        self.lane, self.npu = spec.space("local").lane_bytes, spec.param("npu_num")

    def ends(self, r):
        """[(role, operand, one past its last lane byte)] of a command (module docstring)."""
        kind, f = r.kind or "", r.fields
        slots = [("result", "res0")]
        if kind in self.OPD0:
            slots.append(("source", "opd0"))
        if kind in self.OPD1 and not f.get("opt_opd1_const"):
            slots.append(("source", "opd1"))
        g = self.as_bm1880(self.m.chip, "tiu", f) if "opt_res0_seg" in f else f
        out = []
        for role, name in slots:
            end = self._end(r, f, g, name)
            if end is not None:
                out.append((role, name, end))
        return out

    def _end(self, r, f, g, name):
        shape = tuple(f.get(f"{name}_{d}", 0) for d in _DIMS)
        if min(shape) < 1:
            return None
        try:
            if f.get("opd_typ"):
                strides = tuple(2 * s for s in self.bf16.strides(self.m, f, name, shape))
                high, e = 0, 2
            else:
                op = self.common.operand(self.m, g, name)
                strides, e = op.strides, 1
                one_plane = op.int8 or (r.kind == "lut" and name == "opd0") or (
                    name == "res0" and (r.kind or "").startswith("matrix"))
                high = 0 if one_plane else op.b_str
        except (SimulationError, SpecError, KeyError):
            return None                                 # the run refuses it with its own message
        return high + _lane_end((shape, strides, e), f[f"{name}_addr"], self.lane, self.npu)


class _Machine:
    """What the bm1880 lineage's operand layouts read of a Simulator, from the chip alone."""

    def __init__(self, spec):
        self.chip, self.memo = spec, None
        self.npu_num, self.eu_num = spec.param("npu_num"), spec.param("eu_num")


# tsbc kinds that read a vector from static memory at opd0_addr, and the result field that counts
# its elements (bmk/sim/bm1684x/tsbc.py `_static_vector`)
_STATIC_COUNT = {"tsbc.s_bc": "res0_w", "tsbc.s_distribute": "res0_c"}


def _static_why(spec, r):
    """Why a tsbc.s_* command's static vector (res0_prec elements) leaves static memory, or None.
    opd0_addr is an offset in it where the chip says so (params.tiu_static_offset), else an address."""
    try:
        sp = spec.space("static")
    except SpecError:
        return None
    f = r.fields
    a = f.get("opd0_addr", 0) + (sp.base if spec.param("tiu_static_offset", 0) else 0)
    bits = "".join(ch for ch in spec.members("tiu", "res0_prec", r.cls).get(f.get("res0_prec", 0), "") if ch.isdigit())
    end = a + f.get(_STATIC_COUNT[r.kind], 0) * max(1, int(bits or 8) // 8)
    if sp.base <= a and end <= sp.base + sp.size:
        return None
    return (f"{r.kind} opd0_addr 0x{f.get('opd0_addr', 0):x}: its vector [0x{a:x}, 0x{end:x}) leaves the static "
            f"memory [0x{sp.base:x}, 0x{sp.base + sp.size:x})")


def _prec(spec, field, cls, code):
    """(bits, eu_num_<bits>bit) of a precision code, eu None when int4 or not known."""
    digits = "".join(ch for ch in spec.members("tiu", field, cls).get(code, "") if ch.isdigit())
    if not digits or int(digits) < 8:
        return 0, None
    return int(digits), spec.param(f"eu_num_{digits}bit", None)


def _operand_end(spec, r, name, shape, lane, layout=None, prec=None):
    """One past the last lane byte operand `name` (res0, opd0, ...) of `shape` takes on any NPU
    (the NPU with the most channel slots: the formula of `_lane_end`, what bmk.layout.lane_ranges
    gives for non-negative strides), or None when it is a constant or its layout or size is not known."""
    f = r.fields
    addr_k, const_k, prec_k, str_k, strides_k, _ = _KEYS[name]
    prec_k = prec or prec_k
    if addr_k not in f or f.get(const_k) or prec_k not in f:
        return None
    npu = spec.param("npu_num")
    addr = f[addr_k]
    if not all(shape) or addr >= npu * lane:
        return None                                     # no shape, or not local memory (static: bm1688 bit 23)
    if callable(layout):
        bits, eu = spec.derived(("lint prec", prec_k, r.cls, f[prec_k]), _prec, spec, prec_k, r.cls, f[prec_k])
        if eu is None:
            return None
        shape, strides = layout(spec, bits)
        if not all(shape):
            return None
        e = bits // 8
        return _lane_end((shape, tuple(s * e for s in strides), e), addr, lane, npu)
    if layout is None:
        layout = spec.members("tiu", str_k, r.cls).get(f.get(str_k, 0)) if str_k in f else "aligned"
    bits, eu = spec.derived(("lint prec", prec_k, r.cls, f[prec_k]), _prec, spec, prec_k, r.cls, f[prec_k])
    if eu is None:
        return None                                     # int4 (two to a byte) or an unknown precision
    e = bits // 8
    n, c, h, w = shape
    if layout in ("aligned", "compact"):
        cs = h * w if layout == "compact" else -(-(h * w) // eu) * eu
        stride = (-(-(addr // lane + c) // npu) * cs * e, cs * e, w * e, e)
    elif layout == "free":
        stride = tuple(f.get(k, 0) * e for k in strides_k)
    else:
        return None
    return _lane_end((shape, stride, e), addr, lane, npu)


_KEYS = {name: (f"{name}_addr", f"{name}_const", f"{name}_prec", f"{name}_str",
                tuple(f"{name}_{d}_str" for d in _DIMS), tuple(f"{name}_{d}" for d in _DIMS))
         for name in ("res0", "opd0", "opd1", "opd2", "opd3")}
