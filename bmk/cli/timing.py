"""`bmk time` and `bmk profile`: a timeline from bmk's cost models, and a chip's measured
cycles read from the vendor's profile (bmk/timing)."""
import time

from bmk.errors import ArgumentError


def read_streams(chip, streams):
    """[{engine: [Record]}] per core from (core, engine, path) triples, each file decoded on its own
    (a DecodeError names the file); ArgumentError for an engine the chip lacks."""
    from bmk.encoders.framing import decode
    from bmk.errors import DecodeError
    from bmk.isa import load_chip
    spec = load_chip(chip) if isinstance(chip, str) else chip
    names = {}
    for e in spec.encoded_engines:
        names[e.name] = e.name
        names.update({a: e.name for a in e.aliases})
    cores = [{} for _ in range(max(c for c, _, _ in streams) + 1)]
    for core, engine, path in streams:
        if engine not in names:
            raise ArgumentError(f"--streams: engine must be one of {sorted(names)} for {spec.name}, not {engine!r}")
        with open(path, "rb") as f:
            data = f.read()
        try:
            cores[core][names[engine]] = list(decode(spec, {names[engine]: data}))
        except DecodeError as e:
            text = str(e)
            raise DecodeError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    return cores


def time_input(files, chip, raw, streams):
    """(chip name, timeline entries, what was read) of `bmk time`'s input."""
    from bmk.cli import models
    from bmk.cli.files import _load_input, fail
    from bmk.timing.timeline import timeline
    if streams:
        if files or raw:
            fail("give either MODEL|FILE, --raw or --streams, not several")
        if not chip:
            fail("--streams needs --chip (raw streams do not name their chip)")
        cores = read_streams(chip, streams)
        return chip, timeline(chip, cores), f"raw streams, {len(cores)} core{'s' * (len(cores) != 1)}"
    if len(files) > 1:
        fail("give one MODEL|FILE (several cores: --streams CORE ENGINE FILE)")
    path = files[0] if files else None
    if path and models.sniff(path) and not raw:
        if chip:
            fail("--chip does not apply to a model (it names its chip)")
        m = models.load(path)
        return m.chip, timeline(m.chip, m), "model"
    listing = _load_input(path, chip, raw)
    per = {}
    for r in listing.records:
        per.setdefault(r.engine, []).append(r)
    return listing.chip.name, timeline(listing.chip, per), "raw streams" if raw else "buffer"


def read_layer_log(path):
    """{(core, engine, index): layer} from the vendor's global.profile at `path`."""
    from bmk.timing.profile import read_layers
    with open(path, encoding="utf-8", errors="replace") as f:
        got = read_layers(f.read())
    if not got:
        raise ArgumentError(f"--layers: {path}: line 1: no layer with commands (a global.profile names "
                            f"'local_layer:' lines followed by 'gdma cmd_id' lines)")
    return got


def run_time(files, chip, raw, streams, per_layer, per_kind, trace, layers=None):
    """`bmk time` (bmk/cli/main.py `time_cmd`): the timeline's summary printed, its trace written."""
    from bmk.cli.files import _write_lines
    from bmk.timing.report import per_kind_lines, per_layer_lines, summary_lines, write_trace
    t0 = time.perf_counter()
    name, entries, what = time_input(files, chip, raw, streams)
    where = files[0] if files else " ".join(p for _, p in raw) if raw else " ".join(p for _, _, p in streams)
    lines = [f"{where}: {name} {what}, times from bmk's cost model"]
    lines += summary_lines(entries)
    if per_layer and layers:
        lines.append(f"per layer ({layers}):")
        lines += per_layer_lines(read_layer_log(layers), [("bmk", entries)])
    elif per_layer:
        lines.append("per layer: the input maps no command to a layer (bmodel groups and raw streams carry no "
                     "layer ids; --layers global.profile gives the vendor's); per kind instead:")
        lines += per_kind_lines(entries)
    if per_kind:
        lines.append("per kind:")
        lines += per_kind_lines(entries)
    if trace:
        write_trace(trace, entries, name, "bmk's cost model")
        lines.append(f"trace: {trace}")
    lines.append(f"({len(entries)} commands timed in {time.perf_counter() - t0:.2f} s)")
    _write_lines("-", lines)


def run_profile(profile, streams, chip, net_stat, trace, layers=None):
    """`bmk profile` (bmk/cli/main.py `profile_cmd`): the measured timeline's summary, the per-kind
    table of measured vs estimated, the measured trace."""
    from bmk.cli.files import _write_lines, fail
    from bmk.timing.compare import compare, measured_timeline, summary, table
    from bmk.timing.report import per_layer_lines, summary_lines, write_trace
    if not streams:
        fail("missing --streams CORE ENGINE FILE (the streams the profile measured)")
    cores = read_streams(chip, streams)
    with open(profile, "rb") as f:
        data = f.read()
    stat = None
    if net_stat:
        with open(net_stat, encoding="utf-8", errors="replace") as f:
            stat = f.read()
    entries = measured_timeline(chip, cores, data, profile)
    lines = [f"{profile}: {chip}, times the chip measured"] + summary_lines(entries) + [""]
    cmp = compare(chip, cores, data, stat, profile)
    lines += table(cmp) + [""] + summary(cmp)
    if layers:
        from bmk.timing.timeline import timeline
        lines += ["", f"per layer ({layers}): measured vs bmk's timeline"]
        lines += per_layer_lines(read_layer_log(layers), [("measured", entries), ("bmk", timeline(chip, cores))])
    if trace:
        write_trace(trace, entries, chip, f"measured on the chip ({profile})")
        lines.append(f"trace: {trace}")
    _write_lines("-", lines)
