"""Where each instruction came from (issue 22 item 3): the API call and the user's line, in
ctx.origins(), ctx.listing(), a saved kernel's sidecar, bmk-disasm, bmk-run races and traces."""
import json

import pytest
from click.testing import CliRunner

import bmk
from bmk import bm1684x as x
from bmk import bm1880
from bmk.cli.main import asm, disasm, run
from bmk.origins import SUFFIX
from bmk.text import asm as asmtext

G = 0x100000000
S = x.dim4(1, 64, 8, 8)
HERE = __file__.rsplit("/", 1)[-1]


def racing_kernel():
    """A load and a compute on the same local bytes in one parallel section: they race."""
    ctx = x.Context()
    ctx.parallel_start()
    ctx.gdma_cpy_S2L(0, G, S, None, None, x.DT_INT16)
    load_line = _line() - 1
    ctx.bdc_min_C(0x1000, 0, 100, S, None, None, x.DT_INT16)
    min_line = _line() - 1
    ctx.parallel_end()
    ctx.gdma_cpy_L2S(G + 0x10000, 0x1000, S, None, None, x.DT_INT16)
    return ctx, load_line, min_line


def _line():
    import sys
    return sys._getframe(1).f_lineno


def test_every_instruction_names_its_call_and_the_users_line():
    ctx, load_line, min_line = racing_kernel()
    origins = ctx.origins()
    assert len(origins) == len(bmk.decode("bm1684x", ctx.acquire_cmdbuf()))
    load, mn, store, end_tiu, end_gdma = origins
    assert (load.call, load.line, load.file) == ("gdma_cpy_S2L", load_line, __file__)
    assert (mn.call, mn.line) == ("bdc_min_C", min_line)
    assert mn.args == "0x1000, 0, 100, dim4(n=1, c=64, h=8, w=8), None, None, DT_INT16"
    assert store.call == "gdma_cpy_L2S" and end_tiu is None and end_gdma is None
    assert ctx.origin(1) == mn and ctx.origin(4) is None
    assert str(mn) == f"{HERE}:{min_line} bdc_min_C(0x1000, 0, 100, dim4(n=1, c=64, h=8, w=8), None, None, DT_INT16)"


def test_keyword_calls_and_module_functions_name_the_users_line():
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, bm1880.shape_t4(1, 32, 8, 8), bm1880.FMT_I8)
    ctx.tpu_relu(ofmap=t, ifmap=t)
    line = _line() - 1
    o = ctx.origins()[0]
    assert (o.call, o.line, o.file) == ("tpu_relu", line, __file__)
    assert o.args.startswith("ofmap=") and ", ifmap=" in o.args


def test_the_listing_names_the_origins_and_reads_back_to_the_same_bytes():
    ctx, load_line, min_line = racing_kernel()
    text = ctx.listing()
    lines = [ln for ln in text.splitlines() if not ln.startswith(".")]
    assert lines[0].endswith(f"# {HERE}:{load_line} gdma_cpy_S2L(0, 0x100000000, dim4(n=1, c=64, h=8, w=8), "
                             "None, None, DT_INT16)")
    assert f"# {HERE}:{min_line} bdc_min_C(" in lines[1]
    assert "#" not in lines[3]                      # the end commands have no origin
    assert bmk.encode("bm1684x", asmtext.parse(text).records) == ctx.acquire_cmdbuf()


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_a_saved_kernel_keeps_its_origins_for_disasm_and_run(runner, tmp_path):
    ctx, load_line, min_line = racing_kernel()
    assert ctx.save("k.bin") == ["k.bin"]
    assert (tmp_path / f"k.bin{SUFFIX}").is_file()
    res = runner.invoke(disasm, ["k.bin"])
    assert res.exit_code == 0 and f"# {HERE}:{min_line} bdc_min_C(" in res.stdout
    res = runner.invoke(asm, ["-", "-o", "again.bin"], input=res.stdout)
    assert res.exit_code == 0 and (tmp_path / "again.bin").read_bytes() == (tmp_path / "k.bin").read_bytes()
    res = runner.invoke(run, ["k.bin", "--trace", "t.json"])
    assert res.exit_code == 0
    race = next(ln for ln in res.stdout.splitlines() if "race:" in ln)
    assert race.endswith(f": {HERE}:{load_line} gdma_cpy_S2L(0, 0x100000000, dim4(n=1, c=64, h=8, w=8), None, "
                         f"None, DT_INT16) and {HERE}:{min_line} bdc_min_C(0x1000, 0, 100, dim4(n=1, c=64, h=8, w=8), "
                         "None, None, DT_INT16)")
    events = [e for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"] if e["ph"] == "X"]
    assert [e["args"].get("origin", "").split(" ")[0] for e in events] == \
        [f"{HERE}:{load_line}", f"{HERE}:{min_line}", f"{HERE}:{min_line + 3}", "", ""]
    res = runner.invoke(run, ["k.bin", "--json"])
    assert json.loads(res.stdout)["races"][0]["origins"][1].startswith(f"{HERE}:{min_line} bdc_min_C(")


def test_raw_streams_keep_their_origins_per_engine(runner, tmp_path):
    ctx, load_line, min_line = racing_kernel()
    assert ctx.save("k", raw=True) == ["k.tiu.bin", "k.gdma.bin"]
    args = ["--chip", "bm1684x", "--raw", "tiu", "k.tiu.bin", "--raw", "gdma", "k.gdma.bin"]
    res = runner.invoke(disasm, args)
    assert res.exit_code == 0
    by_kind = {ln.split()[2]: ln.split("# ")[-1] for ln in res.stdout.splitlines()[1:] if "# " in ln}
    assert by_kind["tiu.arith.min"].startswith(f"{HERE}:{min_line} bdc_min_C(")
    res = runner.invoke(run, args)
    assert f"{HERE}:{load_line} gdma_cpy_S2L(" in res.stdout and f"{HERE}:{min_line} bdc_min_C(" in res.stdout


def test_a_sidecar_that_does_not_fit_is_a_clear_error(runner, tmp_path):
    ctx, _, _ = racing_kernel()
    ctx.save("k.bin")
    side = tmp_path / f"k.bin{SUFFIX}"
    data = json.loads(side.read_text())
    side.write_text(json.dumps({**data, "instructions": data["instructions"][:-1]}))
    res = runner.invoke(disasm, ["k.bin"])
    assert res.exit_code == 2
    assert f"k.bin{SUFFIX}: gives the origins of 4 instructions, but k.bin has 5" in res.stderr
    side.write_text("{not json")
    res = runner.invoke(run, ["k.bin"])
    assert res.exit_code == 2 and f"k.bin{SUFFIX}: not a bmk origins sidecar" in res.stderr
    side.write_text(json.dumps({**data, "instructions": [7] * 5}))
    assert runner.invoke(disasm, ["k.bin"]).exit_code == 2


def test_recording_can_be_turned_off_for_a_stretch_of_calls():
    ctx = x.Context()
    ctx.gdma_cpy_S2L(0, G, S, None, None, x.DT_INT16)
    ctx.record_origins = False
    ctx.bdc_min_C(0x1000, 0, 100, S, None, None, x.DT_INT16)
    ctx.bdc_min_C(0x1000, 0, 99, S, None, None, x.DT_INT16)
    ctx.record_origins = True
    ctx.gdma_cpy_L2S(G + 0x10000, 0x1000, S, None, None, x.DT_INT16)
    assert [None if o is None else o.call for o in ctx.origins()] == \
        ["gdma_cpy_S2L", None, None, "gdma_cpy_L2S", None, None]
    quiet = x.Context()
    quiet.record_origins = False
    quiet.bdc_min_C(0x1000, 0, 100, S, None, None, x.DT_INT16)
    assert quiet.origins() == (None, None, None) and quiet.origin(0) is None
    assert quiet.listing().count("#") == 0


def test_positional_and_keyword_arguments_are_both_kept():
    ctx = x.Context()
    ctx.bdc_min_C(0x1000, 0, 100, S, None, None, dtype=x.DT_INT16)
    ctx.bdc_min_C(0x1000, 0, 100, S, None, None, x.DT_INT16)
    a, b = ctx.origins()[:2]
    assert a.args == "0x1000, 0, 100, dim4(n=1, c=64, h=8, w=8), None, None, dtype=DT_INT16"
    assert b.args == "0x1000, 0, 100, dim4(n=1, c=64, h=8, w=8), None, None, DT_INT16"


def test_origins_in_the_order_of_the_raw_streams():
    """sim.run(ctx.acquire_streams()) runs the instructions merged by sync ids (another valid
    order than acquire_cmdbuf's: the end commands first): origins(streams=True) follows it, so
    a race found on the streams names the right two lines."""
    from bmk.sim.core import Simulator
    ctx, load_line, min_line = racing_kernel()
    streams = ctx.acquire_streams()
    recs = bmk.decode("bm1684x", streams)
    by_stream = ctx.origins(streams=True)
    assert len(by_stream) == len(recs) == len(ctx.origins())
    assert [r.kind for r in recs] != [r.kind for r in bmk.decode("bm1684x", ctx.acquire_cmdbuf())]   # the orders differ
    assert by_stream.count(None) == ctx.origins().count(None)            # the end commands
    assert sorted(map(str, filter(None, by_stream))) == sorted(map(str, filter(None, ctx.origins())))
    for r, o in zip(recs, by_stream):
        if r.kind == "arith.min":
            assert (o.file.endswith(HERE), o.line, o.call) == (True, min_line, "bdc_min_C")
    report = Simulator("bm1684x").run(streams).named(by_stream)
    (race,) = report.races
    assert sorted(race.origins) == sorted([str(o) for o in by_stream if o is not None and o.line in (load_line, min_line)])


def test_origins_follow_the_caller_across_modules_helpers_and_long_calls():
    """The origin is recorded raw (the caller's code and instruction) and made into text when
    asked: calls alternating between two user modules, through a module of bmk's own, and a
    call spread over several lines each name the line Python reports for the call."""
    import types
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, bm1880.shape_t4(1, 32, 8, 8), bm1880.FMT_I8)
    other = types.ModuleType("user_kernel_b")
    exec(compile("import sys\ndef relu(ctx, t):\n    ctx.tpu_relu(ofmap=t, ifmap=t)\n"
                 "    return sys._getframe().f_lineno - 1\n", "kernel_b.py", "exec"), other.__dict__)
    helper = types.ModuleType("bmk.helper_for_test")        # a frame of bmk's own: skipped
    exec(compile("def relu(ctx, t):\n    ctx.tpu_relu(ofmap=t, ifmap=t)\n", "bmk_helper.py", "exec"), helper.__dict__)
    expected = []
    for i in range(3):
        ctx.tpu_relu(ofmap=t, ifmap=t)
        expected.append((__file__, _line() - 1))
        expected.append(("kernel_b.py", other.relu(ctx, t)))
        helper.relu(ctx, t)
        expected.append((__file__, _line() - 1))
    ctx.tpu_relu(
        ofmap=t,
        ifmap=t)
    call_line = _line() - 3
    expected.append((__file__, call_line))
    got = [(o.file, o.line) for o in ctx.origins()]
    assert got == expected
    assert all(o.call == "tpu_relu" and o.args.startswith("ofmap=") for o in ctx.origins())



def test_the_callers_code_is_kept_per_run_of_calls_from_one_function():
    """The caller's code object is logged when it changes: a direct call after one through bmk's
    own code (whose user frame is another function of the same module), and after a stretch
    without origins, still names its own function's line."""
    import types
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, bm1880.shape_t4(1, 32, 8, 8), bm1880.FMT_I8)

    def direct():
        ctx.tpu_relu(ofmap=t, ifmap=t)
        return _line() - 1
    helper = types.ModuleType("bmk.helper_for_runs")        # a frame of bmk's own: skipped
    exec(compile("def relu(ctx, t):\n    ctx.tpu_relu(ofmap=t, ifmap=t)\n", "bmk_helper.py", "exec"), helper.__dict__)
    expected = []
    for _ in range(2):
        expected.append((__file__, direct()))
        helper.relu(ctx, t)
        expected.append((__file__, _line() - 1))
        expected.append((__file__, direct()))
        expected.append((__file__, direct()))
        ctx.record_origins = False
        direct()
        ctx.record_origins = True
        expected.append(None)
    got = [None if o is None else (o.file, o.line) for o in ctx.origins()]
    assert got[:len(expected)] == expected and all(o is None for o in got[len(expected):])  # end commands
    assert [None if o is None else (o.file, o.line) for o in map(ctx.origin, range(len(expected)))] == expected
    assert len({id(c) for c in ctx._run_codes if c is not None}) == 2       # direct() and this test


def test_a_call_with_no_frame_outside_bmk_has_an_unknown_origin():
    """When every frame is bmk's own, the call is kept with origin_log._UNKNOWN's frame: its
    origin names file <unknown>, line 0 (as origins.caller does)."""
    from bmk import origin_log
    ctx = bm1880.register()
    t = ctx.tl_prealloc(0, bm1880.shape_t4(1, 32, 8, 8), bm1880.FMT_I8)
    ctx.tpu_relu(ofmap=t, ifmap=t)
    ctx._run_codes[0], ctx._call_lastis[0] = origin_log._UNKNOWN.f_code, origin_log._UNKNOWN.f_lasti
    o = ctx.origin(0)
    assert (o.call, o.file, o.line) == ("tpu_relu", "<unknown>", 0)
    assert str(o).startswith("<unknown>:0 tpu_relu(ofmap=")


def test_an_origin_shows_the_list_the_call_passed_not_what_it_became():
    """A list argument changed after the call (a stride reused for the next tensor): each origin
    shows the values its call passed, positional or by name."""
    ctx = x.Context()
    stride = [64, 16, 16, 1]
    shape = x.dim4(1, 8, 1, 16)
    ctx.gdma_cpy_S2L(0, G, shape, stride, None, x.DT_INT8)
    stride[0] = 128
    ctx.gdma_cpy_S2L(0, G, shape, dst_stride=stride, src_stride=None, dtype=x.DT_INT8)
    stride[0] = 5
    first, second = (str(o) for o in ctx.origins()[:2])
    assert first.endswith("gdma_cpy_S2L(0, 0x100000000, dim4(n=1, c=8, h=1, w=16), [64, 16, 16, 1], None, DT_INT8)")
    assert second.endswith("dst_stride=[128, 16, 16, 1], src_stride=None, dtype=DT_INT8)")
