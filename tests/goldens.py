"""Replay the `calls` of a golden case (tests/golden/bm1880/*.json) through the public API."""
import json
import pathlib

from bmk import bm1880

GOLDEN_DIR = pathlib.Path(__file__).parent / "golden" / "bm1880"
CONSTANTS = {"FMT_I8": bm1880.FMT_I8, "FMT_U8": bm1880.FMT_U8, "CTRL_NULL": bm1880.CTRL_NULL,
             "CTRL_AL": bm1880.CTRL_AL, "CTRL_TP": bm1880.CTRL_TP, "CTRL_RA": bm1880.CTRL_RA,
             "CTRL_RELU": bm1880.CTRL_RELU}
SHAPE_ARGS = {"shape"}
STRIDE_ARGS = {"stride", "dst_stride", "src_stride"}


def load_cases():
    return {p.stem: json.loads(p.read_text()) for p in sorted(GOLDEN_DIR.glob("*.json"))}


def golden_buffers():
    """Every golden command buffer as (id, bytes, decoded instructions); a case with several
    acquisitions gives one entry each (id "name[i]"); the 70000-op cases have no bytes."""
    out = []
    for name, case in load_cases().items():
        if "cmdbuf_hex" in case:
            out.append((name, bytes.fromhex(case["cmdbuf_hex"]), case["instructions"]))
        for i, acq in enumerate(case.get("acquisitions", [])):
            out.append((f"{name}[{i}]", bytes.fromhex(acq["cmdbuf_hex"]), acq["instructions"]))
    return out


GOLDEN_BUFFERS = golden_buffers()
GOLDEN_IDS = [name for name, _, _ in GOLDEN_BUFFERS]


def golden(name):
    """The bytes of one golden buffer, by id."""
    return next(buf for n, buf, _ in GOLDEN_BUFFERS if n == name)


def _value(key, value, handles, scalar=None):
    if scalar is not None and isinstance(value, (bool, int)):
        return scalar(value)
    if key in SHAPE_ARGS and isinstance(value, list):
        value = [_value(key, v, handles, scalar) for v in value]
        return bm1880.shape_t4(*value) if len(value) == 4 else bm1880.shape_t2(*value)
    if key in STRIDE_ARGS and isinstance(value, list):
        value = [_value(key, v, handles, scalar) for v in value]
        return bm1880.stride_t4(*value) if len(value) == 4 else bm1880.stride_t2(*value)
    if isinstance(value, str):
        if value in CONSTANTS:
            return CONSTANTS[value]
        return handles[value]
    return value


def run_calls(case, scalar=None):
    """Run every call; return the list of (ctx name, bytes) of each acquire_cmdbuf.

    scalar: optional function applied to every int and bool argument (e.g. to pass numpy
    scalars instead)."""
    handles, contexts, acquired = {}, {}, []

    def walk(calls):
        for call in calls:
            api, args = call["api"], call.get("args", {})
            if api == "repeat":
                for _ in range(args["count"]):
                    walk(args["body"])
                continue
            if api == "register":
                ctx = bm1880.register(**{k: _value(k, v, handles, scalar) for k, v in args.items()})
                contexts[call.get("as", "ctx")] = ctx
                continue
            ctx_name = call.get("ctx", "ctx")
            if api == "TensorGmem":
                result = bm1880.TensorGmem(**{k: _value(k, v, handles, scalar) for k, v in args.items()})
            else:
                kwargs = {k: _value(k, v, handles, scalar) for k, v in args.items()}
                result = getattr(contexts[ctx_name], api)(**kwargs)
                if api == "acquire_cmdbuf":
                    acquired.append((ctx_name, result))
            if "as" in call:
                handles[call["as"]] = result

    walk(case["calls"])
    return acquired
