"""Which bmk chip a container's chip string names, and whether this build can decode it.

The strings are container facts: bmodel `Model.chip` (isa-facts/bmodel-format.md section 3:
"BM1684", "BM1684X", "BM1688", "CV186X", "BM1690", "CV184X", "MARS3", "SG2380", ...) and the
cvimodel header's chip name (cvimodel-format.md section 1: "cv181x", "cv180x", "cv182x",
"cv183x"). Which string names which chip is data, specs/chip_names.toml (CV186X and BM1686 are
the BM1688, SG2260 the BM1690, MARS3 the CV184X: tpu-mlir's debugger targets).

"Decodable" is looked up, not listed: a chip decodes when bmk has its specs
(`bmk.isa.chips()`), so a model of a chip whose specs land later decodes with no change here.
"""
import functools

from bmk.errors import ModelError, SpecError

def chip_names():
    """{container chip string (upper case): bmk chip name}, from specs/chip_names.toml (the data:
    which product and earlier names, e.g. BM1686 and CV186X, name which chip)."""
    return {k.upper(): v for k, v in _table().get("names", {}).items()}


@functools.cache
def _table():
    import tomllib
    from bmk.isa.spec import _specs_root
    try:
        return tomllib.loads(_specs_root().joinpath("chip_names.toml").read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SpecError(f"specs/chip_names.toml: {e}") from None


def cores(container_chip):
    """TPU cores of the product a container's chip string names: specs/chip_names.toml [cores],
    else the chip's params.cores (1 when the chip's specs give none or bmk has no specs for it)."""
    key = container_chip.strip().upper()
    given = {k.upper(): v for k, v in _table().get("cores", {}).items()}
    if key in given:
        return given[key]
    chip = chip_name(container_chip)
    if not decodable(chip):
        return 1
    from bmk.isa import load_chip
    return load_chip(chip).param("cores", 1)


def chip_name(container_chip):
    """A container's chip string -> bmk's chip name (unknown strings: lower case, as given)."""
    key = container_chip.strip().upper()
    return chip_names().get(key, container_chip.strip().lower())


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
