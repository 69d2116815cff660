"""The TPU1686 family's float conv, mm2 and rsqrt on BM1688 and CV184X (bmk/sim/bm1688/conv.py,
mm.py; bmk/sim/bm1684x/sfu.py), as the vendor's MIX (int8 + bf16) tdl_models builds for CV184X
set them: the kernel / right matrix in the input's precision (opd1_prec = opd0_prec), a float
mm2's fp32 bias and relu, an rsqrt's opd1_n. Each against a numpy reference."""
import pathlib

import numpy as np
import pytest

import bmk
from bmk import numerics
from bmk.encoders import Record
from bmk.errors import SimulationError
from bmk.isa import load_chip

CHIPS = ("bm1688", "cv184x")


def rec(chip, cls, kind, **fields):
    c = chip.engine("tiu").cls(cls)
    f = {**c.defaults, **dict(c.keys[0]), **dict(c.instruction(kind).match)}
    assert not set(fields) - set(c.by_name)
    f.update(fields)
    return Record("tiu", cls, kind, f)


def prec(chip, name):
    return chip.code("tiu", "res0_prec", name)


def bf16(values):
    """bf16 bit patterns of values exactly representable in bf16."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    assert not np.any(bits & 0xFFFF)
    return (bits >> 16).astype(np.uint16)


def from_bf16(raw):
    return numerics.bf16_to_fp32(np.frombuffer(raw, np.uint16))


def put(sim, chip, lane, offset, data):
    sim.lmem_write(lane * chip.param("lmem_size") + offset, np.ascontiguousarray(data).tobytes())


@pytest.mark.parametrize("name", CHIPS)
def test_a_bf16_conv_reads_its_kernel_in_the_inputs_precision(name):
    """A 1x1 bf16 conv, 2 -> 1 channel, fp32 bias: y = w0 x0 + w1 x1 + b (exact here, so the
    rounding into bf16 changes nothing). Kernel layout (bm1684x/conv.py): cube = ic_parallel_int8
    * 8 / 16 bf16 values per tap, IC padded to it."""
    chip = load_chip(name)
    x = np.array([[1.5, -2.0, 0.25, 3.0], [0.5, 1.0, -1.0, 2.0]], np.float32)
    cube = chip.param("ic_parallel_int8") // 2
    w = np.zeros(cube, np.float32)
    w[:2] = [0.75, -1.25]
    sim = bmk.Simulator(name)
    for c in range(2):
        put(sim, chip, c, 0x1000, bf16(x[c]))
    put(sim, chip, 0, 0x2000, bf16(w))
    put(sim, chip, 0, 0x3000, np.array([0.125], np.float32))
    b = prec(chip, "bf16")
    sim.run([rec(chip, "sCONV", "conv.normal", opd0_prec=b, opd1_prec=b, res0_prec=b, res0_n=1, res0_c=1, res0_h=1,
                 res0_w=4, opd0_c=2, opd0_h=1, opd0_w=4, opd1_h=1, opd1_w=1, res_op_y_str=1, res_op_x_str=1,
                 opd0_addr=0x1000, opd1_addr=0x2000, opd2_addr=0x3000, res0_addr=0x4000, opd0_sign=1, opd1_sign=1,
                 opd2_sign=1)])
    want = 0.75 * x[0] - 1.25 * x[1] + 0.125
    np.testing.assert_array_equal(from_bf16(sim.lmem_read(0x4000, 8)), want)


def test_a_conv_kernel_of_another_precision_is_refused_by_name():
    chip = load_chip("cv184x")
    r = rec(chip, "sCONV", "conv.normal", opd0_prec=prec(chip, "bf16"), opd1_prec=prec(chip, "int8"),
            res0_prec=prec(chip, "bf16"), res0_n=1, res0_c=1, res0_h=1, res0_w=1, opd0_c=1, opd0_h=1, opd0_w=1,
            opd1_h=1, opd1_w=1)
    with pytest.raises(SimulationError, match="conv.normal: opd1_prec must be opd0_prec"):
        bmk.Simulator("cv184x").run([r])


@pytest.mark.parametrize("name", CHIPS)
@pytest.mark.parametrize("relu,bias_const", [(0, False), (1, False), (1, True)])
def test_a_bf16_mm2_adds_its_fp32_bias_per_column_then_relu(name, relu, bias_const):
    """mm2.nn in bf16 (opparam: R of L's type, opd2 an fp32 bias per output column, do_relu):
    (2, 3) @ (3, 4) + bias, clamped at 0 with opt_relu. Matrix2 layout: row r on lane r, its
    columns along w; the bias row (1, npu_num, 1, res0_w) on lane 0 (every NPU holds a copy)."""
    chip = load_chip(name)
    lhs = np.array([[1, -2, 0.5], [3, 0.25, -1]], np.float32)
    rhs = np.array([[1, 2, -1, 0.5], [-0.5, 1, 2, -2], [4, -1, 0.25, 1]], np.float32)
    bias = np.array([0.5, -8, 1, -0.25], np.float32)
    sim = bmk.Simulator(name)
    for r in range(2):
        put(sim, chip, r, 0x1000, bf16(lhs[r]))
    for k in range(3):
        put(sim, chip, k, 0x2000, bf16(rhs[k]))
    for lane in range(chip.param("npu_num")):
        put(sim, chip, lane, 0x3000, bias)
    b = prec(chip, "bf16")
    opd2 = dict(opd2_const=1, opd2_addr=int(np.float32(-0.75).view(np.uint32))) if bias_const else \
        dict(opd2_addr=0x3000)
    sim.run([rec(chip, "sMM2", "mm2.nn", opd0_prec=b, opd1_prec=b, res0_prec=b, res0_c=2, res0_w=4, opd1_c=3,
                 opd1_w=4, opd0_addr=0x1000, opd1_addr=0x2000, res0_addr=0x4000, relu=relu, **opd2)])
    want = lhs.astype(np.float64) @ rhs + (-0.75 if bias_const else bias)
    if relu:
        want = np.maximum(want, 0)
    lane = chip.param("lmem_size")
    got = np.stack([from_bf16(sim.lmem_read(r * lane + 0x4000, 8)) for r in range(2)])
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_an_integer_mm2_with_relu_is_refused_by_name():
    chip = load_chip("bm1688")
    r = rec(chip, "sMM2", "mm2.nn", res0_c=1, res0_w=1, opd1_c=1, opd1_w=1, relu=1)
    with pytest.raises(SimulationError, match="mm2.nn: relu must be 0 with integer data"):
        bmk.Simulator("bm1688").run([r])


def test_an_rsqrt_takes_any_table_length():
    """sfu.rsqrt reads no table (opparam: one operand): CV184X's bf16 rsqrts set opd1_n 3. Its
    three bf16 Newton steps land within a step or two of the root (the cmodel's 0.498 for 4)."""
    chip = load_chip("cv184x")
    x = np.array([4, 0.25, 16, 1], np.float32)
    sim = bmk.Simulator("cv184x")
    put(sim, chip, 0, 0x100, bf16(x))
    b = prec(chip, "bf16")
    sim.run([rec(chip, "sSFU", "sfu.rsqrt", opd0_prec=b, res0_prec=b, res0_n=1, res0_c=1, res0_h=1, res0_w=4,
                 opd1_n=3, opd2_n_str=2, opd0_addr=0x100, res0_addr=0x200)])
    np.testing.assert_allclose(from_bf16(sim.lmem_read(0x200, 8)), 1 / np.sqrt(x), rtol=0.01)


VENDOR_EXP = pathlib.Path(__file__).parent / "cv184x_softmax_exp_vendor.npz"


def test_the_softmax_exponential_matches_the_vendors_cv184x_cmodel_bit_for_bit():
    """The first softmax of the CV184X topformer_seg_person_face_vehicle build, 8 channels of 240
    bf16 values, as the vendor's CV184X cmodel (tpu-mlir 1.30.2's libcmodel_cv184x, run on a photo)
    left them (bf16 bits): `scaled` = x * log2(e), `floor` = its bf16 -> bf16 cast with mode 3
    (down), `series_x` = the series' argument, `coeff` = the 7 coefficients each NPU holds,
    `series` = its sfu.taylor_4x (opd2_n_str 2). The cast rounds to an integral value; the series
    rounds each Horner product and sum to bf16."""
    ref = np.load(VENDOR_EXP)
    chip = load_chip("cv184x")
    b = prec(chip, "bf16")
    sim = bmk.Simulator("cv184x")
    for c in range(8):
        put(sim, chip, c, 0x1000, ref["scaled"][c])
        put(sim, chip, c, 0x2000, ref["series_x"][c])
        put(sim, chip, c, 0x3000, ref["coeff"][c])
    shape = dict(res0_n=1, res0_c=8, res0_h=240, res0_w=1)
    sim.run([rec(chip, "sAR", "arith.cast", tsk_opd_num=1, res0_prec=b, opd0_prec=b, opd0_sign=1, opd2_sign=1,
                 opd2_n_str=3, opd0_addr=0x1000, res0_addr=0x5000, **shape),
             rec(chip, "sSFU", "sfu.taylor_4x", res0_prec=b, opd0_prec=b, opd2_n_str=2, opd1_n=7, opd0_addr=0x2000,
                 opd1_addr=0x3000, res0_addr=0x6000, **shape)])
    lane = chip.param("lmem_size")
    for c in range(8):
        floor = np.frombuffer(sim.lmem_read(c * lane + 0x5000, 480), np.uint16)
        series = np.frombuffer(sim.lmem_read(c * lane + 0x6000, 480), np.uint16)
        np.testing.assert_array_equal(floor, ref["floor"][c])
        np.testing.assert_array_equal(series, ref["series"][c])


@pytest.mark.parametrize("name", CHIPS)
@pytest.mark.parametrize("half", ["bf16", "fp16"])
def test_a_half_precision_series_rounds_every_horner_step_to_its_type(name, half):
    """sfu.taylor in bf16 / fp16: acc = round(round(acc * x) + c_k), to nearest even in the
    operand's type (numpy: float32 steps rounded to the type)."""
    chip = load_chip(name)
    rng = np.random.default_rng(7)
    n = 7
    if half == "bf16":
        def rnd(v):
            bits = np.asarray(v, np.float32).view(np.uint32).astype(np.int64)
            return (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
        x = rnd(rng.uniform(-0.7, 0.7, 64))
        coeff = rnd([1 / np.prod(range(1, k + 1)) for k in range(n)])
        raw = lambda v: bf16(v)
        back = from_bf16
    else:
        def rnd(v):
            return np.asarray(v, np.float32).astype(np.float16).astype(np.float32)
        x = rnd(rng.uniform(-0.7, 0.7, 64))
        coeff = rnd([1 / np.prod(range(1, k + 1)) for k in range(n)])
        raw = lambda v: np.asarray(v, np.float16)
        back = lambda r: np.frombuffer(r, np.float16).astype(np.float32)
    sim = bmk.Simulator(name)
    p = prec(chip, half)
    put(sim, chip, 0, 0x1000, raw(x))
    put(sim, chip, 0, 0x2000, raw(coeff))
    sim.run([rec(chip, "sSFU", "sfu.taylor_4x", res0_prec=p, opd0_prec=p, opd1_n=n, opd0_addr=0x1000,
                 opd1_addr=0x2000, res0_addr=0x3000, res0_n=1, res0_c=1, res0_h=1, res0_w=64)])
    acc = np.full(64, coeff[-1], np.float32)
    for k in range(n - 2, -1, -1):
        acc = rnd(rnd(acc * x) + coeff[k])
    np.testing.assert_array_equal(back(sim.lmem_read(0x3000, 128)), acc)


VENDOR_SUMS = pathlib.Path(__file__).parent / "cv184x_softmax_sums_vendor.npz"


@pytest.mark.parametrize("rows", [30, 50])
def test_a_bf16_window_sum_matches_the_vendors_cv184x_cmodel_bit_for_bit(rows):
    """The softmax sums of two CV184X tdl_models builds as the vendor's cmodel left them (bf16
    bits): pord.avgpooling of (1, 8, rows, 8) with a (rows, 1) kernel of the constant 1.0 into
    (1, 8, 1, 8) (topformer_seg_person_face_vehicle: 30 rows, yolov10n: 50). The window is summed
    in two partial sums, of the even and the odd rows, each addition rounded to bf16, then the
    two added (bmk/sim/bm1688/pord.py); one exact sum rounded once matches half of these."""
    ref = np.load(VENDOR_SUMS)
    x, want = ref[f"x{rows}"], ref[f"sum{rows}"]
    chip = load_chip("cv184x")
    b = prec(chip, "bf16")
    sim = bmk.Simulator("cv184x")
    for c in range(8):
        put(sim, chip, c, 0x1000, x[c])
    sim.run([rec(chip, "sPorD", "pord.avgpooling", opd0_prec=b, res0_prec=b, res0_n=1, res0_c=8, res0_h=1, res0_w=8,
                 opd0_h=rows, opd0_w=8, opd1_h=rows, opd1_w=1, res_op_x_str=1, res_op_y_str=1, opd1_const=1,
                 opd1_addr=0x3F80, opd3_const=1, opd0_addr=0x1000, res0_addr=0x4000)])
    lane = chip.param("lmem_size")
    got = np.stack([np.frombuffer(sim.lmem_read(c * lane + 0x4000, 16), np.uint16) for c in range(8)])
    np.testing.assert_array_equal(got, want)


VENDOR_DIV = pathlib.Path(__file__).parent / "cv184x_div_vendor.npz"


@pytest.mark.parametrize("case", ["one", "ab"])
def test_a_bf16_division_matches_the_vendors_cv184x_cmodel_bit_for_bit(case):
    """arith.div of bf16 values with opd2_n_str 2, as the vendor's CV184X cmodel gave them from a
    one-command bmodel (8 channels x 256; bf16 bits): `one` the constant 1.0 over b in [1, 128)
    (the softmaxes' reciprocal), `ab` a over b, signed, zeros and extremes among them. The
    reciprocal is rsqrt(|b|) squared, three Newton steps from 0x5F37 - (bits >> 1), every step
    rounded to bf16 (bmk/sim/bm1688/div.py); a correctly rounded quotient matches under half."""
    ref = np.load(VENDOR_DIV)
    chip = load_chip("cv184x")
    bf = prec(chip, "bf16")
    b, want = (ref["one_b"], ref["one_q"]) if case == "one" else (ref["b"], ref["q"])
    sim = bmk.Simulator("cv184x")
    for c in range(8):
        put(sim, chip, c, 0x1000, b[c * 256:(c + 1) * 256])
        if case == "ab":
            put(sim, chip, c, 0x3000, ref["a"][c * 256:(c + 1) * 256])
    operand0 = dict(opd0_const=1, opd0_addr=0x3F80) if case == "one" else dict(opd0_addr=0x3000)
    sim.run([rec(chip, "sAR", "arith.div", tsk_opd_num=2, res0_prec=bf, opd0_prec=bf, opd1_prec=bf, opd2_n_str=2,
                 res0_n=1, res0_c=8, res0_h=1, res0_w=256, opd1_addr=0x1000, res0_addr=0x2000, **operand0)])
    lane = chip.param("lmem_size")
    got = np.concatenate([np.frombuffer(sim.lmem_read(c * lane + 0x2000, 512), np.uint16) for c in range(8)])
    np.testing.assert_array_equal(got, want)


VENDOR_CONV = pathlib.Path(__file__).parent / "cv184x_conv_vendor.npz"


def test_a_bf16_convolution_matches_the_vendors_cv184x_cmodel_bit_for_bit():
    """The CV184X license plate reader's 3x1 bf16 conv (32 -> 32 channels, 11 x 90 -> 10 x 90,
    one padded row on top, fp32 bias) on random bf16 inputs of our choosing, as the vendor's
    cmodel gave it from a one-command bmodel: each lane's bytes before (input at 0, kernel at
    0x7000, bias at 0xec00) and its result at 0x2000 (32 channels, 4 a lane, 1,808 bytes apart).
    The sums start from the bias and add each cube of 8 input channels' products per tap in fp32
    (bmk/sim/bm1688/conv.py); one exact sum rounded once misses some of them."""
    ref = np.load(VENDOR_CONV)
    chip = load_chip("cv184x")
    sim = bmk.Simulator("cv184x")
    lane = chip.param("lmem_size")
    for key in ("lanes_0000", "lanes_7000", "lanes_ec00"):
        start = int(key.split("_")[1], 16)
        for c in range(8):
            sim.lmem_write(c * lane + start, ref[key][c].tobytes())
    b = prec(chip, "bf16")
    sim.run([rec(chip, "sCONV", "conv.normal", opd0_prec=b, opd1_prec=b, res0_prec=b, res0_n=1, res0_c=32, res0_h=10,
                 res0_w=90, opd0_c=32, opd0_h=11, opd0_w=90, opd1_h=3, opd1_w=1, opd0_up_pad=1, res_op_x_str=1,
                 res_op_y_str=1, opd3_const=1, opd0_addr=0, opd1_addr=0x7100, opd2_addr=0xEC40, res0_addr=0x2000)])
    want = ref["out_2000"].view(np.uint16)
    for c in range(8):
        got = np.frombuffer(sim.lmem_read(c * lane + 0x2000, 0x2000), np.uint16)
        for slot in range(4):
            at = slot * 1808 // 2
            np.testing.assert_array_equal(got[at:at + 900], want[c, at:at + 900])


VENDOR_RSQRT = pathlib.Path(__file__).parent / "cv184x_rsqrt_vendor.npz"


def test_a_bf16_reciprocal_square_root_matches_the_vendors_cv184x_cmodel_bit_for_bit():
    """sfu.rsqrt of 2,048 bf16 values in [1e-3, 1e4] with opd2_n_str 2 (a layer norm's of the
    CV184X lane detector), as the vendor's CV184X cmodel gave them from a one-command bmodel:
    three Newton steps from 0x5F37 - (bits >> 1), each rounded to bf16 (bmk/sim/bm1688/rsqrt.py);
    a correctly rounded root matches three in four. A second set: powers of 4, 0 and a subnormal
    (+inf), extremes, and 2,036 values in [1, 4]."""
    ref = np.load(VENDOR_RSQRT)
    for xs, ys in ((ref["x"], ref["y"]), (ref["x2"], ref["y2"])):
        _rsqrt_case(xs, ys)


def _rsqrt_case(x, y):
    chip = load_chip("cv184x")
    b = prec(chip, "bf16")
    sim = bmk.Simulator("cv184x")
    for c in range(8):
        put(sim, chip, c, 0x1000, x[c * 256:(c + 1) * 256])
    sim.run([rec(chip, "sSFU", "sfu.rsqrt", res0_prec=b, opd0_prec=b, opd2_n_str=2, opd1_n=3, res0_n=1, res0_c=8,
                 res0_h=1, res0_w=256, opd0_addr=0x1000, res0_addr=0x2000)])
    lane = chip.param("lmem_size")
    got = np.concatenate([np.frombuffer(sim.lmem_read(c * lane + 0x2000, 512), np.uint16) for c in range(8)])
    np.testing.assert_array_equal(got, y)


VENDOR_MM2 = pathlib.Path(__file__).parent / "cv184x_mm2_vendor.npz"


def test_a_bf16_matmul_matches_the_vendors_cv184x_cmodel_bit_for_bit():
    """The CV184X lane detector's bf16 mm2.nn (232 x 16 @ 16 x 240, bias the constant 0) on random
    operands of our choosing, as the vendor's CV184X cmodel gave it from a one-command bmodel:
    each lane's L (at 0x1000) and R (at 0x3a0) bytes, and two windows of its result (rows from
    0x9000) holding four values one exact sum rounded once gets a step wrong. The products are
    added in fp32 a cube of 8 of the inner dimension at a time (bmk/sim/bm1688/mm.py)."""
    ref = np.load(VENDOR_MM2)
    chip = load_chip("cv184x")
    sim = bmk.Simulator("cv184x")
    lane = chip.param("lmem_size")
    for key in ("lanes_1000", "lanes_03a0"):
        start = int(key.split("_")[1], 16)
        for c in range(8):
            sim.lmem_write(c * lane + start, ref[key][c].tobytes())
    b = prec(chip, "bf16")
    sim.run([rec(chip, "sMM2", "mm2.nn", opd0_prec=b, opd1_prec=b, res0_prec=b, opd2_const=1, res0_c=232, res0_w=240,
                 opd1_c=16, opd1_w=240, opd0_addr=0x1000, opd1_addr=0x3A0, res0_addr=0x9000)])
    for key in ("out_9200", "out_b300"):
        start = int(key.split("_")[1], 16)
        got = np.stack([np.frombuffer(sim.lmem_read(c * lane + start, 0x100), np.uint16) for c in range(8)])
        np.testing.assert_array_equal(got, ref[key].view(np.uint16))
