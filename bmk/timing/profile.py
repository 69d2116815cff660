"""The vendor's profiles read: a chip's measured cycles (`iter0.profile`) and the compiler's own
per-command estimate (`net_stat.sim`).

iter0.profile (tests/perf/bm1688_resnet50/, the vendor's bmprofile output, tpu-mlir
python/profile_helper bmprofile_parse.py and bm1688_defs.py): blocks of (u32 type, u32 length,
payload). A TIU block holds 32-byte monitor records (u32 start cycle, u32 end cycle, u64 whose
low bits are the instruction id, then read/write counters); a GDMA block 256-byte records (u32
start, u32 end, u32 whose low bits are the command id, then byte counters). One TIU and one GDMA
block per core, in core order. Block types, record sizes and id widths are the chip's
`profile_*` parameters (bmk/specs/<chip>/chip.toml). An id is the command's 0-based position in
its engine's stream; system commands (message send/wait, stream end) are not recorded.

net_stat.sim: one line per command per engine column,
`layer|KIND|s:start|b:tiu id|g:gdma id|e:end|t:cycles[|dr:direction|sz:bytes|bw:GB/s]`, the ids
1-based positions; a TIU command's own id is b, a GDMA command's g.
"""
import re
import struct

from bmk.errors import DecodeError

ENGINES = ("tiu", "gdma")


def profile_layout(chip):
    """{engine: (block type, record bytes, id bits)} from the chip's params (chip.toml)."""
    out = {}
    for e in ENGINES:
        try:
            out[e] = (chip.param(f"profile_{e}_block"), chip.param(f"profile_{e}_record"),
                      chip.param(f"profile_{e}_id_bits"))
        except Exception:
            raise DecodeError(f"profile: chip {chip.name} has no profile layout (params profile_{e}_*)") from None
    return out


def read_profile(chip, data, path="profile"):
    """iter0.profile bytes -> [{engine: {index: (start cycle, end cycle)}} per core], cycles of the
    engine's own clock. Ids count up in a block: a record repeated for one id keeps its last
    reading (the GDMA monitor's first record of a core is a start mark with id 0, followed by
    the first command's), and a record whose id is below the one before it is dropped (the
    GDMA monitor's last record of core 0 in tests/perf/bm1688_resnet50 is an end mark, id 0)."""
    layout = profile_layout(chip)
    kind_of = {block: e for e, (block, _, _) in layout.items()}
    cores, seen = [], set()
    at, n = 0, len(data)
    while at < n:
        if at + 8 > n:
            raise DecodeError(f"{path}: byte {at}: a block header needs 8 bytes, {n - at} left")
        btype, length = struct.unpack_from("<II", data, at)
        body = at + 8
        if body + length > n:
            raise DecodeError(f"{path}: byte {at}: block of type {btype} is {length} bytes long, {n - body} left")
        e = kind_of.get(btype)
        if e is not None:
            _, size, bits = layout[e]
            if length % size:
                raise DecodeError(f"{path}: byte {at}: a {e} block's length must be a multiple of {size}, not {length}")
            if not cores or e in seen:
                cores.append({x: {} for x in ENGINES})
                seen = set()
            seen.add(e)
            got = cores[-1][e]
            mask, last = (1 << bits) - 1, -1
            for k in range(length // size):
                start, end, ident = struct.unpack_from("<III", data, body + k * size)
                ident &= mask
                if ident < last:
                    continue            # an id going back: the monitor's end mark
                got[ident] = (start, end)
                last = ident
        at = body + length
    if not cores:
        raise DecodeError(f"{path}: byte 0: no TIU or GDMA monitor block (types "
                          f"{sorted(kind_of)}): is it an iter*.profile?")
    return cores


_NET_STAT = re.compile(r"([\w.]*)\|(\w+)\|s:(\d+)\|b:(\d+)\|g:(\d+)\|e:(-?\d+)\|t:(\d+)")


def read_net_stat(text):
    """net_stat.sim text -> {engine: {index: (layer, KIND, cycles)}}, index 0-based (the vendor's
    ids are 1-based); GDMA kinds start with GDMA_, every other kind is a TIU command's."""
    out = {e: {} for e in ENGINES}
    for layer, kind, _s, b, g, _e, t in _NET_STAT.findall(text):
        if kind.startswith("GDMA"):
            out["gdma"][int(g) - 1] = (layer, kind, int(t))
        else:
            out["tiu"][int(b) - 1] = (layer, kind, int(t))
    return out


_LAYER = re.compile(r"\[bmprofile\] (?:local|global)_layer: layer_id=(\d+) layer_type=(\S*)")
_CMD = re.compile(r"\[bmprofile\] gdma cmd_id bd_id=\d+ gdma_id=\d+ (bd_func|gdma_dir)=\d+.*? core=(\d+)")


def read_layers(text):
    """global.profile text (the vendor's layer log, tpu-mlir profile_helper) -> {(core, engine,
    index): "Type_id"}: the layer each command was issued for. The log lists every command a
    layer issues in issue order ("gdma cmd_id ... bd_func=": a TIU command, "gdma_dir=": a GDMA
    one, with its core), so the k-th such line of an engine and core is that stream's command k;
    commands issued outside a layer (the barriers between parallel blocks) map to no layer; a
    local layer ends with its parallel block, a global layer at the next layer."""
    out, count, layer, whole = {}, {}, None, False
    for line in text.splitlines():
        m = _LAYER.match(line)
        if m:
            layer, whole = f"{m.group(2)}_{m.group(1)}", "global_layer" in line
            continue
        if line.startswith("[bmprofile] end to run"):
            layer = None
            continue
        if not whole and (line.startswith("[bmprofile] end parallel") or line.startswith("[bmprofile] start parallel")):
            layer = None            # a local layer is one parallel block's; a global one runs to the next layer
            continue
        m = _CMD.match(line)
        if m:
            key = (int(m.group(2)), "tiu" if m.group(1) == "bd_func" else "gdma")
            k = count.get(key, 0)
            count[key] = k + 1
            if layer is not None:
                out[key + (k,)] = layer
    return out
