"""The parameters of a cvimodel CPU routine: `CpuRoutine.function_args`, read and checked.

Facts: a CPU routine (cvimodel.fbs `CpuRoutine`: 0 function_section string, 1 function_args
[u8]; isa-facts/cvimodel-format.md section 2) carries its parameters as the bytes of a second
FlatBuffer, root table `cvi.cpu_op.Parameter` (tpu-mlir include/tpu_mlir/Builder/CV18xx/proto/
parameter.fbs; field id = declaration order):
  Parameter: 0 attributes [Attribute];
  Attribute: 0 float_attr FloatAttr, 1 bool_attr BoolAttr, 2 int_attr IntAttr, 3 str_attr StrAttr,
             4 float_array_attr FloatArrayAttr, 5 int_array_attr IntArrayAttr;
  each XAttr: 0 key string, 1 value (int: i32, float: f32, bool, string, [i32], [f32]).
The runtime (cviruntime src/common/program.cpp, CpuRoutine::handleFuncArgs) puts every attribute
into an OpParam map keyed by name, the value typed by which member is set; a function's
`setup(OpParam&)` then asks for a name at one type (`param.get<int32_t>("axis")`), which asserts
when the name is absent or holds another type (include/runtime/op_param.hpp). No args at all is
an empty OpParam.

Rules of this reader (the runtime asserts or crashes on these): an attribute sets exactly one
member, has a key, and no key appears twice (the runtime's map would keep the last silently).
This module imports no numpy: `bmk info` and the CLI's text paths read parameters too.
"""
import attrs

from bmk.errors import ModelError
from bmk.models.flat import FlatBuffer

# Attribute member field id -> (kind, value reader), in the schema's declaration order.
KINDS = {0: ("float", "f32"), 1: ("bool", "bool"), 2: ("int", "i32"), 3: ("str", None),
         4: ("float_array", "f32"), 5: ("int_array", "i32")}
PYTHON_TYPES = {"int": "an int", "float": "a float", "bool": "a bool", "str": "a string",
                "int_array": "an int array", "float_array": "a float array"}


@attrs.frozen
class Param:
    """One attribute of a CPU routine: key, kind ("int", "float", "bool", "str", "int_array",
    "float_array": the parameter.fbs member that was set) and value (int, float, bool, str or a
    tuple); offset: where its Attribute table is in the model file."""

    key: str
    kind: str
    value: object
    offset: "int | None" = None

    def text(self):
        """'axis=3', 'scale=0.00787402', "mode='half_pixel'", 'pads=[1, 2]'."""
        v = self.value
        if self.kind == "float":
            return f"{self.key}={v:g}"
        if self.kind.endswith("_array"):
            return f"{self.key}=[{', '.join(f'{x:g}' if self.kind == 'float_array' else str(x) for x in v)}]"
        return f"{self.key}={v!r}"


@attrs.frozen
class CpuFunction:
    """What a cvimodel CPU routine runs: the function's name (`function_section`) and its
    parameters in file order; args_offset, args_size: where function_args lie in the file
    (None, 0 when the routine has none)."""

    name: str
    params: tuple = ()
    args_offset: "int | None" = None
    args_size: int = 0

    @property
    def values(self):
        """{key: value} of the parameters."""
        return {p.key: p.value for p in self.params}

    def text(self):
        """"argmax_v3 (scale=0.00787402, axis=3)"."""
        return f"{self.name} ({', '.join(p.text() for p in self.params) or 'no parameters'})"


def read_params(data, offset, size, path):
    """The bytes data[offset:offset + size] of a model file, a cpu_op Parameter FlatBuffer ->
    (Param, ...) in file order. ModelError naming the file, the byte offset and the rule."""
    if size == 0:
        return ()
    fb = FlatBuffer(data, offset, size, path)
    root = fb.root("Parameter")
    out, seen = [], {}
    for k, attr in enumerate(root.tables(0, "attributes")):
        members = [fid for fid in KINDS if attr.has(fid)]
        if len(members) != 1:
            have = ", ".join(f"{KINDS[f][0]}_attr" for f in members) or "none"
            raise ModelError(f"{attr.name}: an Attribute must set exactly one of float_attr, bool_attr, int_attr, "
                             f"str_attr, float_array_attr, int_array_attr (parameter.fbs), not {have}", path,
                             attr.where())
        fid = members[0]
        kind, scalar = KINDS[fid]
        node = attr.table_at(fid, f"{kind}_attr")
        if not node.has(0):
            raise ModelError(f"{node.name}.key: an attribute must have a key (the runtime's OpParam is keyed by "
                             "name)", path, node.where())
        key = node.string(0, "key")
        if kind == "str":
            value = node.string(1, "value")
        elif kind.endswith("_array"):
            value = tuple(node.scalars(1, scalar, "value"))
        else:
            value = node.scalar(1, scalar, "value", False if kind == "bool" else 0)
        if key in seen:
            raise ModelError(f"{node.name}.key: key {key!r} appears twice (attributes[{seen[key]}] and "
                             f"attributes[{k}]): one value per name", path, node.where())
        seen[key] = k
        out.append(Param(key, kind, value, attr.where()))
    return tuple(out)


def get(function, key, kind, path, where, default=None):
    """The value of parameter `key`, which must be of `kind` (a function's setup asking
    `param.get<T>(key)`); `default` when absent, or ModelError when there is no default."""
    for p in function.params:
        if p.key == key:
            if p.kind != kind:
                raise ModelError(f"{where}: {function.name} parameter {key!r} must be {PYTHON_TYPES[kind]}, not "
                                 f"{PYTHON_TYPES[p.kind]} {p.value!r}", path, p.offset)
            return p.value
    if default is None:
        have = ", ".join(p.key for p in function.params) or "none"
        raise ModelError(f"{where}: {function.name} needs parameter {key!r} ({PYTHON_TYPES[kind]}); the routine "
                         f"has {have}", path, function.args_offset)
    return default
