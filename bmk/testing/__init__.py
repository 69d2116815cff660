"""Helpers for projects that check their kernels' command buffers in CI.

    from bmk.testing import assert_cmdbuf_equal
    assert_cmdbuf_equal(ctx.acquire_cmdbuf(), Path("conv.cmdbuf").read_bytes())

The pytest plugin (`bmk.testing.plugin`, loaded through the `pytest11` entry point) adds the
`cmdbuf_golden` fixture and the `--bmk-update-golden` option; see docs/ci.md.
"""
import os

__all__ = ["assert_cmdbuf_equal", "cmdbuf_diff"]


def _listing(value, chip, name):
    from bmk.text import loading
    if isinstance(value, os.PathLike) or (isinstance(value, str) and "\n" not in value
                                          and os.path.isfile(value)):
        return loading.load_path(value, chip)
    if isinstance(value, str):                     # assembly text
        return loading.load(value.encode("utf-8"), chip, name)
    return loading.load(bytes(value), chip, name)


def cmdbuf_diff(actual, expected, *, chip=None, ignore=()):
    """The Diff (bmk.text.diff.Diff) of two buffers; each is bytes, assembly text or a path."""
    from bmk.text import diff as diffing
    a = _listing(actual, chip, "actual")
    b = _listing(expected, chip or a.chip, "expected")
    return diffing.diff_listings(b, a, ignore)


def assert_cmdbuf_equal(actual, expected, *, chip=None, ignore=(), max_entries=50):
    """Raise AssertionError, with the field-level diff (expected -> actual) as message, unless equal.

    `actual`/`expected`: command buffer bytes, assembly text (str with a newline), or a path.
    `ignore`: field names (or the aliases id, wait, sync) left out of the comparison.
    Input that is not a valid buffer raises bmk.BmkError, not AssertionError.
    """
    result = cmdbuf_diff(actual, expected, chip=chip, ignore=ignore)
    if not result.equal:
        raise AssertionError("command buffers differ (expected -> actual)\n" + result.to_text(limit=max_entries))
