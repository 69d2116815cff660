"""A model tensor's address as the simulator's global address (issue 30 slice b).

BM1684/BM1684X bmodels carry absolute global-memory addresses: taken as they are. A cvimodel's
carry the runtime's memory region in bits 40-42 above a 40-bit offset (REGION_TAG_BITS: the
weight map's offsets in the files checked, bmk/models/cvimodel.py; cviruntime src/common/neuron.cpp,
Neuron::reserveIonMem: 0 shared, 1 weights, 2 private, 3 and up one io buffer each), and its TDMA
descriptors pick the same region by *_base_reg_sel: on a Simulator with base registers
(`m.base_regs`, bmk/sim/cv181x) the address is the region's register plus the offset.
"""
from bmk.errors import ModelError

REGION_TAG_BITS = 40
OFFSET_MASK = (1 << REGION_TAG_BITS) - 1
# the regions a Program's sizes describe (cvimodel-format.md: Program.shared_gmem, private_gmem) and
# their tags (Neuron::reserveIonMem; the weights' tag is read from the file: bmk/models/cvimodel.py)
SIZED_REGIONS = {"shared_gmem": ("shared memory", 0), "private_gmem": ("private memory", 2)}


def device_address(sim, address, what="address", path=None):
    """The global address of a model address on `sim` (module docstring); ModelError naming
    `what` for a region the simulator has no base register for."""
    regs = getattr(sim, "base_regs", None)
    if regs is None:
        return address
    tag = address >> REGION_TAG_BITS
    if not 0 <= tag < len(regs):
        raise ModelError(f"run: {what} 0x{address:x} must carry a memory region in [0, {len(regs)}) in bits "
                         f"{REGION_TAG_BITS} and up, not {tag}", path)
    return regs[tag] + (address & OFFSET_MASK)
