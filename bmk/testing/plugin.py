"""pytest plugin (entry point `bmk`): the `cmdbuf_golden` fixture and `--bmk-update-golden`.

    def test_conv_layer(cmdbuf_golden):
        ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
        ...
        cmdbuf_golden(ctx.acquire_cmdbuf())     # compares with test_conv_layer.cmdbuf next to this file
        cmdbuf_golden(ctx.acquire_streams(), "conv_streams")   # raw streams: compared engine by engine

`pytest --bmk-update-golden` (re)writes the .cmdbuf files instead of comparing. A golden keeps
its form: one that is equal is left alone (a golden written from acquire_cmdbuf() stays when the
test now passes acquire_streams()), a text golden is rewritten as text, and a new golden is a
cmd_hdr_t buffer (raw streams are framed in program order: the file names its chip).
"""
import re
from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("bmk")
    group.addoption("--bmk-update-golden", action="store_true", default=False,
                    help="bmk: write command buffers passed to cmdbuf_golden as the new .cmdbuf goldens")


class CmdbufGolden:
    """Callable: cmdbuf_golden(buf, name=None, ignore=()) checks buf against <test dir>/<name>.cmdbuf."""

    def __init__(self, directory, default_name, update):
        self.directory = Path(directory)
        self.default_name = default_name
        self.update = update
        self.checked = []

    def path(self, name=None):
        name = name or self.default_name
        return self.directory / (name if name.endswith(".cmdbuf") else name + ".cmdbuf")

    def __call__(self, actual, name=None, *, ignore=(), chip=None, order=None):
        __tracebackhide__ = True     # the failure is the diff, not this frame's raw-bytes arguments
        from bmk.testing import assert_cmdbuf_equal
        path = self.path(name)
        if path in self.checked:
            raise ValueError(f"cmdbuf_golden: {path.name} was already checked in this test; pass name=...")
        self.checked.append(path)
        if not isinstance(actual, dict):
            actual = bytes(actual)
        if self.update:
            _update(path, actual, chip, order)
            return path
        if not path.exists():
            pytest.fail(f"cmdbuf_golden: {path} does not exist; run pytest --bmk-update-golden to create it",
                        pytrace=False)
        assert_cmdbuf_equal(actual, path, ignore=ignore, chip=chip, order=order)
        return path


def _update(path, actual, chip, order):
    """(Re)write a golden in its own form (module docstring); an unreadable one as bytes."""
    from bmk.encoders.framing import encode_cmdbuf
    from bmk.errors import BmkError
    from bmk.testing import cmdbuf_diff, listing_of
    from bmk.text.asm import disassemble
    from bmk.text.loading import is_text
    if path.exists():
        old = path.read_bytes()
        try:
            same = old == actual or cmdbuf_diff(actual, path, chip=chip, order=order).equal
        except BmkError:
            same = None
        if same:
            return
        if same is not None and is_text(old):
            listing = listing_of(actual, chip, "actual")
            path.write_text(disassemble(listing.chip, listing.records))
            return
    if isinstance(actual, dict):
        listing = listing_of(actual, chip, "actual")
        actual = encode_cmdbuf(listing.chip, listing.records)
    path.write_bytes(actual)


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


@pytest.fixture
def cmdbuf_golden(request):
    """Compare command buffers with goldens stored next to the test file (see bmk.testing.plugin)."""
    return CmdbufGolden(Path(request.node.path).parent, _sanitize(request.node.name),
                        request.config.getoption("bmk_update_golden"))
