"""A command group's instructions: its bytes decoded by the chip's specs, errors naming the file.

A bmodel group is raw per-engine streams (API.md "The command buffer": bm1684 128-byte slots
and a zero tail, bm1684x variable-length commands closed by an end command and zero padding),
decoded one engine at a time and merged into program order by their sync ids
(framing.merge_streams), as `bmk.decode(chip, g.streams)` does. A cvimodel group is one
cmd_hdr_t buffer (`bmk.decode(chip, g.cmdbuf)`). A defect is a ModelError naming the model
file, the group, the engine stream, the offset in that stream and the offset in the file.
"""
from bmk.encoders.framing import decode_cmdbuf, decode_stream, merge_streams
from bmk.errors import DecodeError, ModelError, SpecError
from bmk.models.chips import spec_for


def split_engines(spec, group):
    """(engines the chip's specs decode, engines they do not) among the group's streams. An opaque
    engine (no public layout: BM1690 HAU) decodes to one record holding its stream's bytes."""
    known, unknown = [], []
    for engine in group.parts:
        try:
            eng = spec.engine(engine)
        except SpecError:
            eng = None
        (known if eng is not None and (eng.classes or eng.opaque) else unknown).append(engine)
    return known, unknown


def decode_group(model, group, engines=None, spec=None):
    """Records of `group` in program order. engines: the streams to decode (default: all of
    them; an engine the chip's specs lack is a ModelError naming it); spec: the ChipSpec that
    orders them (default the model's, model_spec: its build's wait mask)."""
    if spec is None:
        spec = model_spec(model)
    where = f"{group.label}"
    if group.cmdbuf_blob is not None:
        try:
            return decode_cmdbuf(spec, group.cmdbuf)
        except DecodeError as e:
            raise located(model, where, "cmdbuf", group.cmdbuf_blob, e) from None
    known, unknown = split_engines(spec, group)
    chosen = list(group.parts) if engines is None else list(engines)
    missing = [e for e in chosen if e in unknown or e not in group.parts]
    if missing:
        raise ModelError(f"{where}: {spec.name} specs decode the engines {known or 'none'} of this group, not "
                         f"{', '.join(missing)}", model.path)
    from bmk.encoders.columns import Fallback, decode_streams     # numpy: only when a group is decoded
    raw = {spec.engine(engine).name: group.parts[engine].read(model.data) for engine in chosen}
    try:
        return decode_streams(spec, [raw])          # by columns (issue 24 item 1): Records made when read
    except Fallback:                                # a defect: the record-by-record path locates it
        pass
    decoded = {}
    for engine in chosen:
        blob = group.parts[engine]
        name = spec.engine(engine).name
        try:
            decoded[name] = decode_stream(spec, name, raw[name])
        except DecodeError as e:
            raise located(model, where, f"{engine} stream", blob, e) from None
    return merge_streams(spec, decoded)


def located(model, where, stream, blob, e):
    """A stream's DecodeError as a ModelError: the group, the stream offset and the file offset."""
    msg = str(e)
    if e.offset is None:
        return ModelError(f"{where}: {stream}: {msg}", model.path)
    msg = msg.removeprefix(f"byte {e.offset}: ")
    return ModelError(f"{where}: {stream} byte {e.offset}: {msg}", model.path, blob.offset + e.offset)


def group_counts(model, group):
    """{engine: instructions} of a group without decoding what the file already counts: a bmodel's
    bdc_num/gdma_num as written; other streams (sdma, hau, cdma) and cvimodel buffers counted by
    walking their commands when the chip has specs, else None (unknown)."""
    from bmk.encoders.framing import frame_at, scan_cmdbuf
    from bmk.models.chips import decodable
    counts = dict(group.counts)
    if group.cmdbuf_blob is None and set(group.parts) <= set(counts):
        return counts                       # the file counts every stream: no spec needed (bmk info stays fast)
    spec = spec_for(model.chip, model.path) if decodable(model.chip) else None
    if group.cmdbuf_blob is not None:
        if spec is None:
            return {"cmdbuf": None}
        data = group.cmdbuf
        counts = {e.name: 0 for e in spec.encoded_engines}
        try:
            for offset in scan_cmdbuf(spec, data):
                counts[frame_at(spec, data, offset)[0].name] += 1
        except DecodeError as e:
            raise located(model, group.label, "cmdbuf", group.cmdbuf_blob, e) from None
        return {e: n for e, n in counts.items() if n}
    known = split_engines(spec, group)[0] if spec is not None else []
    for engine, blob in group.parts.items():
        if engine in counts:
            continue
        if engine not in known or spec.engine(engine).opaque:     # opaque (HAU): no commands bmk can count
            counts[engine] = None
            continue
        try:
            counts[engine] = len(decode_stream(spec, spec.engine(engine).name, blob.read(model.data)))
        except DecodeError as e:
            raise located(model, group.label, f"{engine} stream", blob, e) from None
    return counts


def model_spec(model, purpose=""):
    """The ChipSpec a model's commands are read with for their waits: spec_for's, or, for a build
    whose dependency ids sit in other bits (params.older_wait_mask: BM1690's Nov/Dec 2023
    builds), that chip with the older mask (ChipSpec.with_wait_mask). Told apart by the waits
    themselves, as nothing in the container does: an older build's waits carry the bit just
    above its mask (bit 16) and never the bit just above the current one (bit 20)."""
    spec = spec_for(model.chip, model.path, purpose)
    older = spec.param("older_wait_mask", None)
    if older is None:
        return spec
    key = ("model_spec", spec.name)
    if key not in model.kept:           # one scan of the waits per model
        model.kept[key] = spec.with_wait_mask(older) if _older_build(model, spec, older) else spec
    return model.kept[key]


def _older_build(model, spec, older):
    masks = {e.name: e.wait_mask for e in spec.engines if e.wait_mask is not None and e.wait_for}
    marked = False
    for g in model.groups():
        for r in decode_group(model, g, spec=spec):
            mask = masks.get(r.engine)
            if mask is None:
                continue
            for _, name in spec.engine(r.engine).wait_for:
                v = r.fields.get(name, 0)
                if v & (mask + 1):
                    return False
                marked = marked or bool(v & (older + 1))
    return marked
