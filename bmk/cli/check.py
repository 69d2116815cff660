"""`bmk check`'s report of one file: what the simulator would refuse (bmk.check), as text and JSON.

    FILE: bm1684 model, 794 instructions: 309 cannot be simulated, 15 refusals
        51  tiu.arith.add opd1_neq1 = 0x1  first net0/stage0/subnet0/core0/group0 tiu #2 (byte 256)
              arith.add: field opd1_neq1 = 0x1 is not modelled by this kind (...)
    FILE: bm1684x model, 101 instructions: every one can be simulated

Findings sorted by kind, field and value; a finding that is not an instruction's (the model's
chip, a subnet, a core) has '-' for its count.
"""
import attrs


@attrs.frozen
class CheckReport:
    file: str
    chip: str
    what: str                   # "model", "buffer"
    instructions: int
    findings: list

    def lines(self):
        n = self.instructions
        head = f"{self.file}: {self.chip} {self.what}, {n} instruction{'s' * (n != 1)}: "
        if not self.findings:
            yield head + "every one can be simulated"
            return
        refused = sum(f.count for f in self.findings if f.index is not None)
        k = len(self.findings)
        parts = [f"{refused} cannot be simulated"] if refused else []
        parts.append(f"{k} refusal{'s' * (k != 1)}")
        yield head + ", ".join(parts)
        width = max(len(str(f.count)) if f.index is not None else 1 for f in self.findings)
        for f in sorted(self.findings, key=lambda f: (f.kind, str(f.field), str(f.value))):
            what, where = f.what(), f.where()
            count = str(f.count) if f.index is not None else "-"
            yield f"  {count.rjust(width)}  {what}" + (f"  first {where}" if where and f.index is not None else
                                                        f"  {where}" if where else "")
            yield f"  {' ' * width}    {f.reason}"

    def to_dict(self):
        return {"file": self.file, "chip": self.chip, "what": self.what, "instructions": self.instructions,
                "runs": not self.findings, "findings": [f.to_dict() for f in self.findings]}


def check_report(name, model=None, listing=None):
    """The CheckReport of a Model or of a Listing (bmk.text.loading: a buffer, text or streams)."""
    if model is not None:
        from bmk.models.check import check_model
        findings, n = check_model(model)
        return CheckReport(str(name), model.chip, "model", n, findings)
    from bmk.sim.check import check_records
    records = listing.records
    return CheckReport(str(name), listing.chip.name, "buffer", len(records), check_records(listing.chip, records))
