"""`bmk lint`'s address rules (issue 33 item 3): every command's device addresses inside the
model's regions, every local operand inside local memory's lanes. Called by bmk/models/lint.py
with a subnet's decoded streams.

- address: a DMA operand (each composed `*_addr` row of its class in the chip's spec: src, dst,
  index, mask, ...) that the memory map (specs [memory.*]) puts in global memory must start inside
  one of its stage's regions, and a dma.tensor operand must end inside one (its last byte: start +
  element bytes * (sum of (size - 1) * stride over n, c, h, w + 1)). The regions: the coefficients
  (CoeffMem), the neuron memory (NeuronMem) and each io tensor's bytes (io tensors may sit apart
  from the neuron memory: tpu-mlir's io_alone). On bm1688 / bm1690 a global address carries tag
  bits that select its region (isa-facts bm1688.json params.address_encoding: bit 39, tag in bits
  36..38, 1 weight, 2 activation, 3..7 IO; tpu-mlir python/debugger/target_1688/memmap.py resolves
  the tag to the region's base); the model's own region addresses carry the same tags (a BM1688
  neuron memory at 0xa000000000 is tag 2), so comparing whole addresses against the regions is the
  tag-aware comparison and no tag layout is spelled here. A stage without a coefficient memory (a
  copy whose weights were stripped) is not checked: its weight addresses point at a region the
  file no longer records. The finding names the field, the address and the region it left (the
  nearest one). Not checked: cv18xx TDMA addresses (an offset from the base register
  `X_base_reg_sel` selects, set by the runtime: cvimodel-format.md), opaque engines (bm1690 HAU),
  the end of a non-tensor DMA (matrix, general, gather ...).
- lanes: a DMA operand in local memory (the spec's `local` space, `lane_bytes` per NPU,
  `npu_num` NPUs) of a dma.tensor kind must end inside its lane: start NPU s = offset //
  lane_bytes, the channels c take ceil((s + c) / npu_num) channel slots (bmk/lmem.py's
  placement), the last byte of a lane is lane offset + element bytes * ((n - 1) * n stride +
  (slots - 1) * c stride + (h - 1) * h stride + (w - 1) * w stride + 1); strides count
  elements of src_data_format (bm1684x-lowering.md "GDMA"; the format codes are the TIU
  precision codes). A TIU command's result (res0: res0_addr, res0_n/c/h/w, res0_prec, layout
  res0_str: aligned or compact strides from eu_num_<bits>bit as bmk/sim/bm1684x/operands.py
  lays them out, free strides from res0_*_str) must end inside its lane (bmk.layout.lane_ranges);
  the first such command of a stream is reported. Not checked: TIU source operands (opd0..3:
  their shapes depend on each kind), int4 results, other layouts (offset, T4, T5), bm1684 and
  cv18xx TIU fields (no res0_prec), static-memory addresses (bm1688: bit 23).
"""
import attrs

from bmk.errors import SpecError
from bmk.util import printable

_DIMS = "nchw"


@attrs.frozen
class _Region:
    name: str
    start: int
    end: int


def stage_regions(st):
    """[_Region] of a stage's device memory, or None when its coefficient memory is not recorded."""
    if st.coeff is None or st.coeff.address is None:
        return None
    out = [_Region("coefficients", st.coeff.address, st.coeff.address + (st.coeff.size or 0))]
    if st.neuron is not None and st.neuron.address is not None:
        out.append(_Region("neuron memory", st.neuron.address, st.neuron.address + (st.neuron.size or 0)))
    for role, ts in (("input", st.inputs), ("output", st.outputs)):
        for t in ts:
            if t.address is not None and t.size:
                out.append(_Region(f"{role} {printable(t.name)!r}", t.address, t.address + t.size))
    return out


def _nearest(regions, a):
    return min(regions, key=lambda r: r.start - a if a < r.start else a - r.end + 1)


def _elem_bytes(spec, code):
    """Bytes of a DMA data format code: the TIU precision enum's member (int8, fp16, ...) bits / 8."""
    def members():
        try:
            return spec.members("tiu", "res0_prec")
        except SpecError:                           # a chip without that enum: bytes as bytes
            return {}
    digits = "".join(ch for ch in spec.derived(("lint elem bytes",), members).get(code, "") if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 1


def check_stream(spec, label, engine, recs, regions, out, finding):
    """Append the address and lane findings of one decoded stream (module docstring)."""
    local = next((m for m in spec.memory if m.name == "local"), None)
    lane = local.lane_bytes if local is not None else None
    npu = spec.param("npu_num") if local is not None else None
    if spec.engine(engine).opaque:
        return                                          # kept as bytes: no fields to read
    reported = set()                                    # one finding per (rule, operand) per stream
    for i, r in enumerate(recs):
        fmt = spec.fmt(r.engine, r.cls)
        f = r.fields
        for name, _ in fmt.composed:
            if not name.endswith("_addr"):
                continue
            if name == "src_addr" and f.get("fill_constant_en"):
                continue                                # the source field holds the constant
            side = name[:-len("_addr")]
            if f"{side}_base_reg_sel" in fmt.by_name:
                continue                                # cv18xx: an offset from a base register the runtime sets
            if not any(p in f for p in dict(fmt.composed)[name]):
                continue
            a = fmt.compose(name, f)
            space = spec.space_of(a)
            if space is None:
                continue
            if space.name == "global" and regions is not None and ("address", name) not in reported:
                inside = [rg for rg in regions if rg.start <= a < rg.end]
                if not inside:
                    rg = _nearest(regions, a)
                    reported.add(("address", name))
                    out.append(finding("address", label, engine, i,
                                       f"{r.kind} {name} 0x{a:x} leaves the {rg.name} [0x{rg.start:x}, 0x{rg.end:x})"))
                elif r.kind.startswith("dma.tensor"):
                    end = _global_end(spec, f, side, a)
                    if end is not None and not any(end <= rg.end for rg in inside):
                        rg = max(inside, key=lambda rg: rg.end)
                        reported.add(("address", name))
                        out.append(finding("address", label, engine, i,
                                           f"{r.kind} {name} 0x{a:x} runs to 0x{end:x}, past the end of the "
                                           f"{rg.name} [0x{rg.start:x}, 0x{rg.end:x})"))
            elif space.name == "local" and lane and r.kind.startswith("dma.tensor") \
                    and ("lanes", name) not in reported:
                end = _lane_end(spec, f, side, a - space.base, lane, npu)
                if end is not None and end > lane:
                    reported.add(("lanes", name))
                    out.append(finding("lanes", label, engine, i,
                                       f"{r.kind} {name} 0x{a:x} ends at lane byte {end}, past the {lane}-byte "
                                       f"lane of local memory ({npu} NPUs)"))


def _shape(f, side):
    """(sizes, strides) of a dma.tensor side in n, c, h, w order, or None when the fields lack them."""
    sizes = [f.get(f"{side}_{d}size") for d in _DIMS]
    if side == "dst" and (not any(sizes) or f.get("nchw_copy")):
        sizes = [f.get(f"src_{d}size") for d in _DIMS]     # the destination takes the source's shape
    strides = [f.get(f"{side}_{d}stride") for d in _DIMS]
    if None in sizes or None in strides or not all(sizes):
        return None
    return sizes, strides


def _global_end(spec, f, side, a):
    """One past the last byte a global dma.tensor operand reaches (strides in elements), or None."""
    got = _shape(f, side)
    if got is None:
        return None
    sizes, strides = got
    return a + _elem_bytes(spec, f.get("src_data_format", 0)) * (sum((s - 1) * t for s, t in zip(sizes, strides)) + 1)


def _lane_end(spec, f, side, offset, lane, npu):
    """One past the last lane byte a local DMA operand takes, or None when its shape is not in the fields."""
    got = _shape(f, side)
    if got is None:
        return None
    sizes, strides = got
    start_npu, at = divmod(offset, lane)
    n, c, h, w = sizes
    slots = -(-(start_npu % npu + c) // npu)
    span = (n - 1) * strides[0] + (slots - 1) * strides[1] + (h - 1) * strides[2] + (w - 1) * strides[3] + 1
    return at + _elem_bytes(spec, f.get("src_data_format", 0)) * span


def check_tiu(spec, label, engine, recs, out, finding):
    """Append the lane finding of a TIU stream: the first command whose res0 (its result) ends past
    its lane (module docstring)."""
    local = next((m for m in spec.memory if m.name == "local"), None)
    if local is None or not local.lane_bytes:
        return
    for i, r in enumerate(recs):
        end = _res0_end(spec, r, local.lane_bytes)
        if end is not None and end > local.lane_bytes:
            out.append(finding("lanes", label, engine, i,
                               f"{r.kind} res0_addr 0x{r.fields['res0_addr']:x} ends at lane byte {end}, past the "
                               f"{local.lane_bytes}-byte lane of local memory ({spec.param('npu_num')} NPUs)"))
            return                                      # one per stream: the rest often follow from it


def _res0_end(spec, r, lane):
    """One past the last lane byte res0 takes on any NPU, or None when its layout or size is not known."""
    from bmk.layout import lane_ranges
    f = r.fields
    if "res0_addr" not in f or "res0_prec" not in f:
        return None                                     # bm1684, cv18xx: other operand fields
    shape = tuple(f.get(f"res0_{d}", 0) for d in _DIMS)
    npu = spec.param("npu_num")
    if not all(shape) or f["res0_addr"] >= npu * lane:
        return None                                     # no shape, or not local memory (static: bm1688 bit 23)
    layout = spec.members("tiu", "res0_str", r.cls).get(f.get("res0_str", 0)) if "res0_str" in f else "aligned"
    bits = "".join(ch for ch in spec.members("tiu", "res0_prec", r.cls).get(f.get("res0_prec", 0), "")
                   if ch.isdigit())
    try:
        eu = spec.param(f"eu_num_{bits}bit")
    except (SpecError, KeyError):
        return None
    if not bits or int(bits) < 8:
        return None                                     # int4: two to a byte
    start, offset = divmod(f["res0_addr"], lane)
    n, c, h, w = shape
    if layout in ("aligned", "compact"):
        cs = h * w if layout == "compact" else -(-(h * w) // eu) * eu
        stride = (-(-(start + c) // npu) * cs, cs, w, 1)
    elif layout == "free":
        stride = tuple(f.get(f"res0_{d}_str", 0) for d in _DIMS)
    else:
        return None
    ranges = [x for x in lane_ranges(npu, start, offset, shape, stride, int(bits) // 8) if x]
    return max((hi for _, hi in ranges), default=None)
