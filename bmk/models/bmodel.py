"""The bmodel container (BM1684, BM1684X, BM1688/CV186X, BM1690, CV184X, ...) -> a Model.

Facts: isa-facts/bmodel-format.md (from tpu-mlir's bmodel.fbs, bmodel.hpp and its debugger).
A 64-byte little-endian header (magic 0xFF55AAEE, header_size, flatbuffers_size, binary_size
u64), the FlatBuffer (root table `Model`), then the binary area every `Binary {u64 start,
u64 size}` points into. Field ids below are the schema's (section 3); the schema only ever
adds fields, so a reader keyed on ids stays valid for newer files.

Command groups (section 4): per stage, each subnet's `cmd_group` list (single core) or its
`core_commands` (one entry per core: CmdGroups plus SDMA/HAU/CDMA binaries, the k-th binary of
each joined to the k-th group: the vendor numbers each list's items from 0 the same way);
`NetParameter.cmd_group` is read only for old files whose stage has no subnet list.
"""
import struct

from bmk import dtypes
from bmk.errors import ModelError
from bmk.models import chips, magic
from bmk.models.flat import FlatBuffer
from bmk.models.model import Blob, Group, IOTensor, Model, Net, Region, Stage, Subnet
from bmk.util import printable

MAGIC, MAGIC_BYTES, OLD_MAGIC = magic.BMODEL, magic.BMODEL_BYTES, magic.BMODEL_OLD
HEADER = struct.Struct("<IIIQ")    # magic, header_size, flatbuffers_size, binary_size (then reserved words)
HEADER_SIZE = 64

# Tensor.data_type -> bmk dtype (bmodel.fbs; tpu-mlir disassembler.py Tensor.to_DType).
DATA_TYPES = {0: dtypes.FP32, 1: dtypes.FP16, 2: dtypes.INT8, 3: dtypes.UINT8, 4: dtypes.INT16,
              5: dtypes.UINT16, 6: dtypes.INT32, 7: dtypes.UINT32, 8: dtypes.BF16, 9: dtypes.INT4,
              10: dtypes.UINT4}
STORAGE = {0: "1N", 1: "2N", 2: "4N"}      # Tensor.gmem_stmode
SUBNET_TPU, SUBNET_CPU = 0, 1              # SubNet.subnet_mode
BINARY = "<QQ"                             # struct Binary {start, size}
BINARY_ALIGN = 8                           # its alignment (u64 fields): where a vector of Binary starts

# Field ids (bmodel-format.md section 3).
class M:  # Model
    type, version, time, chip, net, neuron_size, kernel_module, device_num = range(8)


class NT:  # Net
    name, net_static, net_dynamic, parameter = range(4)


class K:  # KernelModule / CpuopModule
    file_name, binary = range(2)


class T:  # Tensor
    (name, data_type, gmem_stmode, device_addr, size, shape, mem_type, scale, cpu_addr, pad_h,
     zero_point) = range(11)


class P:  # NetParameter
    (input_tensor, output_tensor, ctx_addr, ctx_size, coeff_mem, is_dynamic, n_dynamic, h_w_dynamic,
     cmd_group, net_profile, stage_ir, binary_ir, sub_net, cpu_mem_size, ctx_sizes, net_stat, core_num) = range(17)


class S:  # SubNet
    (subnet_mode, cmd_group, cpu_param, input_tensor, output_tensor, is_dynamic, ir_offset, ir_len, n_dynamic,
     h_w_dynamic, id, next_subnet_ids, merge_param, switch_param, core_commands) = range(15)


class G:  # CmdGroup
    bdc_num, gdma_num, binary_bdc, binary_gdma, bdc_cmd_byte, gdma_cmd_byte = range(6)


class C:  # CoreCommands
    gdma_tiu_commands, sdma_commands, hau_commands, cdma_commands = range(4)


class CM:  # CoeffMem
    address, check_code, binary_coeff, location, encrypt_mode = range(5)


STREAMS = (("tiu", "bdc"), ("gdma", "gdma"))     # engine <- CmdGroup binary_<name>, <name>_num
EXTRA_ENGINES = (("sdma", C.sdma_commands), ("hau", C.hau_commands), ("cdma", C.cdma_commands))


def read(data, path):
    """bytes of a .bmodel file -> Model. ModelError for any defect (file, offset, rule)."""
    if len(data) < HEADER_SIZE:
        raise ModelError(f"truncated bmodel header: {len(data)} bytes, a header is {HEADER_SIZE}", path, 0)
    magic, header_size, fb_size, bin_size = HEADER.unpack_from(data, 0)
    if magic == OLD_MAGIC:
        raise ModelError("a bmtap2 bmodel (magic 0xFF55AAFF) is an old format bmk does not read", path, 0)
    if magic != MAGIC:
        raise ModelError(f"bad magic 0x{magic:08X}, a bmodel starts with 0x{MAGIC:08X} (an encrypted header?)",
                         path, 0)
    if header_size < HEADER_SIZE:
        raise ModelError(f"header_size must be at least {HEADER_SIZE}, not {header_size}", path, 4)
    total = header_size + fb_size + bin_size
    if total != len(data):
        what = "truncated file" if total > len(data) else "trailing bytes"
        raise ModelError(f"{what}: header_size {header_size} + flatbuffers_size {fb_size} + binary_size "
                         f"{bin_size} = {total} must equal the file size {len(data)}", path, 4)
    reader = _Reader(data, path, header_size + fb_size, bin_size)
    root = FlatBuffer(data, header_size, fb_size, path).root("Model")
    target = root.string(M.chip, "chip")
    if not target:
        raise ModelError("Model.chip is empty: the file does not say which chip it is for", path, root.where())
    nets = tuple(reader.net(i, n) for i, n in enumerate(root.tables(M.net, "net")))
    km = root.table_at(M.kernel_module, "kernel_module")
    kernel = None
    if km is not None:
        blob = reader.blob(km, K.binary, "binary")
        if blob is not None and blob.size:
            kernel = (km.string(K.file_name, "file_name"), blob)
    return Model(path, "bmodel", chips.chip_name(target), target, nets, root.string(M.version, "version"),
                 root.string(M.time, "time").strip(), root.scalar(M.neuron_size, "u64", "neuron_size"),
                 root.scalar(M.device_num, "u32", "device_num"), kernel, data)


class _Reader:
    """Walks the FlatBuffer's tables, checking every Binary against the binary area."""

    def __init__(self, data, path, bin_base, bin_size):
        self.data, self.path, self.bin_base, self.bin_size = data, path, bin_base, bin_size

    def check(self, node, pos, what, start, size):
        if start > self.bin_size or size > self.bin_size - start:
            raise ModelError(f"{node.name}.{what}: bytes [{start}, {start + size}) must lie inside the "
                             f"{self.bin_size}-byte binary area", self.path, node.where(pos))
        return Blob(self.bin_base + start, size)

    def blob(self, node, fid, what):
        value, pos = node.struct(fid, BINARY, what)
        return None if value is None else self.check(node, pos, what, *value)

    def blobs(self, node, fid, what):
        return [self.check(node, pos, f"{what}[{k}]", *v) for k, (v, pos) in enumerate(node.structs(fid, BINARY, what))]

    def core_blobs(self, node, fid, what):
        """A CoreCommands list of Binary, in either layout (older_layout)."""
        if older_layout(node, fid, what):
            return [self.check(node, pos, f"{what}[{k}]", *v)
                    for k, (v, pos) in enumerate(node.struct_refs(fid, BINARY, what))]
        return self.blobs(node, fid, what)

    def net(self, index, node):
        name = node.string(NT.name, "name")
        stages = tuple(self.stage(index, s, p) for s, p in enumerate(node.tables(NT.parameter, "parameter")))
        return Net(index, name, stages)

    def tensor(self, node, neuron=None):
        """An IOTensor; ModelError when its shape needs more bytes than its own size field or
        lies outside the stage's neuron memory (neuron: that Region, None to skip)."""
        from bmk.models import storage     # numpy: a small buffer's disasm never needs it
        t = self._tensor(node)
        try:
            need = storage.device_nbytes(t.shape, t.dtype, t.storage, t.name)
        except ModelError as e:
            raise ModelError(str(e), self.path, node.where()) from None
        if t.size and need > t.size:
            raise ModelError(f"{node.name} {printable(t.name)!r}: shape {_shape_text(t.shape)} {t.storage} "
                             f"{t.type.name} takes {_bytes_text(need)} bytes, more than its size field {t.size}",
                             self.path, node.where())
        if neuron is not None and neuron.address is not None and neuron.size and not (
                neuron.address <= t.address and t.address + need <= neuron.address + neuron.size):
            raise ModelError(f"{node.name} {printable(t.name)!r}: [0x{t.address:x}, +{_bytes_text(need)} bytes) must "
                             f"lie inside the stage's neuron memory [0x{neuron.address:x}, 0x"
                             f"{neuron.address + neuron.size:x})", self.path, node.where())
        return t

    def _tensor(self, node):
        code = node.scalar(T.data_type, "u32", "data_type")
        dtype = DATA_TYPES.get(code)
        if dtype is None:
            raise ModelError(f"{node.name}.data_type must be one of {sorted(DATA_TYPES)}, not {code}", self.path,
                             node.where())
        mode = node.scalar(T.gmem_stmode, "i32", "gmem_stmode")
        if mode not in STORAGE:
            raise ModelError(f"{node.name}.gmem_stmode must be one of {sorted(STORAGE)} (1N, 2N, 4N), not {mode}",
                             self.path, node.where())
        shapes = tuple(tuple(int(d) for d in s.scalars(0, "u64", "dim")) for s in node.tables(T.shape, "shape"))
        return IOTensor(node.string(T.name, "name"), dtype, shapes[0] if shapes else (),
                        node.scalar(T.device_addr, "u64", "device_addr"), STORAGE[mode],
                        node.scalar(T.scale, "f32", "scale", 1.0), node.scalar(T.zero_point, "i32", "zero_point"),
                        node.scalar(T.size, "u64", "size"), shapes)

    def tensors(self, node, fid, what, neuron=None):
        return tuple(self.tensor(t, neuron) for t in node.tables(fid, what))

    def stage(self, net, index, node):
        coeff = None
        cm = node.table_at(P.coeff_mem, "coeff_mem")
        if cm is not None:
            blob = self.blob(cm, CM.binary_coeff, "binary_coeff")
            code = bytes(cm.scalars(CM.check_code, "u8", "check_code")).hex()
            coeff = Region(cm.scalar(CM.address, "u64", "address"), blob.size if blob else 0, blob, code,
                           cm.scalar(CM.encrypt_mode, "i32", "encrypt_mode") != 0)
        neuron = Region(node.scalar(P.ctx_addr, "u64", "ctx_addr"), node.scalar(P.ctx_size, "u64", "ctx_size"))
        subnet_nodes = node.tables(P.sub_net, "sub_net")
        if subnet_nodes:
            subnets = tuple(self.subnet(net, index, k, s) for k, s in enumerate(subnet_nodes))
        else:   # old files: the stage's own command groups, one static TPU subnet
            groups = self.groups(net, index, 0, 0, node.tables(P.cmd_group, "cmd_group"))
            subnets = (Subnet(0, 0, "tpu", groups),) if groups else ()
        return Stage(index, self.tensors(node, P.input_tensor, "input_tensor", neuron),
                     self.tensors(node, P.output_tensor, "output_tensor", neuron), subnets, neuron, coeff,
                     max(1, node.scalar(P.core_num, "u32", "core_num")))

    def subnet(self, net, stage, index, node):
        mode = node.scalar(S.subnet_mode, "i32", "subnet_mode")
        dynamic = node.scalar(S.is_dynamic, "i32", "is_dynamic")
        sid = node.scalar(S.id, "i32", "id", -1)
        inputs = self.tensors(node, S.input_tensor, "input_tensor")
        outputs = self.tensors(node, S.output_tensor, "output_tensor")
        next_ids = tuple(node.scalars(S.next_subnet_ids, "i32", "next_subnet_ids"))
        if mode == SUBNET_CPU:
            ops = [p.scalar(0, "i32", "op_type") for p in node.tables(S.cpu_param, "cpu_param")]
            return Subnet(index, sid, "cpu", (), inputs, outputs, next_ids, f"cpu op types {ops}")
        if mode != SUBNET_TPU:
            raise ModelError(f"{node.name}.subnet_mode must be 0 (TPU) or 1 (CPU), not {mode}", self.path,
                             node.where())
        if dynamic:
            size = node.scalar(S.ir_len, "u32", "ir_len")
            return Subnet(index, sid, "dynamic", (), inputs, outputs, next_ids, f"{size} bytes of firmware IR")
        cores = node.tables(S.core_commands, "core_commands")
        if cores:
            groups = ()
            for c, core in enumerate(cores):
                extra = {e: self.core_blobs(core, fid, e) for e, fid in EXTRA_ENGINES}
                groups += self.groups(net, stage, index, c, core.tables(C.gdma_tiu_commands, "gdma_tiu_commands"),
                                      extra)
        else:
            groups = self.groups(net, stage, index, 0, node.tables(S.cmd_group, "cmd_group"))
        return Subnet(index, sid, "tpu", groups, inputs, outputs, next_ids)

    def groups(self, net, stage, subnet, core, nodes, extra=None):
        extra = extra or {}
        count = max([len(nodes)] + [len(v) for v in extra.values()])
        out = []
        for g in range(count):
            parts, counts = {}, {}
            if g < len(nodes):
                node = nodes[g]
                for engine, name in STREAMS:
                    blob = self.blob(node, getattr(G, "binary_" + name), "binary_" + name)
                    if blob is not None:
                        parts[engine] = blob
                    counts[engine] = node.scalar(getattr(G, name + "_num"), "u32", name + "_num")
            for engine, blobs in extra.items():
                if g < len(blobs):
                    parts[engine] = blobs[g]
            label = f"net{net}/stage{stage}/subnet{subnet}/core{core}/group{g}"
            out.append(Group(label, net, stage, subnet, core, g, parts, None, counts, self.data))
        return tuple(out)


def older_layout(node, fid, what):
    """True when a CoreCommands Binary list (sdma/hau/cdma) is in the Nov 2023 SG2260 layout: a vector
    of offsets, each to one Binary struct (public extra/yolov5s_sg2260_f32_core8.bmodel, built
    2023-11-21), not the schema's vector of Binary structs (every file from Jan 2024 on).

    Told apart by the vector itself: a FlatBuffer vector of 8-byte-aligned structs starts its
    elements on an 8-byte boundary (after the u32 count), so elements at 4 mod 8 are not Binary
    structs; in the older files they are u32 offsets (each 4: to the Binary right after it)."""
    start = node.vector_start(fid, what, 4)
    return start is not None and start % BINARY_ALIGN != 0


def _shape_text(shape):
    text = str(tuple(shape))
    return text if len(text) <= 60 else f"{text[:50]}... ({len(shape)} dimensions)"


def _bytes_text(n):
    return str(n) if n < 1 << 64 else f"about 2**{n.bit_length() - 1}"
