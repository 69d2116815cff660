"""pytest plugin (entry point `bmk`): the `cmdbuf_golden` fixture and `--bmk-update-golden`.

    def test_conv_layer(cmdbuf_golden):
        ctx = bm1880.register(chip_version=1880, cmdbuf_size=1 << 20)
        ...
        cmdbuf_golden(ctx.acquire_cmdbuf())     # compares with test_conv_layer.cmdbuf next to this file

`pytest --bmk-update-golden` (re)writes the .cmdbuf files instead of comparing.
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

    def __call__(self, actual, name=None, *, ignore=(), chip=None):
        from bmk.testing import assert_cmdbuf_equal
        path = self.path(name)
        if path in self.checked:
            raise ValueError(f"cmdbuf_golden: {path.name} was already checked in this test; pass name=...")
        self.checked.append(path)
        actual = bytes(actual)
        if self.update:
            if not path.exists() or path.read_bytes() != actual:
                path.write_bytes(actual)
            return path
        if not path.exists():
            pytest.fail(f"cmdbuf_golden: {path} does not exist; run pytest --bmk-update-golden to create it",
                        pytrace=False)
        assert_cmdbuf_equal(actual, path.read_bytes(), ignore=ignore, chip=chip)
        return path


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


@pytest.fixture
def cmdbuf_golden(request):
    """Compare command buffers with goldens stored next to the test file (see bmk.testing.plugin)."""
    return CmdbufGolden(Path(request.node.path).parent, _sanitize(request.node.name),
                        request.config.getoption("bmk_update_golden"))
