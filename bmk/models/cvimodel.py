"""The cvimodel container (CV180X, CV181X, CV182X, CV183X) -> a Model.

Facts: isa-facts/cvimodel-format.md (tpu-mlir cvimodel.fbs, model_tool cv_tool.hpp). A 48-byte
header (magic "CviModel", u32 body_size, major, minor, md5, 16-byte chip name, 2 bytes of
padding), the FlatBuffer (root table `Model`, field id = declaration order), then the section
payloads, `Section.offset` counted from the end of the FlatBuffer.

Mapping onto bmk's model objects: the file is one net (named `Model.name`); each `Program` is
a stage (one per batch size); each `Routine` a subnet (TPU or CPU); a TPU routine's CMDBUF
section is its one command group, a cmd_hdr_t-framed buffer (`Group.cmdbuf`, section 4 of the
facts), not raw streams. The WEIGHT section is the stage's coefficients; their address is the
memory-region tag the weights' offsets carry (bit 40 in the files checked).
"""
import struct

from bmk import dtypes
from bmk.errors import ModelError
from bmk.models import chips, magic
from bmk.models.flat import FlatBuffer
from bmk.models.model import Blob, Group, IOTensor, Model, Net, Region, Stage, Subnet
from bmk.models.regions import REGION_TAG_BITS

MAGIC = magic.CVIMODEL
HEADER = struct.Struct("<8sIBB16s16s2s")     # magic, body_size, major, minor, md5, chip, padding
HEADER_SIZE = HEADER.size                    # 48
# Weight.offset = tag << REGION_TAG_BITS | offset in the WEIGHT section (the fact: bmk/models/regions.py)

# Tensor.dtype / Weight.type (cvimodel.fbs DType).
DATA_TYPES = {0: dtypes.FP32, 1: dtypes.INT32, 2: dtypes.UINT32, 3: dtypes.BF16, 4: dtypes.INT16,
              5: dtypes.UINT16, 6: dtypes.INT8, 7: dtypes.UINT8}
SECTION_WEIGHT, SECTION_CMDBUF = 0, 1
ROUTINE_TPU, ROUTINE_CPU = 0, 1


class M:  # Model
    version, name, build_time, preprocess_hints, postprocess_hints, weight_map, programs, sections, target = range(9)


class PR:  # Program
    batch_num, neuron_size, input_tensors, output_tensors, tensor_map, routines, shared_gmem, private_gmem = range(8)


class R:  # Routine
    type, in_tensors, out_tensors, tpu_routine, cpu_routine = range(5)


class CR:  # CpuRoutine
    function_section, function_args = range(2)


class SE:  # Section
    type, name, size, offset, encrypt, compress = range(6)


class T:  # Tensor
    tensor_id, name, offset, dtype, shape, stride, quant, overwrote, scale, mean, pixel_format, aligned, size = range(13)


class Q:  # QuantInfo
    type, max_value, min_value, zero_point, qscale = range(5)


class W:  # Weight
    name, offset, size = range(3)


def read(data, path):
    """bytes of a .cvimodel file -> Model. ModelError for any defect (file, offset, rule)."""
    if len(data) < HEADER_SIZE:
        raise ModelError(f"truncated cvimodel header: {len(data)} bytes, a header is {HEADER_SIZE}", path, 0)
    magic, body_size, major, minor, _md5, chip, _pad = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise ModelError(f"bad magic {magic!r}, a cvimodel starts with {MAGIC!r}", path, 0)
    if (major, minor) == (1, 0):
        raise ModelError("a version 1.0 cvimodel (0x20-byte header) is a layout bmk does not read", path, 12)
    if body_size > len(data) - HEADER_SIZE:
        raise ModelError(f"truncated file: a {body_size}-byte FlatBuffer after the {HEADER_SIZE}-byte header needs "
                         f"{HEADER_SIZE + body_size} bytes, the file has {len(data)}", path, 8)
    payload = HEADER_SIZE + body_size
    root = FlatBuffer(data, HEADER_SIZE, body_size, path).root("Model")
    target = chip.split(b"\0", 1)[0].decode("ascii", "replace") or root.string(M.target, "target")
    if not target:
        raise ModelError("the header's chip name and Model.target are empty: the file does not say which chip "
                         "it is for", path, 30)
    sections = {}
    for node in root.tables(M.sections, "sections"):
        name = node.string(SE.name, "name")
        offset, size = node.scalar(SE.offset, "u32", "offset"), node.scalar(SE.size, "u32", "size")
        if offset > len(data) - payload or size > len(data) - payload - offset:
            raise ModelError(f"{node.name} {name!r}: bytes [{offset}, {offset + size}) must lie inside the "
                             f"{len(data) - payload} bytes after the FlatBuffer", path, node.where())
        sections[name] = (node.scalar(SE.type, "u8", "type"), Blob(payload + offset, size),
                          node.scalar(SE.encrypt, "bool", "encrypt"), node.scalar(SE.compress, "bool", "compress"),
                          node)
    coeff = _weights(root, sections)
    name = root.string(M.name, "name")
    chip_name = chips.chip_name(target)
    stages = tuple(_stage(i, p, sections, coeff, data, path, chip_name)
                   for i, p in enumerate(root.tables(M.programs, "programs")))
    version = f"{major}.{minor}"
    return Model(path, "cvimodel", chips.chip_name(target), target, (Net(0, name, stages),), version,
                 root.string(M.build_time, "build_time").strip(),
                 max((st.neuron.size for st in stages), default=0), 0, None, data)


def _weights(root, sections):
    """The WEIGHT section as a coefficient Region at its weights' region tag."""
    weight = next((s for s in sections.values() if s[0] == SECTION_WEIGHT), None)
    if weight is None:
        return None
    offsets = [w.scalar(W.offset, "i64", "offset") for w in root.tables(M.weight_map, "weight_map")]
    tag = (min(offsets) >> REGION_TAG_BITS) << REGION_TAG_BITS if offsets and min(offsets) >= 0 else 0
    return Region(tag, weight[1].size, weight[1], "", bool(weight[2]))


def _tensor(node, path):
    code = node.scalar(T.dtype, "u8", "dtype")
    dtype = DATA_TYPES.get(code)
    if dtype is None:
        raise ModelError(f"{node.name}.dtype must be one of {sorted(DATA_TYPES)}, not {code}", path, node.where())
    shape_node = node.table_at(T.shape, "shape")
    shape = tuple(int(d) for d in shape_node.scalars(0, "i64", "dim")) if shape_node is not None else ()
    quant = node.table_at(T.quant, "quant")
    scale = quant.scalar(Q.qscale, "f32", "qscale", 1.0) if quant is not None else 1.0
    zero = quant.scalar(Q.zero_point, "f32", "zero_point", 0.0) if quant is not None else 0.0
    size = node.scalar(T.size, "u32", "size")
    return IOTensor(node.string(T.name, "name"), dtype, shape, node.scalar(T.offset, "i64", "offset"), "1N",
                    scale, zero, size, (shape,))


def _cpu_function(routine, data, path):
    """A CPU routine's function name and parameters (bmk/models/cpu/params.py)."""
    from bmk.models.cpu.params import CpuFunction, read_params
    cpu = routine.table_at(R.cpu_routine, "cpu_routine")
    if cpu is None or not cpu.has(CR.function_section):
        raise ModelError(f"{routine.name}: a CPU routine must name its function (cpu_routine.function_section)",
                         path, routine.where())
    name = cpu.string(CR.function_section, "function_section")
    start, size = cpu.vector(CR.function_args, 1, "function_args")
    offset = None if start is None else cpu.where(start)
    return CpuFunction(name, read_params(data, offset, size, path) if size else (), offset, size)


def _stage(index, node, sections, coeff, data, path, chip):
    tensors = {}
    for t in node.tables(PR.tensor_map, "tensor_map"):
        tensors.setdefault(t.string(T.name, "name"), t)

    def lookup(names, what):
        out = []
        for n in names:
            if n not in tensors:
                raise ModelError(f"{node.name}.{what}: tensor {n!r} is not in the program's tensor_map", path,
                                 node.where())
            out.append(_tensor(tensors[n], path))
        return tuple(out)

    subnets = []
    for r, routine in enumerate(node.tables(PR.routines, "routines")):
        kind = routine.scalar(R.type, "u8", "type")
        ins = lookup(routine.strings(R.in_tensors, "in_tensors"), f"routines[{r}].in_tensors")
        outs = lookup(routine.strings(R.out_tensors, "out_tensors"), f"routines[{r}].out_tensors")
        if kind == ROUTINE_CPU:
            fn = _cpu_function(routine, data, path)
            subnets.append(Subnet(r, r, "cpu", (), ins, outs, (), f"function {fn.text()}", fn))
            continue
        if kind != ROUTINE_TPU:
            raise ModelError(f"{routine.name}.type must be 0 (TPU) or 1 (CPU), not {kind}", path, routine.where())
        tpu = routine.table_at(R.tpu_routine, "tpu_routine")
        name = tpu.string(0, "cmdbuf_section") if tpu is not None else ""
        section = sections.get(name)
        if section is None or section[0] != SECTION_CMDBUF:
            raise ModelError(f"{routine.name}.tpu_routine names CMDBUF section {name!r}, which the file does not "
                             f"have (sections: {sorted(sections)})", path, routine.where())
        _, blob, encrypted, compressed, snode = section
        if encrypted or compressed:
            raise ModelError(f"section {name!r} is {'encrypted' if encrypted else 'compressed'}: bmk reads plain "
                             f"CMDBUF sections only", path, snode.where())
        label = f"net0/stage{index}/subnet{r}/core0/group0"
        subnets.append(Subnet(r, r, "tpu", (Group(label, 0, index, r, 0, 0, {}, blob, {}, data, chip),), ins,
                              outs))
    neuron = Region(None, node.scalar(PR.neuron_size, "u32", "neuron_size"))    # no address in the file
    return Stage(index, lookup(node.strings(PR.input_tensors, "input_tensors"), "input_tensors"),
                 lookup(node.strings(PR.output_tensors, "output_tensors"), "output_tensors"), tuple(subnets),
                 neuron, coeff, 1, {"batch_num": node.scalar(PR.batch_num, "u32", "batch_num"),
                                    "shared_gmem": node.scalar(PR.shared_gmem, "u32", "shared_gmem"),
                                    "private_gmem": node.scalar(PR.private_gmem, "u32", "private_gmem")})
