"""The types of the OKKernel and TPU-Kernel call arguments, by C parameter name (seeds 001, 003,
004: the C prototypes' types, as Python takes them), so `help(ctx.bdc_and)` and type checkers
see `dst_addr: int, shape: Dim4, ...` rather than `object`.

The op records hold the arguments as given and the checks validate them; these annotations are
what those checks accept. Names are matched whole first, then by suffix."""
import re

DIM4 = "dim4 | tuple[int, int, int, int]"
DIM2 = "dim2 | tuple[int, int] | None"

BY_NAME = {
    "shape": DIM4, "input_shape": DIM4,
    "padding": "Padding | tuple[int, int, int, int] | None", "stride": DIM2, "dilation": DIM2,
    "dtype": "DataType | int", "src_dtype": "DataType | int", "dst_dtype": "DataType | int",
    "shift_dtype": "DataType | int", "rounding_mode": "RoundingMode | int",
    "C": "int | float", "true_val": "int | float", "select_val": "int | float", "scale": "int | float",
    "using_bias": "bool", "result_add": "bool", "rshift": "int", "lshift": "int",
}
BY_SUFFIX = (
    (re.compile(r"_addr$"), "int"),
    (re.compile(r"_stride$"), f"{DIM4} | None"),
    (re.compile(r"^is_"), "bool"),
    (re.compile(r"(^|_)(rows|cols|cols_per_channel|len|len_per_channel|shift|kernel_h|kernel_w|num_series|output_c|"
                r"op_type|mul_type)$"), "int"),
)


def typed(cls):
    """Class decorator (before attrs): each `object` annotation replaced by its name's type."""
    notes = cls.__dict__.get("__annotations__", {})
    for name, note in notes.items():
        if note is object or note == "object":
            notes[name] = BY_NAME.get(name) or next((t for rx, t in BY_SUFFIX if rx.search(name)), "object")
    return cls
