"""`bmk lint MODEL` / `bmk.lint`: what is wrong with a compiled model file, found statically (issue 33).

Distinct from `bmk check` (what bmk's simulator cannot run): lint asks whether the file is
self-consistent and fits its chip, before any chip runs it. Each finding has a rule, a place
(group label, engine, index in that engine's stream) and one line of why. Rules:

- cores: the cores a stage needs (CoreCommands entries, NetParameter.core_num) must not exceed
  the cores of the product the file names (bmk.models.chips.cores: specs/chip_names.toml, the
  chip's params.cores); sophgo/tpu-mlir#281 is a two-core CV186X model run on one core.
- message: per stream (core, engine) and message id (specs `messages`), a wait needs a send:
  the vendor's barrier rounds send then wait once per round on every stream that takes part
  (newer-chips.md 1), so a stream's sends and waits on an id must pair up.
- dependency: a wait on another engine (specs `wait_for`) must name a command that stream
  issues: with implicit ids a position <= its length (wait_mask bits), with explicit ids an id
  one of its commands carries.
- region: command streams, coefficients and the kernel module are byte ranges of the binary
  area that must not overlap one another (a group whose streams overlap is not decoded: its
  bytes are not its own); the coefficient and neuron memories must not overlap on the device;
  the outputs of a stage must not overlap one another in neuron memory.
- tensor: a tensor's size field is the bytes its shape takes (storage.device_nbytes): a larger
  size means a shape or size was changed (the reader already refuses a smaller one).
- hash: the coefficients must hash to the sha256 the file records (Model.verified).
- decode: every command stream must decode (a defect names its byte offset).
- address, lanes: each DMA command's global addresses (CV18xx TDMA's through their base
  registers' regions) inside its stage's regions, its static-memory and L2 SRAM operands inside
  those memories, its local operands and TIU results and sources inside their lanes, the
  tsbc.s_* static vectors inside static memory (bmk/models/lint_addresses.py).

The report also carries the compiler version and build time the file records. Not checked
(yet): the other TIU kinds' sources (lint_addresses.py says which), and versions per net (a
bmodel records one version for all its nets, so a mixed build cannot be seen in the container).
"""
import attrs

from bmk.errors import BmkError, ModelError
from bmk.util import printable


@attrs.frozen
class LintFinding:
    rule: str                   # cores, message, dependency, region, tensor, hash, decode, address, lanes
    group: "str | None"         # group label, or net<n>/stage<s> for a stage's finding
    engine: "str | None"
    index: "int | None"         # 0-based position in that engine's stream
    why: str

    def where(self):
        parts = [p for p in (self.group, self.engine) if p is not None]
        if self.index is not None:
            parts.append(f"#{self.index}")
        return " ".join(parts)

    def to_dict(self):
        return attrs.asdict(self)


def lint(source):
    """[LintFinding] of a model (a Model or a path to one); [] when clean. ModelError (a
    bmk.BmkError) when the file does not read at all. Source: module docstring."""
    import os
    from bmk.models import Model, load_model
    model = load_model(source) if isinstance(source, (str, os.PathLike)) else source
    if not isinstance(model, Model):
        from bmk.errors import ArgumentError, must
        raise ArgumentError(must("lint", "source", "a Model or the path of a model file", type(source).__name__))
    out = []
    _cores(model, out)
    skip = _regions(model, out)
    _tensors(model, out)
    _hashes(model, out)
    _streams(model, out, skip)
    return out


def _cores(model, out):
    from bmk.models.chips import cores
    have = cores(model.target)
    for net in model.nets:
        for st in net.stages:
            groups = [g for sn in st.subnets for g in sn.groups]
            need = max([st.core_num] + [g.core + 1 for g in groups])
            if need > have:
                out.append(LintFinding("cores", f"net{net.index}/stage{st.index}", None, None,
                                       f"the stage needs {need} cores, the {model.target} has {have}"))


def _overlap(a, b):
    return a.size and b.size and a.offset < b.offset + b.size and b.offset < a.offset + a.size


def _regions(model, out):
    """Overlapping byte ranges of the binary area and of device memory; returns the labels of
    the groups whose streams overlap something (not decoded)."""
    ranges = []                                 # (Blob, what, group label or None)
    for g in model.groups():
        for e, blob in g.parts.items():
            ranges.append((blob, f"{g.label} {e}", g.label, e))
    for net in model.nets:
        for st in net.stages:
            if st.coeff is not None and st.coeff.blob is not None:
                ranges.append((st.coeff.blob, f"net{net.index}/stage{st.index} coefficients", None, None))
    if model.kernel_module is not None:
        ranges.append((model.kernel_module[1], "the kernel module", None, None))
    ranges.sort(key=lambda r: r[0].offset)
    bad = set()
    for i, (a, what_a, label_a, eng_a) in enumerate(ranges):
        for b, what_b, label_b, eng_b in ranges[i + 1:]:
            if b.offset >= a.offset + a.size:
                break
            # stages may share one coefficient blob, and cores one engine's stream: the vendor's 8-core
            # BM1690 MatMul (tests/models/bm1690/MM_0_f16_bm1690.bmodel) keeps each core's identical TIU
            # commands once; streams of two engines, or a partial overlap, never
            shared = (a.offset, a.size) == (b.offset, b.size) and (not (label_a or label_b) or eng_a == eng_b)
            if _overlap(a, b) and not shared:
                label, eng = (label_b, eng_b) if label_b else (label_a, eng_a)
                out.append(LintFinding("region", label, eng, None,
                                       f"{what_b} [{b.offset}, +{b.size}) overlaps {what_a} [{a.offset}, +{a.size}) "
                                       "in the file"))
                bad.update(x for x in (label_a, label_b) if x)
    for net in model.nets:
        for st in net.stages:
            where = f"net{net.index}/stage{st.index}"
            c, n = st.coeff, st.neuron
            if c is not None and n is not None and c.address is not None and n.address is not None and c.size \
                    and n.size and c.address < n.address + n.size and n.address < c.address + c.size:
                out.append(LintFinding("region", where, None, None,
                                       f"coefficients [0x{c.address:x}, +{c.size}) overlap neuron memory "
                                       f"[0x{n.address:x}, +{n.size})"))
            _tensor_overlaps(st, where, out)
    return bad


def _tensor_overlaps(st, where, out):
    from bmk.models import storage
    spans = []
    for t in st.outputs:
        try:
            need = storage.device_nbytes(t.shape, t.dtype, t.storage, t.name)
        except ModelError:
            continue
        spans.append((t.address, t.address + need, t.name))
    spans.sort()
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
        if b0 < a1:
            out.append(LintFinding("region", where, None, None,
                                   f"outputs {printable(an)!r} [0x{a0:x}, 0x{a1:x}) and {printable(bn)!r} "
                                   f"[0x{b0:x}, 0x{b1:x}) overlap"))


def _tensors(model, out):
    from bmk.models import storage
    for net in model.nets:
        for st in net.stages:
            for role, ts in (("input", st.inputs), ("output", st.outputs)):
                for t in ts:
                    try:
                        need = storage.device_nbytes(t.shape, t.dtype, t.storage, t.name)
                    except ModelError:
                        continue
                    if t.size and t.size != need:
                        out.append(LintFinding("tensor", f"net{net.index}/stage{st.index}", None, None,
                                               f"{role} {printable(t.name)!r}: shape {tuple(t.shape)} {t.storage} "
                                               f"{t.type.name} takes {need} bytes, its size field says {t.size}"))


def _hashes(model, out):
    for net in model.nets:
        for st in net.stages:
            if model.verified(st) is False:
                out.append(LintFinding("hash", f"net{net.index}/stage{st.index}", None, None,
                                       f"the coefficients' sha256 {model.coefficients_sha256(st)[:16]}... is not the "
                                       f"{st.coeff.check_code[:16]}... the file records (CoeffMem.check_code)"))


def _streams(model, out, skip):
    """Per subnet: decode every group once, then the message and dependency rules."""
    from bmk.models.chips import decodable
    if not decodable(model.chip):
        return
    from bmk.models.decoding import model_spec
    from bmk.models.lint_addresses import check_stream, check_tiu, stage_regions
    spec = model_spec(model)
    for net in model.nets:
        for st in net.stages:
            for sn in st.subnets:
                streams = {}                        # (label, engine) -> [Record] in stream order
                for g in sn.groups:
                    if g.label in skip:
                        continue
                    try:
                        records = model.records(g)
                    except BmkError as e:
                        out.append(LintFinding("decode", g.label, None, None, str(e).removeprefix(f"{model.path}: ")))
                        continue
                    for r in records:
                        streams.setdefault((g.label, r.engine), []).append(r)
                regions = stage_regions(st)
                for (label, engine), recs in streams.items():
                    check_stream(spec, label, engine, recs, regions, out, LintFinding)
                    check_tiu(spec, label, engine, recs, out, LintFinding) if engine == "tiu" else None
                _messages(spec, streams, out)
                _dependencies(spec, streams, out)


def _messages(spec, streams, out):
    for (label, name), recs in streams.items():
        eng = spec.engine(name)
        msg = eng.messages
        if msg is None:
            continue
        pending, lone, sends, waits = {}, {}, {}, {}    # id -> unmatched send indexes, first lone wait, counts
        for i, r in enumerate(recs):
            if r.kind == msg.send:
                m = msg.msg_id(r.fields)
                pending.setdefault(m, []).append(i)
                sends[m] = sends.get(m, 0) + 1
            elif r.kind == msg.wait:
                m = msg.msg_id(r.fields)
                waits[m] = waits.get(m, 0) + 1
                if pending.get(m):
                    pending[m].pop(0)       # a round: this stream's send, then its wait
                else:
                    lone.setdefault(m, i)
        for m in sorted(set(sends) | set(waits)):
            if m not in lone and not pending.get(m):
                continue
            kind, at = ("wait", lone[m]) if m in lone else ("send", pending[m][0])
            out.append(LintFinding("message", label, name, at,
                                   f"{waits.get(m, 0)} waits and {sends.get(m, 0)} sends on message id {m}: a {kind} "
                                   "without its partner on this core (each barrier round sends, then waits)"))


def _dependencies(spec, streams, out):
    for (label, name), recs in streams.items():
        eng = spec.engine(name)
        for other, field in eng.wait_for:
            theirs = streams.get((label, spec.engine(other).name), [])
            if eng.implicit_ids:
                have, ids = len(theirs), None
            else:
                own = spec.engine(other).own_id
                ids = {r.fields.get(own) for r in theirs if own in r.fields}
                have = max(ids, default=0)
            for i, r in enumerate(recs):
                v = r.fields.get(field)
                if v is None:
                    continue
                if eng.wait_mask is not None:
                    v &= eng.wait_mask
                if v > have and (ids is None or v not in ids):
                    out.append(LintFinding("dependency", label, name, i,
                                           f"{field} = {v} waits for {other} command {v}, which this group never "
                                           f"issues ({other} issues {'ids up to ' if ids is not None else ''}{have})"))
                    break                           # one per stream: the rest follow from it
