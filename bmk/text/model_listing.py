"""A compiled model's command groups as Listings: what bmk-disasm prints and bmk-diff compares.

Each group becomes one `loading.Listing` named `<file>:<label>`: a bmodel group's raw streams
(source "raw", locations `<engine> stream byte N`), a cvimodel group's cmd_hdr_t buffer
(source "binary"). Streams of engines the chip's specs do not decode (e.g. a future chip's
HAU) are left out of the listing and named in its header comment.
"""
from bmk.encoders.framing import scan_frames
from bmk.errors import DecodeError
from bmk.models.chips import spec_for
from bmk.models.decoding import decode_group, group_counts, located, split_engines
from bmk.text import asm
from bmk.text.loading import CmdbufRecords, Listing


def group_listing(model, group):
    """(Listing of the group's decodable instructions, [engines left undecoded])."""
    spec = spec_for(model.chip, model.path)
    name = f"{model.path}:{group.label}"
    if group.cmdbuf_blob is not None:
        data = group.cmdbuf
        try:
            offsets = scan_frames(spec, data)        # every frame checked once; fields decoded on access
        except DecodeError as e:
            raise located(model, group.label, "cmdbuf", group.cmdbuf_blob, e) from None
        return Listing(spec, CmdbufRecords(spec, data, offsets), "binary", name), []
    known, unknown = split_engines(spec, group)
    records = tuple(decode_group(model, group, known))
    return Listing(spec, records, "raw", name, paths={spec.engine(e).name: name for e in known}), unknown


def group_comment(model, group, unknown):
    counts = group_counts(model, group)
    sizes = group.sizes
    engines = [e for e in counts if e != "cmdbuf"] if "cmdbuf" in sizes else list(sizes)
    text = ", ".join(f"{e} {counts.get(e) if counts.get(e) is not None else '?'}" for e in engines)
    lines = [f"{model.path} {group.label}: {text or 'empty'}"]
    lines += [f"{e}: {sizes[e]} bytes not decoded (the {model.chip} specs have no {e} engine)" for e in unknown]
    return lines


def group_directive(group):
    """The `.group` line that opens a group's listing: its label, and `cmdbuf` for a cvimodel
    group (its commands are one cmd_hdr_t buffer, not raw streams), so bmk-asm --dir writes each
    group back as `bmk extract` names it."""
    return f".group {group.label}" + (" cmdbuf" if group.cmdbuf_blob is not None else "")


def iter_model_disassembly(model, groups, fields="changed"):
    """The listing of `groups` (Groups of `model`), one `.chip` line, each group under a
    `# <file> <label>: <engine> <count>, ...` comment and its `.group` line. The whole listing
    fed to `bmk-asm --dir DIR` gives back every group's bytes; one group's, `--raw ENGINE OUT`
    per engine (a bmodel group) or `-o OUT` (a cvimodel group)."""
    spec = spec_for(model.chip, model.path)
    yield f".chip {spec.name}"
    if fields != "changed":
        yield f".fields {fields}"
    for g in groups:
        listing, unknown = group_listing(model, g)
        yield from (f"# {c}" for c in group_comment(model, g, unknown))
        yield group_directive(g)
        lines = asm.iter_disassembly(spec, listing.records, fields, locations=True)
        next(lines)                                  # its own .chip line: said once above
        if fields != "changed":
            next(lines)
        yield from lines
