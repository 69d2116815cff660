"""`bmk lint`'s report of one model: its static findings (bmk.lint, bmk/models/lint.py), as text and JSON.

    FILE: bm1688 model (CV186X), bmodel 2.2 built Sat Oct  7 16:50:10 2023: 1 finding
      cores       net0/stage0  the stage needs 2 cores, the CV186X has 1
    FILE: bm1684x model (BM1684X), bmodel 2.2+v1.15.2-20250327 built ...: clean

Findings in the order the rules run (cores, region, tensor, hash; per subnet: decode, address and
lanes, message, dependency).
"""
import attrs


@attrs.frozen
class LintReport:
    file: str
    chip: str
    target: str
    format: str
    version: str
    time: str
    findings: list

    def lines(self):
        k = len(self.findings)
        verdict = "clean" if not k else f"{k} finding{'s' * (k != 1)}"
        yield (f"{self.file}: {self.chip} model ({self.target}), {self.format} {self.version or '?'} built "
               f"{self.time or '?'}: {verdict}")
        width = max((len(f.where()) for f in self.findings), default=0)
        for f in self.findings:
            yield f"  {f.rule:<10}  {f.where().ljust(width)}  {f.why}"

    def to_dict(self):
        return {"file": self.file, "chip": self.chip, "target": self.target, "format": self.format,
                "version": self.version, "time": self.time, "clean": not self.findings,
                "findings": [f.to_dict() for f in self.findings]}


def lint_report(name, model):
    from bmk.models.lint import lint
    from bmk.util import printable
    return LintReport(str(name), model.chip, printable(model.target), model.format, printable(model.version),
                      printable(model.time), lint(model))
