"""Running a cvimodel CPU subnet: its function (bmk/models/cpu) on numpy arrays, or on device memory.

Facts: cviruntime src/common/program.cpp (CpuRoutine::initialize: the routine's in_tensors and
out_tensors are the program's neurons, the function set up once with them and the parameters;
CpuRoutine::run: every input brought to the CPU (Neuron::toCpu, the bytes at the tensor's device
address), the function run, its outputs left in the neurons, which the next TPU routine reads at
their addresses (Neuron::toTpu)). The routines run in their file order (Program::run).

Addresses are the tensors' own (IOTensor.address). A cvimodel's carry the runtime's memory
region in bits 40-42 (cviruntime src/common/neuron.cpp, Neuron::reserveIonMem: index into the
program's base addresses, 0 shared, 1 weights, 2 private, 3 and up one io buffer each), which
the simulator given to `run_cpu_in_memory` maps (bmk/models/regions.py: its base registers); the
CV18xx simulators (bmk/sim/cv181x) still refuse every test cvimodel before it runs, so the hook
runs today on BM1684/BM1684X models (tests/models/test_cpu_functions.py). Bytes read and
written are the tensor's logical size (shape x element size), not a VPSS-aligned `size`.
"""
import math

import numpy as np

from bmk.errors import BmkError, ModelError
from bmk.models import cpu, storage
from bmk.models.regions import device_address


def where_of(subnet, net=0, stage=0):
    return f"run: net{net}/stage{stage}/subnet{subnet.index} (CPU {subnet.function.name if subnet.function else '?'})"


def setup_cpu_subnet(model, subnet, net=0, stage=0):
    """(module, config) of a CPU subnet: the function found by name (an unknown one is a
    ModelError naming it and the known ones) and set up with the parameters and the tensors
    (the checks of the C++ setup()). Nothing runs."""
    where = where_of(subnet, net, stage)
    if subnet.kind != "cpu" or subnet.function is None:
        raise ModelError(f"{where}: subnet{subnet.index} is a {subnet.kind} subnet, not a CPU function bmk runs "
                         f"({subnet.detail})", model.path)
    impl = cpu.implementation(subnet.function.name, model.path, where)
    for t in subnet.inputs + subnet.outputs:
        if not t.shape or min(t.shape) < 1:     # the runtime's Neuron counts elements from its dims
            raise ModelError(f"{where}: tensor {t.name!r} must have positive dims, not {tuple(t.shape)}", model.path)
    return impl, impl.setup(subnet.function, subnet.inputs, subnet.outputs, model.path, where)


def run_cpu_subnet(model, subnet, tensors, net=0, stage=0, prepared=None):
    """Run a CPU subnet's function on `tensors` ({input name: ndarray}, each with the tensor's
    dtype and element count) -> {output name: ndarray} in the outputs' shapes and dtypes.
    prepared: what setup_cpu_subnet returned (default: set up now)."""
    impl, config = prepared or setup_cpu_subnet(model, subnet, net, stage)
    where = where_of(subnet, net, stage)
    arrays = []
    for t in subnet.inputs:
        if t.name not in tensors:
            raise ModelError(f"{where}: input {t.name!r} must be given (inputs: "
                             f"{', '.join(x.name for x in subnet.inputs)})", model.path)
        a = np.asarray(tensors[t.name])
        if a.dtype != t.dtype or a.size != math.prod(t.shape):
            raise ModelError(f"{where}: input {t.name!r} must be {t.type.name} {tuple(t.shape)}, not {a.dtype} "
                             f"{a.shape}", model.path)
        arrays.append(a.reshape(t.shape))
    try:
        results = impl.run(config, arrays)
    except BmkError:
        raise
    except (ValueError, IndexError, OverflowError, MemoryError) as e:     # a defect of ours: name it, no traceback
        raise ModelError(f"{where}: {subnet.function.name} failed: {type(e).__name__}: {e}", model.path) from None
    return {t.name: np.asarray(r).astype(t.dtype, copy=False).reshape(t.shape)
            for t, r in zip(subnet.outputs, results)}


def run_cpu_in_memory(model, subnet, sim, net=0, stage=0, prepared=None):
    """Run a CPU subnet the way the runtime does between TPU routines: its inputs read from
    device memory at their addresses (`sim.gmem_read`), its outputs written back at theirs
    (`sim.gmem_write`), for the next subnet to read. -> {output name: ndarray}."""
    tensors = {}
    for t in subnet.inputs:
        n = storage.device_nbytes(t.shape, t.dtype, t.storage, t.name)
        data = sim.gmem_read(device_address(sim, t.address, f"tensor {t.name!r}"), n)
        tensors[t.name] = storage.from_device(data, t.shape, t.dtype, t.storage, t.name)
    out = run_cpu_subnet(model, subnet, tensors, net, stage, prepared)
    for t in subnet.outputs:
        sim.gmem_write(device_address(sim, t.address, f"tensor {t.name!r}"),
                       storage.to_device(out[t.name], t.storage, t.name))
    return out
