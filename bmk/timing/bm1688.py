"""BM1688 cost model: per-kind formulas from the chip's public parameters, checked against the
chip's measured cycles (tests/perf/bm1688_resnet50/iter0.profile, resnet50 int8 on two cores).

Parameters (bmk/specs/bm1688/chip.toml, from tools/facts/bm1688.json): npu_num lanes,
eu_bytes (a lane's EU row: eu_bytes * 8 / bits elements of a dtype a cycle), ic_parallel_int8
(input channels a conv reads at once), tiu_freq_mhz / gdma_freq_mhz (900 / 750, the vendor's
profile_helper bm1688_defs.py), gdma_bandwidth_mb_s (24 GB/s, the compiler's own estimate,
net_stat.sim). TIU cycles are 900 MHz cycles, GDMA cycles 750 MHz cycles.

TIU (res0 shape N, C, H, W; passes = ceil((first lane + C) / npu_num); bits: the widest operand):
- conv:  passes * N * H * W * kh * kw * ceil(IC / icp) * icp / macs, icp = ic_parallel_int8 * 8 /
  bits input channels, macs = eu_bytes * 8 * 8 / bits multiply-accumulates a lane a cycle (128
  at int8: the vendor's estimate of every conv of the profile is exactly this).
- pord (pooling, depthwise): passes * N * H * kh * (kw * ceil(W / eu) + POOL_ROW_CYCLES): a
  row of outputs is computed EU-wide, and every kernel row costs a few cycles more.
- mm: N * ceil(C / npu_num) * K * ceil(W / eu), K = opd0_c * opd0_w (the left matrix's row).
- everything else (arith, cmp, sfu, quant, ...): passes * N * H * W * max(bits read, bits
  written) / (eu_bytes * 8): the EU row moves eu_bytes bytes a cycle, operands read in turn
  (bits read: the sum over tensor operands; a constant operand reads nothing).
- system commands: SYS_CYCLES.
Each TIU command costs TIU_STARTUP more, and conv CONV_EFFICIENCY times its ideal.

GDMA: GDMA_STARTUP + bytes / rate + runs * RUN_CYCLES, bytes the global side's, runs its
contiguous pieces (dimensions merged while the strides allow), rate gdma_bandwidth_mb_s /
gdma_freq_mhz bytes a cycle (32), times STRIDED_EFFICIENCY when there are several pieces.
System commands (messages, end): SYS_CYCLES.

The fit (bench/bm1688_profile.py prints the figures): TIU_STARTUP, SYS_CYCLES, CONV_EFFICIENCY,
POOL_ROW_CYCLES read off single commands (in the comments); GDMA_STARTUP is the smallest
transfer's time; STRIDED_EFFICIENCY and RUN_CYCLES were chosen on a grid (efficiency 1.0 / 0.8
/ 0.7 / 0.6, 0 or 2 cycles a piece) as the pair that brings core 0's TIU span closest to the
measured one, where the TIU waits for strided activation loads and stores before each
cross-core barrier (0.6 and 2: span -1.7%, GDMA median error 5.3%; 1.0 and 0: -5.2%, 11.2%).
"""
from bmk.timing.basis import Basis

TIU_STARTUP = 12            # cycles before a TIU command's first result (arith.copy of 8 ideal cycles: 23 measured)
CONV_EFFICIENCY = 1.008     # measured / ideal of the 53 convolutions: median 1.006-1.009
POOL_ROW_CYCLES = 2         # per kernel row of an output row: max pool 3x3 4649, avg pool 7x7 3971 measured
SYS_CYCLES = 4              # every system command (sys_tr_wr, send/wait msg) measures 4 cycles
GDMA_STARTUP = 140          # a 64-byte matrix load measures 150 DMA cycles
RUN_CYCLES = 2              # per contiguous global piece (a DDR burst restarts)
STRIDED_EFFICIENCY = 0.6    # share of the bandwidth a transfer of several global pieces gets

BASIS = Basis(checked=True, text="BM1688 measured cycles (resnet50 int8, 2 cores, "
              "tests/perf/bm1688_resnet50): formulas from lanes, EU width, clocks and bandwidth, "
              "7 fitted constants")


def _bits(chip, f, names):
    """Bits of the widest of the operands `names` (their prec fields; the TIU prec enum: int8, fp16, ...)."""
    members = chip.members("tiu", "res0_prec")
    best = 8
    for n in names:
        v = f.get(f"{n}_prec")          # family names (tools/facts/families.json)
        if v is None:
            continue
        digits = "".join(ch for ch in members.get(v, "") if ch.isdigit())
        if digits:
            best = max(best, int(digits))
    return best


def _prec_bits(chip, f, n):
    return _bits(chip, f, (n,))


def _format_bytes(chip, code):
    """Bytes of a GDMA data format code (src_data_format): the codes are the TIU prec codes
    (tools/facts/bm1688.json params.gdma_value_format: 0 int8, 1 fp16, 2 fp32, 3 int16, ...)."""
    return max(1, _prec_bits(chip, {"res0_prec": code}, "res0") // 8)


class Model:
    """The BM1688 cost model over a ChipSpec (the module docstring)."""

    basis = BASIS

    def __init__(self, chip):
        p = chip.param
        self.chip = chip
        self.npu = p("npu_num")
        self.eu_bytes = p("eu_bytes")
        self.lane = p("lmem_size")
        self.icp8 = p("ic_parallel_int8")
        self.freq = {"tiu": p("tiu_freq_mhz"), "gdma": p("gdma_freq_mhz")}
        self.bpc = p("gdma_bandwidth_mb_s") / p("gdma_freq_mhz")      # bytes a DMA cycle
        self.sys_tiu = {"sys", "system", "system_tr_wr"}     # sys.*: the family name of system.*

    def cycles(self, engine, kind, f):
        if engine == "tiu":
            return self._tiu(kind, f)
        if engine == "gdma":
            return self._gdma(kind, f)
        return SYS_CYCLES

    # -- TIU --------------------------------------------------------------------------------------
    def _passes(self, f, c):
        start = f.get("res0_addr", 0) // self.lane % self.npu
        return -(-(start + c) // self.npu)

    def _tiu(self, kind, f):
        family = kind.split(".", 1)[0]
        if family in self.sys_tiu:
            return SYS_CYCLES
        chip = self.chip
        n = f.get("res0_n", 1) or 1
        c, h, w = f.get("res0_c", 1) or 1, f.get("res0_h", 1) or 1, f.get("res0_w", 1) or 1
        if family == "conv":
            bits = _bits(chip, f, ("opd0", "opd1"))
            icp = max(1, self.icp8 * 8 // bits)
            macs = self.eu_bytes * 64 // bits
            ic = f.get("opd0_c", 1) or 1
            work = self._passes(f, c) * n * h * w * f.get("opd1_h", 1) * f.get("opd1_w", 1) * -(-ic // icp) * icp
            return TIU_STARTUP + round(work / macs * CONV_EFFICIENCY)
        if family == "pord":
            eu = self.eu_bytes * 8 // _bits(chip, f, ("opd0", "res0"))
            kh, kw = f.get("opd1_h", 1) or 1, f.get("opd1_w", 1) or 1
            return TIU_STARTUP + self._passes(f, c) * n * h * kh * (kw * -(-w // eu) + POOL_ROW_CYCLES)
        if family == "mm":
            eu = self.eu_bytes * 8 // _bits(chip, f, ("opd0",))
            k = (f.get("opd0_c", 1) or 1) * (f.get("opd0_w", 1) or 1)
            return TIU_STARTUP + n * -(-c // self.npu) * k * -(-w // eu)
        operands = ("opd0", "opd1", "opd2")[:max(1, f.get("tsk_opd_num", 1))]
        read = sum(_prec_bits(chip, f, o) for o in operands if not f.get(f"{o}_const", 0))
        bits = max(read or 8, _prec_bits(chip, f, "res0"))
        return TIU_STARTUP + -(-(self._passes(f, c) * n * h * w * bits) // (self.eu_bytes * 8))

    # -- GDMA -------------------------------------------------------------------------------------
    def _gdma(self, kind, f):
        if kind.startswith("dma.sys"):
            return SYS_CYCLES
        nbytes, runs = self._moved(kind, f)
        rate = self.bpc * (STRIDED_EFFICIENCY if runs > 1 else 1.0)
        return round(GDMA_STARTUP + nbytes / rate + runs * RUN_CYCLES)

    def _address(self, f, side):
        """(8-bit part, 32-bit part) of an address: the vendor names them _h8/_l32 in tensor
        classes and _l8/_h32 in matrix ones; the 8-bit part is the high one either way."""
        hi = f.get(f"{side}_start_addr_h8", f.get(f"{side}_start_addr_l8", 0))
        lo = f.get(f"{side}_start_addr_l32", f.get(f"{side}_start_addr_h32", 0))
        return (hi << 32) | lo

    def _is_global(self, f, side):
        space = self.chip.space_of(self._address(f, side))
        return space is not None and space.name == "global"

    def _moved(self, kind, f):
        """(bytes, contiguous runs) on the global side of a DMA command."""
        e = _format_bytes(self.chip, f.get("src_data_format", 0))
        side = "src" if self._is_global(f, "src") or not self._is_global(f, "dst") else "dst"
        if kind.startswith("dma.matrix"):
            if side == "src":
                rows, cols, stride = f.get("src_hsize", 1), f.get("src_wsize", 1), f.get("src_hstride", 0)
            else:
                rows, cols, stride = f.get("dst_hsize", 1), f.get("dst_wsize", 1), f.get("dst_hstride", 0)
            rows, cols = rows or 1, cols or 1
            return rows * cols * e, 1 if stride == cols else rows
        sizes = [f.get(f"src_{d}size", 0) for d in "nchw"]
        if side == "dst" and any(f.get(f"dst_{d}size", 0) for d in "nchw"):
            sizes = [f.get(f"dst_{d}size", 0) or s for d, s in zip("nchw", sizes)]
        strides = [f.get(f"{side}_{d}stride", 0) for d in "nchw"]
        total = 1
        for s in sizes:
            total *= max(s, 1)
        run, k = 1, 3
        while k >= 0 and strides[k] == run:
            run *= max(sizes[k], 1)
            k -= 1
        return total * e, total // run
