"""Which bmk chip a container's chip string names, and whether this build can decode it.

The strings are container facts: bmodel `Model.chip` (isa-facts/bmodel-format.md section 3:
"BM1684", "BM1684X", "BM1688", "CV186X", "BM1690", "CV184X", "MARS3", "SG2380", ...) and the
cvimodel header's chip name (cvimodel-format.md section 1: "cv181x", "cv180x", "cv182x",
"cv183x"). CV186X is the BM1688 TPU under another product name, SG2260 the BM1690's and MARS3
the CV184X's (tpu-mlir's debugger targets: target_1688, target_1690, target_mars3).

"Decodable" is looked up, not listed: a chip decodes when bmk has its specs
(`bmk.isa.chips()`), so a model of a chip whose specs land later decodes with no change here.
"""
from bmk.errors import ModelError

CHIP_NAMES = {
    "BM1684": "bm1684",
    "BM1684X": "bm1684x",
    "BM1688": "bm1688",
    "CV186X": "bm1688",
    "BM1690": "bm1690",
    "SG2260": "bm1690",
    "CV184X": "cv184x",
    "MARS3": "cv184x",
    "SG2380": "sg2380",
    "CV180X": "cv180x",
    "CV181X": "cv181x",
    "CV182X": "cv182x",
    "CV183X": "cv183x",
}


def chip_name(container_chip):
    """A container's chip string -> bmk's chip name (unknown strings: lower case, as given)."""
    key = container_chip.strip().upper()
    return CHIP_NAMES.get(key, container_chip.strip().lower())


def decodable(chip):
    """True when this build has specs (a decoder) for `chip`."""
    from bmk.isa import chips
    return chip in chips()


def spec_for(chip, path, purpose=""):
    """The ChipSpec of `chip`, or ModelError saying which chip's decoder is missing."""
    from bmk.isa import chips, load_chip
    if chip not in chips():
        raise ModelError(f"model is for chip {chip}, which bmk cannot decode yet (chips with a decoder: "
                         f"{', '.join(chips())}){purpose}", path)
    return load_chip(chip)
