#!/usr/bin/env python3
"""Check bmk/specs/bm1684 and bmk/specs/bm1684x against the tpu-mlir golden streams.

Dev-only tool, run by hand (it does not use bmk's loader, which may not read these specs yet):

    python tools/check_vectors.py

A minimal decoder of its own: per engine, read the head, pick the class by selector/keys,
cut `bytes` bytes, extract every field, walk the stream. Checks, per chip and engine:
 1. every command decodes with a class, and the stream ends as chip.toml's `stream` says;
 2. own ids run 1..N;
 3. every "cmd" block of the .reg.test equals the decoded fields, key by key;
 4. bm1684x: the kind name equals the .reg.test "name" and the .mlir.test op names;
    bm1684: the class (tsk_typ / special_func) matches the .mlir.test op description and the
    waited-for ids in .mlir.test equal the wait_for fields;
 5. re-packing the decoded fields gives back the same bytes (whole stream).
Also prints the per-field value sets of the enable fields and whether wait ids never decrease.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "bmk" / "specs"
GOLDEN = ROOT / "tests" / "golden"

STREAMS = {
    "bm1684": "yolov5s_bm1684_f32",
    "bm1684x": "yolov5s_bm1684x_int8_sym",
}


class Layout:
    def __init__(self, name, nbytes, fields, instructions, keys=None):
        self.name, self.bytes, self.fields = name, nbytes, fields
        self.instructions = instructions
        self.keys = keys
        self.check()

    def check(self):
        pos = 0
        names = set()
        for f in sorted(self.fields, key=lambda f: f["bit"]):
            assert f["bit"] == pos, f"{self.name}: gap/overlap at {f['name']} ({f['bit']} != {pos})"
            assert f["name"].isidentifier() and f["name"] not in names, f"{self.name}: name {f['name']}"
            assert f["width"] <= 64 or f.get("reserved"), f"{self.name}: {f['name']} too wide"
            names.add(f["name"])
            pos += f["width"]
        assert pos == self.bytes * 8, f"{self.name}: covers {pos} of {self.bytes * 8} bits"
        for i in self.instructions:
            for k in i["match"]:
                assert k in names, f"{self.name}: kind {i['name']} matches unknown {k}"

    def unpack(self, raw: bytes) -> dict:
        v = int.from_bytes(raw, "little")
        return {f["name"]: (v >> f["bit"]) & ((1 << f["width"]) - 1) for f in self.fields}

    def pack(self, vals: dict) -> bytes:
        v = 0
        for f in self.fields:
            x = vals[f["name"]]
            assert 0 <= x < 1 << f["width"]
            v |= x << f["bit"]
        return v.to_bytes(self.bytes, "little")

    def kind(self, vals: dict):
        for i in self.instructions:
            if all(vals[k] == m for k, m in i["match"].items()):
                return i["name"]
        return None


class Engine:
    def __init__(self, spec: dict):
        self.name = spec["name"]
        if "classes" in spec:
            self.selector = spec["selector"]
            self.head = spec["head"]
            self.classes = [Layout(c["name"], c["bytes"], c["fields"], c.get("instructions", []), c["keys"])
                            for c in spec["classes"]]
            self.check_keys()
        else:
            self.selector = None
            self.head = None
            self.classes = [Layout(spec["name"], spec["bytes"], spec["fields"], spec.get("instructions", []))]
        self.min_bytes = min(c.bytes for c in self.classes)

    def check_keys(self):
        # no selector combination may pick two classes; check over every combination of the
        # values the keys name (a key without a field matches all of them)
        vals = {s: set() for s in self.selector}
        for c in self.classes:
            for k in c.keys:
                for s, v in k.items():
                    assert s in self.selector
                    vals[s].add(v)
        for s in vals:
            vals[s].add(-1)  # stands for "any other value"
        import itertools
        for combo in itertools.product(*(sorted(vals[s]) for s in self.selector)):
            sel = dict(zip(self.selector, combo))
            hits = [c.name for c in self.classes if any(all(sel[s] == v for s, v in k.items()) for k in c.keys)]
            assert len(hits) <= 1, f"{self.name}: {sel} selects {hits}"
        headmap = {h["name"]: (h["bit"], h["width"]) for h in self.head}
        self.head_exceptions = []
        for c in self.classes:
            have = {f["name"]: (f["bit"], f["width"]) for f in c.fields}
            for n, bw in headmap.items():
                if have.get(n) != bw:
                    self.head_exceptions.append((c.name, n))

    def pick(self, raw: bytes):
        if self.selector is None:
            return self.classes[0]
        v = int.from_bytes(raw[: self.min_bytes], "little")
        sel = {}
        for h in self.head:
            if h["name"] in self.selector:
                sel[h["name"]] = (v >> h["bit"]) & ((1 << h["width"]) - 1)
        for c in self.classes:
            if any(all(sel[s] == x for s, x in k.items()) for k in c.keys):
                return c
        return None


def load_chip(chip: str):
    cfg = tomllib.loads((SPECS / chip / "chip.toml").read_text())
    engines = {}
    for ename, e in cfg["engines"].items():
        spec = tomllib.loads((SPECS / chip / f"{e['format']}.toml").read_text())
        engines[ename] = (Engine(spec), e)
    return cfg, engines


def walk(engine: Engine, ecfg: dict, data: bytes):
    """-> list of (offset, class, fields, kind); raises on an undecodable command."""
    stream = ecfg["stream"]
    out = []
    pos = 0
    while pos < len(data):
        rest = data[pos:]
        if "slot" in stream:
            if len(rest) <= stream["zero_tail"] and not any(rest):
                break
            cls = engine.pick(rest[: stream["slot"]])
            assert cls is not None, f"offset {pos}: no class"
            raw = rest[: cls.bytes]
            assert cls.bytes <= stream["slot"]
            vals = cls.unpack(raw)
            out.append((pos, cls, vals, cls.kind(vals)))
            pos += stream["slot"]
        else:
            cls = engine.pick(rest)
            assert cls is not None, f"offset {pos}: no class ({rest[:16].hex()})"
            raw = rest[: cls.bytes]
            vals = cls.unpack(raw)
            kind = cls.kind(vals)
            out.append((pos, cls, vals, kind))
            pos += cls.bytes
            if kind == stream["end"]:
                tail = data[pos:]
                assert not any(tail), f"non-zero bytes after {kind}"
                assert len(tail) <= stream["zero_tail"], f"{len(tail)} zero bytes after {kind}"
                assert len(data) % stream["pad_to"] == 0, f"stream not padded to {stream['pad_to']}"
                assert len(tail) < stream["pad_to"], f"more padding than pad_to needs"
                pos = len(data)
                out.append(("end", len(tail)))
                break
    return out


def parse_regtest(path: Path):
    text = "\n".join(line.split("CHECK:", 1)[1] for line in path.read_text().splitlines() if line.startswith("CHECK:"))
    doc = json.loads(text)
    (group,) = doc.values()
    return group


def repack_stream(cmds, data, stream):
    out = bytearray()
    for c in cmds:
        if c[0] == "end":
            out += bytes(c[1])
            continue
        pos, cls, vals, _ = c
        b = cls.pack(vals)
        if "slot" in stream:
            b = b + data[pos + cls.bytes: pos + stream["slot"]]  # slot tail (must be zero)
            assert not any(data[pos + cls.bytes: pos + stream["slot"]])
        out += b
    if "slot" in stream:
        out += data[len(out):]
        assert not any(data[len(out):])
    return bytes(out)


def main():
    ok = True
    report = []
    for chip, stem in STREAMS.items():
        cfg, engines = load_chip(chip)
        reg = parse_regtest(GOLDEN / chip / f"{stem}.reg.test")
        mlir = (GOLDEN / chip / f"{stem}.mlir.test").read_text()
        for ename, (engine, ecfg) in engines.items():
            short = {"tiu": "tiu", "gdma": "dma"}[ename]
            data = (GOLDEN / chip / f"{stem}.{ename}.bin").read_bytes()
            res = []
            cmds = walk(engine, ecfg, data)
            real = [c for c in cmds if c[0] != "end"]
            end = [c for c in cmds if c[0] == "end"]
            by_cls = Counter(c[1].name for c in real)
            by_kind = Counter(c[3] for c in real)
            res.append(f"{len(real)} commands ({dict(by_cls)})" + (f", end + {end[0][1]} zero bytes" if end else ""))
            # 2. ids
            own = ecfg["own_id"]
            ids = [c[2].get(own) for c in real]
            ids_ok = ids == list(range(1, len(real) + 1))
            res.append(f"ids 1..{len(real)} unbroken: {ids_ok}")
            ok &= ids_ok
            # 3. reg.test
            byid = {c[2][own]: c for c in real}
            n_blocks = n_keys = 0
            bad = []
            extras = set()
            for blk in reg[short]:
                cid = blk["extra"]["cmd_id"]
                assert blk["extra"]["cmd_type"] == short
                _, cls, vals, kind = byid[cid]
                extra = sorted(set(vals) - set(blk["cmd"]))
                if extra:
                    extras.add((cls.name, tuple(extra)))
                for k, v in blk["cmd"].items():
                    n_keys += 1
                    if vals.get(k) != v:
                        bad.append((cid, cls.name, k, v, vals.get(k)))
                n_blocks += 1
                if chip == "bm1684x" and blk["name"] != kind:
                    bad.append((cid, cls.name, "<name>", blk["name"], kind))
            res.append(f"reg.test: {n_blocks} blocks, {n_keys} keys, mismatches: {bad if bad else 0}")
            ok &= not bad
            if extras:
                res.append(f"decoded fields the reg.test does not list: {sorted(extras)}")
            # 4. mlir names / waits
            letter = {"tiu": "B", "gdma": "D"}[ename]
            if chip == "bm1684x":
                names = {int(i): n for i, n in re.findall(rf'%{letter}(\d+) = "([^"]+)"', mlir)}
                mism = [(i, n, byid[i][3]) for i, n in names.items() if byid[i][3] != n]
                res.append(f"mlir.test: {len(names)} ops named, mismatches: {mism if mism else 0}")
                ok &= not mism
            else:
                ops = {int(i): (n.strip(), int(dep)) for i, n, dep in
                       re.findall(rf'%{letter}(\d+) = ([A-Za-z _0-9]+)\(%[BD](\d+)\)', mlir)}
                pairs = Counter((n, byid[i][3]) for i, (n, _) in ops.items())
                (other, field), = ecfg["wait_for"].items()
                wmis = [(i, dep, byid[i][2][field]) for i, (_, dep) in ops.items() if byid[i][2][field] != dep]
                res.append(f"mlir.test: {len(ops)} ops; (description, kind) pairs: {dict(pairs)}")
                res.append(f"mlir.test waits equal {field}: {not wmis} {wmis[:5] if wmis else ''}")
                ok &= not wmis
            res.append(f"kinds: {dict(by_kind)}")
            ok &= None not in by_kind
            # 5. repack
            same = repack_stream(cmds, data, ecfg["stream"]) == data
            res.append(f"repack == bytes: {same}")
            ok &= same
            # info: enable fields and wait monotonicity
            for f in ecfg["enable"]:
                res.append(f"enable {f}: values {dict(Counter(c[2].get(f, '<absent>') for c in real))}")
            for other, field in ecfg["wait_for"].items():
                w = [c[2][field] for c in real if field in c[2]]
                res.append(f"wait {field} (on {other}): non-decreasing {all(a <= b for a, b in zip(w, w[1:]))}, "
                           f"without the end command {all(a <= b for a, b in zip(w[:-1], w[1:-1]))}, "
                           f"range {min(w)}..{max(w)}, last {w[-1]}")
            if engine.selector and engine.head_exceptions:
                res.append(f"classes not carrying every head field: {engine.head_exceptions}")
            report.append((chip, ename, res))
        # src_hshift quirk
        if chip == "bm1684":
            eng, _ = engines["gdma"]
            data = (GOLDEN / chip / f"{stem}.gdma.bin").read_bytes()
            nz = sum(1 for p in range(0, len(data), 128)
                     if (int.from_bytes(data[p:p + 128], "little") >> 592) & 0xFFFFFF)
            report.append((chip, "gdma", [f"commands with any bit of 592..615 set: {nz}"]))
    for chip, ename, res in report:
        print(f"== {chip} {ename}")
        for r in res:
            print("   ", r)
    print("ALL OK" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
