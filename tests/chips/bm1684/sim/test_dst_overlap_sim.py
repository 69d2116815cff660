"""Issue 32.14 in the bm1684 simulator: an element-wise command (arith.*, md_scalar.*,
md_sfu.*) whose res0 partly overlaps a tensor operand is refused before any instruction runs
(the static check, elementwise.check_overlap, the API's rule layout.partial_overlap), naming
the instruction, the fields and their values; in place and apart it computes numpy's numbers.
No shared bm1684 model has such a command (test_real_networks runs them all to their end)."""
import numpy as np
import pytest

import bmk
from bmk.errors import SimulationError
from tests.chips.bm1684.helpers import get, put
from tests.chips.bm1684.sim.test_arith_sim import CHIP, command, fp32_command, run
from bmk.bm1684.lowering import common as lo

SHAPE = (2, 70, 3, 5)         # 70 channels from NPU 0: 2 batches of two 128-byte slots, the last 0x1bc bytes used
A, B, D = 0x1000, 0x2000, 0x3000
LOCAL = CHIP.space("local").base
rng = np.random.default_rng(3214)
X = rng.standard_normal(SHAPE).astype(np.float32)
Y = rng.standard_normal(SHAPE).astype(np.float32)


def compute(kind, res, a, b):
    sim = bmk.Simulator("bm1684")
    put(sim, A, X)
    put(sim, B, Y)
    before = sim.lmem.data.copy()
    try:
        run([fp32_command(kind, res, a, b)], sim)
    except SimulationError as e:
        assert np.array_equal(sim.lmem.data, before)          # refused before anything ran
        raise e
    return get(sim, res, SHAPE)


@pytest.mark.parametrize("kind", ["arith.add", "md_scalar.mul", "arith.max", "md_scalar.divide"])
@pytest.mark.parametrize("slot, base, delta, npus", [
    ("opd0", A, 0x80, "NPUs 0-63"), ("opd0", A, 4, "NPUs 0-63"), ("opd1", B, 0x100, "NPUs 0-63"),
    ("opd1", B, -4, "NPUs 0-63"),
    ("opd0", A, -0x1b8, "NPUs 0-5 both use lane bytes [0x1000, 0x1004)"),   # only res0's last slot, NPUs 0-5
])
def test_partial_overlap_is_refused(kind, slot, base, delta, npus):
    with pytest.raises(SimulationError) as e:
        compute(kind, base + delta, A, B)
    res = LOCAL + base + delta
    assert str(e.value).startswith(
        f"instruction 0 (stream tiu byte 0, tiu): {kind}: res0_addr 0x{res:x} and {slot}_addr 0x{LOCAL + base:x} "
        f"must name the same tensor (in place: the same address and layout) or tensors apart, not partly "
        f"overlapping ones (on {npus}"), str(e.value)


def test_the_refusal_is_static():
    """bmk check lists it: the whole buffer is refused before any instruction runs, the other
    instructions named nowhere (the first command is fine, the second overlaps)."""
    from bmk.sim.check import check_records
    bad = fp32_command("arith.add", A + 0x80, A, B)
    findings = check_records(CHIP, [fp32_command("arith.add", D, A, B), bad])
    assert len(findings) == 1 and "res0_addr" in findings[0].what() and "partly overlapping" in str(findings[0])


@pytest.mark.parametrize("kind, ref", [("arith.add", np.add), ("md_scalar.mul", np.multiply),
                                       ("arith.max", np.maximum)])
@pytest.mark.parametrize("where", ["opd0", "opd1", "apart", "right after"])
def test_in_place_and_apart_compute_the_reference(kind, ref, where):
    res = {"opd0": A, "opd1": B, "apart": D, "right after": A + 0x200}[where]
    assert np.array_equal(compute(kind, res, A, B), ref(X, Y))


def test_an_unpacked_result_of_another_type_is_partial():
    """An int8 (4N) res0 at an int32 opd0's address: other layouts of shared bytes."""
    f = {}
    lo.tensor(CHIP, f, "res0", A, None, prec="int8", shape=SHAPE)
    lo.tensor(CHIP, f, "opd0", A, None, prec="int32", signed=1)
    lo.tensor(CHIP, f, "opd1", B, None, prec="int32", signed=1)
    with pytest.raises(SimulationError, match="arith.add: res0_addr .* partly overlapping"):
        run([command("arith.add", **f)], bmk.Simulator("bm1684"))
