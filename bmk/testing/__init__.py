"""Helpers for projects that check their kernels' command buffers in CI.

    from bmk.testing import assert_cmdbuf_equal
    assert_cmdbuf_equal(ctx.acquire_cmdbuf(), Path("conv.cmdbuf").read_bytes())
    assert_cmdbuf_equal(ctx.acquire_streams(), Path("conv.cmdbuf"))      # raw streams too

Wherever a buffer is taken, raw streams are taken too: the `{engine: bytes}` of
`ctx.acquire_streams()` (which names its chip), or a plain dict with `chip=`. When either side
is raw streams, the comparison is per engine (bmk.text.diff, order "engine").

The pytest plugin (`bmk.testing.plugin`, loaded through the `pytest11` entry point) adds the
`cmdbuf_golden` fixture and the `--bmk-update-golden` option; see docs/ci.md.
"""
import os

from bmk.errors import BmkError

__all__ = ["assert_cmdbuf_equal", "cmdbuf_diff", "listing_of"]


def _is_path(value):
    return isinstance(value, os.PathLike) or (isinstance(value, str) and "\n" not in value
                                              and os.path.isfile(value))


def listing_of(value, chip=None, name="<input>"):
    """A Listing (bmk.text.loading) of bytes, raw streams ({engine: bytes}), assembly text (a
    str with a newline) or a path. Raises BmkError for anything else."""
    from bmk.encoders.framing import chip_of_streams
    from bmk.text import loading
    if isinstance(value, dict):
        chip = chip or chip_of_streams(value)
        if chip is None:
            raise BmkError(f"{name}: raw streams carry no magic byte: pass chip= (or use ctx.acquire_streams(), "
                           f"whose result names its chip)")
        return loading.load_streams(value, chip, name)
    if _is_path(value):
        return loading.load_path(value, chip, name)
    if isinstance(value, str):                     # assembly text
        return loading.load(value.encode("utf-8"), chip, name)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return loading.load(bytes(value), chip, name)
    raise BmkError(f"{name} must be a command buffer (bytes), raw streams ({{engine: bytes}}), assembly text or a "
                   f"path, not {type(value).__name__}")


def cmdbuf_diff(actual, expected, *, chip=None, ignore=(), order=None):
    """The Diff (bmk.text.diff.Diff) of two programs, expected -> actual; each is bytes, raw
    streams, assembly text or a path. `order`: "program", "engine", or None (engine when
    either side is raw streams)."""
    from bmk.text import diff as diffing
    if isinstance(actual, dict) and not isinstance(expected, dict):    # the side that names its chip first
        b = listing_of(expected, chip, "expected")
        a = listing_of(actual, chip or b.chip, "actual")
    else:
        a = listing_of(actual, chip, "actual")
        b = listing_of(expected, chip or a.chip, "expected")
    return diffing.diff_listings(b, a, ignore, order)


def assert_cmdbuf_equal(actual, expected, *, chip=None, ignore=(), max_entries=50, order=None):
    """Raise AssertionError, with the field-level diff (expected -> actual) as message, unless equal.

    `actual`/`expected`: command buffer bytes, raw streams (`ctx.acquire_streams()`), assembly
    text (str with a newline), or a path. `ignore`: field names (or the aliases id, wait, sync,
    wait.<engine>) left out of the comparison. Raw streams on either side are compared per
    engine (`order`). Input that is not a valid buffer raises bmk.BmkError, not AssertionError.
    """
    __tracebackhide__ = True     # pytest: the failure is the diff, not this frame's raw-bytes arguments
    result = cmdbuf_diff(actual, expected, chip=chip, ignore=ignore, order=order)
    if not result.equal:
        raise AssertionError("command buffers differ (expected -> actual)\n" + result.to_text(limit=max_entries))
