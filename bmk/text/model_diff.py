"""`bmk-diff A B` of two compiled models: groups paired by label, then the usual instruction diff.

The models differ when their io tensors, coefficients or neuron memory differ (stages paired
by net and stage index), when a group is in one model only, or when a paired group's
instructions differ (bmk.text.diff, `--ignore` as for buffers; a group of raw streams is
compared in each engine's order, with its cross-engine dependencies apart). Each group gets a one-line
summary; a differing group is followed by its field diff. Models of a chip bmk cannot decode
yet are compared byte by byte per engine stream (no field diff), so two files of any chip can
still be told equal or not. Models of two different chips cannot be compared (BmkError). A model's listing (a text of
`.group` sections, as bmk-disasm prints a model) stands for a model too (`diff_grouped`): its
groups are paired with the other side's by label.
"""

import attrs

from bmk.errors import ModelError
from bmk.models.chips import decodable
from bmk.text.diff import diff_listings
from bmk.text.model_listing import group_listing

TENSOR_FACTS = ("name", "type", "shape", "address", "storage", "scale", "zero_point")


@attrs.frozen
class GroupDiff:
    label: str
    status: str                    # "equal", "different", "only in A", "only in B"
    diff: object = None            # bmk.text.diff.Diff of the two listings (decodable chips)
    note: str = ""                 # how it was compared when not instruction by instruction

    def summary(self):
        if self.diff is not None:
            c = self.diff.counts()
            if self.status == "equal":
                return f"{self.label}: equal ({c['equal']} instructions)"
            n = c.get("dependencies")
            deps = "" if not n else f", {n} {'dependency' if n == 1 else 'dependencies'} changed"
            return (f"{self.label}: {c['changed']} changed, {c['inserted']} inserted, {c['deleted']} deleted{deps}; "
                    f"{c['equal']} equal" + (f"; {self.note}" if self.note else ""))
        return f"{self.label}: {self.status}" + (f" ({self.note})" if self.note else "")


@attrs.frozen
class ModelDiff:
    a: object
    b: object
    facts: tuple                   # (what, value in A, value in B) of stage facts that differ
    groups: tuple                  # GroupDiff, A's groups in order, then B's unpaired ones

    @property
    def equal(self):
        return not self.facts and all(g.status == "equal" for g in self.groups)

    def summary(self):
        differing = sum(g.status != "equal" for g in self.groups)
        if self.equal:
            return f"{self.a.path} and {self.b.path} are equal ({len(self.groups)} groups)"
        return (f"{self.a.path} and {self.b.path} differ: {differing} of {len(self.groups)} groups, "
                f"{len(self.facts)} stage facts")

    def iter_text(self, limit=None):
        yield f"--- {self.a.path}"
        yield f"+++ {self.b.path}"
        for what, va, vb in self.facts:
            yield f"~ {what}: {va} -> {vb}"
        for g in self.groups:
            yield g.summary()
            if g.diff is not None and g.status != "equal":
                lines = list(g.diff.iter_text(limit))
                yield from ("  " + line for line in lines[2:-1])     # its ---/+++ and summary said above
        yield self.summary()

    def to_dict(self):
        return {"equal": self.equal, "chip": self.a.chip, "a": self.a.path, "b": self.b.path,
                "facts": [{"what": w, "a": _plain(va), "b": _plain(vb)} for w, va, vb in self.facts],
                "groups": [{"label": g.label, "status": g.status, "summary": g.summary(),
                            **({"diff": g.diff.to_dict()} if g.diff is not None else {}),
                            **({"note": g.note} if g.note else {})} for g in self.groups]}


def _shown(fact, v):
    """A tensor fact as the diff prints it: addresses in hex, dtypes by name."""
    if fact == "address":
        return f"0x{v:x}"
    return getattr(v, "name", v)


def _plain(v):
    return list(v) if isinstance(v, tuple) else v


def _digest(model, st):
    """The sha256 of a stage's coefficient bytes as they are (not the hash the file records:
    one flipped weight bit leaves that unchanged), marked when it is not the recorded one."""
    if st.coeff is None:
        return None
    digest = model.coefficients_sha256(st)
    return digest if model.verified(st) is not False else f"{digest} (the file records {st.coeff.check_code})"


def _stage_facts(a, b):
    """(what, a, b) for every stage fact that differs."""
    out = []
    if len(a.nets) != len(b.nets):
        out.append(("nets", len(a.nets), len(b.nets)))
    for na, nb in zip(a.nets, b.nets):
        if len(na.stages) != len(nb.stages):
            out.append((f"net{na.index} stages", len(na.stages), len(nb.stages)))
        for sa, sb in zip(na.stages, nb.stages):
            where = f"net{na.index}/stage{sa.index}"
            for role in ("inputs", "outputs"):
                ta, tb = getattr(sa, role), getattr(sb, role)
                if len(ta) != len(tb):
                    out.append((f"{where} {role}", len(ta), len(tb)))
                for k, (x, y) in enumerate(zip(ta, tb)):
                    for fact in TENSOR_FACTS:
                        vx, vy = getattr(x, fact), getattr(y, fact)
                        if vx != vy:
                            out.append((f"{where} {role}[{k}] {x.name} {fact}", _shown(fact, vx), _shown(fact, vy)))
            ca, cb = sa.coeff, sb.coeff
            for fact, va, vb in (("coefficient address", ca and _shown("address", ca.address),
                                  cb and _shown("address", cb.address)),
                                 ("coefficient bytes", ca and ca.size, cb and cb.size),
                                 ("coefficient sha256", _digest(a, sa), _digest(b, sb)),
                                 ("neuron bytes", sa.neuron and sa.neuron.size, sb.neuron and sb.neuron.size)):
                if va != vb:
                    out.append((f"{where} {fact}", va, vb))
    return tuple(out)


def _bytes_compared(a, b, ga, gb):
    if ga.sizes != gb.sizes or ga.payload != gb.payload:
        return GroupDiff(ga.label, "different", note=f"bytes compared: bmk has no decoder for {a.chip}")
    return GroupDiff(ga.label, "equal", note=f"bytes compared: bmk has no decoder for {a.chip}")


def diff_models(a, b, ignore=()):
    """Two Models of one chip -> ModelDiff (see the module docstring)."""
    if a.chip != b.chip:
        raise ModelError(f"cannot compare a {a.chip} model ({a.path}) with a {b.chip} one ({b.path})")
    by_label = {g.label: g for g in b.groups()}
    seen, groups = set(), []
    for ga in a.groups():
        gb = by_label.get(ga.label)
        if gb is None:
            groups.append(GroupDiff(ga.label, "only in A"))
            continue
        seen.add(ga.label)
        if not decodable(a.chip):
            groups.append(_bytes_compared(a, b, ga, gb))
            continue
        (la, ua), (lb, ub) = group_listing(a, ga), group_listing(b, gb)
        d = diff_listings(la, lb, ignore)
        undecoded = [e for e in ua if ga.parts[e].read(a.data) != (gb.parts[e].read(b.data) if e in gb.parts else None)]
        undecoded += [e for e in ub if e not in ga.parts]
        status = "equal" if d.equal and not undecoded else "different"
        note = f"undecoded {', '.join(undecoded)} bytes differ" if undecoded else ""
        groups.append(GroupDiff(ga.label, status, d, note))
    groups += [GroupDiff(g.label, "only in B") for g in b.groups() if g.label not in seen]
    return ModelDiff(a, b, _stage_facts(a, b), tuple(groups))


def diff_grouped(a, b, ignore=()):
    """Two sides, each a Model or a loading.GroupedText (a model's listing) -> ModelDiff: groups
    paired by label (stage facts only when both sides are models)."""
    from bmk.models.model import Model
    if isinstance(a, Model) and isinstance(b, Model):
        return diff_models(a, b, ignore)
    if a.chip != b.chip:
        raise ModelError(f"cannot compare a {a.chip} listing ({a.path}) with a {b.chip} one ({b.path})")
    la, lb = _group_listings(a), _group_listings(b)
    groups, seen = [], set()
    for label, listing in la.items():
        other = lb.get(label)
        if other is None:
            groups.append(GroupDiff(label, "only in A"))
            continue
        seen.add(label)
        d = diff_listings(listing, other, ignore)
        groups.append(GroupDiff(label, "equal" if d.equal else "different", d))
    groups += [GroupDiff(label, "only in B") for label in lb if label not in seen]
    return ModelDiff(a, b, (), tuple(groups))


def _group_listings(side):
    """{label: Listing} of a Model's groups or of a GroupedText's sections."""
    from bmk.models.model import Model
    if isinstance(side, Model):
        return {g.label: group_listing(side, g)[0] for g in side.groups()}
    return {g.label: g.listing for g in side.groups}
