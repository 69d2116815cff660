"""Issue 22.9: the chips' APIs behave alike where the seeds agree."""
import pytest

import bmk
from bmk import bm1684, bm1684x, bm1880


@pytest.mark.parametrize("make", [bm1684.Context, bm1684x.Context, lambda: bm1880.register()], ids=["bm1684", "bm1684x",
                                                                                                   "bm1880"])
@pytest.mark.parametrize("acquire", ["acquire_cmdbuf", "acquire_streams"])
def test_acquire_after_cleanup_raises(make, acquire):
    ctx = make()
    getattr(ctx, acquire)()
    ctx.cleanup()
    with pytest.raises(bmk.ArgumentError, match=f"^{acquire}: the context was cleaned up"):
        getattr(ctx, acquire)()
