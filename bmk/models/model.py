"""What `bmk.load_model` returns: a model's nets, stages, subnets, command groups and io tensors.

Frozen records (API.md "Compiled models"). Command bytes are not copied at load time: a group
keeps where its streams sit in the file and slices them when asked (`g.streams`), so listing a
model costs its FlatBuffer, not its megabytes of commands and weights.

    m = bmk.load_model("net.bmodel")
    m.chip, m.nets[0].stages[0].inputs[0].shape
    for g in m.groups():
        bmk.decode(m.chip, g.payload)         # g.streams for a bmodel, g.cmdbuf for a cvimodel
"""
import attrs

from bmk.errors import ModelError
from bmk.models import chips as chipnames


@attrs.frozen
class Blob:
    """Bytes of the model file: `size` bytes at file offset `offset`."""

    offset: int
    size: int

    def read(self, data):
        return bytes(data[self.offset:self.offset + self.size])


@attrs.frozen
class IOTensor:
    """An input or output tensor of a stage (or subnet).

    type: bmk.dtypes.DType; dtype: its numpy dtype (bf16 is stored as uint16, int4 one value a
    byte: bmk.dtypes); shape: the logical shape; address: the device address; storage: "1N",
    "2N" or "4N" (BM1684 int16 / int8 tensors in global memory, several batches interleaved
    per 32-bit word); size: bytes on the device; shapes: every shape the file gives (one per
    stage of a dynamic net); zero_point: int (bmodel) or the cvimodel's float.
    """

    name: str
    type: object
    shape: tuple
    address: int
    storage: str = "1N"
    scale: float = 1.0
    zero_point: float = 0
    size: int = 0
    shapes: tuple = ()

    @property
    def dtype(self):
        return self.type.numpy

    def to_dict(self):
        return {"name": self.name, "dtype": self.type.name, "shape": list(self.shape), "address": self.address,
                "storage": self.storage, "scale": self.scale, "zero_point": self.zero_point, "size": self.size}


@attrs.frozen
class Region:
    """Device memory a stage uses: coefficients (with their bytes in the file) or neurons."""

    address: "int | None"               # None: the file gives no address (cvimodel neuron memory)
    size: int
    blob: "Blob | None" = None          # coefficients: where their bytes are in the file
    check_code: str = ""                # coefficients: sha256 the file records (hex), if any
    encrypted: bool = False


@attrs.frozen
class Group:
    """One command group: the streams of one core of one subnet, run as a unit.

    label: "net<n>/stage<s>/subnet<i>/core<c>/group<g>" (stable: the CLI's names).
    parts: {engine: Blob} of a bmodel group's raw per-engine streams (tiu, gdma; sdma, hau,
    cdma on multi-core chips); cmdbuf: the Blob of a cvimodel group's cmd_hdr_t buffer.
    counts: {engine: n} as the file states them (bmodel bdc_num -> tiu, gdma_num -> gdma;
    engines the file gives no count for are absent).
    """

    label: str
    net: int
    stage: int
    subnet: int
    core: int
    index: int
    parts: dict = attrs.field(factory=dict)
    cmdbuf_blob: "Blob | None" = None
    counts: dict = attrs.field(factory=dict)
    data: bytes = attrs.field(default=b"", repr=False, eq=False)
    chip: str = ""              # bmk's chip name (what a cvimodel group's buffer is split with)

    @property
    def streams(self):
        """{engine: bytes}: the raw per-engine streams, what `bmk.decode(m.chip, g.streams)` takes.
        A cvimodel group's cmd_hdr_t buffer (`g.cmdbuf`) split per engine: each engine's
        descriptors in their order, as `bmk.encode(chip, records, raw=True)` frames them ({} for
        a chip bmk cannot decode)."""
        if self.cmdbuf_blob is None:
            return {e: b.read(self.data) for e, b in self.parts.items()}
        if not chipnames.decodable(self.chip):
            return {}
        from bmk.encoders import framing
        return dict(framing.encode(self.chip, framing.decode(self.chip, self.cmdbuf), raw=True))

    @property
    def cmdbuf(self):
        """A cvimodel group's cmd_hdr_t-framed command buffer (bytes), or None (bmodel)."""
        return None if self.cmdbuf_blob is None else self.cmdbuf_blob.read(self.data)

    @property
    def payload(self):
        """What `bmk.decode(m.chip, ...)` takes: `cmdbuf` when the group has one, else `streams`.
        The CLI decodes this."""
        return self.cmdbuf if self.cmdbuf_blob is not None else self.streams

    @property
    def sizes(self):
        """{engine: bytes} (a cvimodel group: {"cmdbuf": bytes})."""
        if self.cmdbuf_blob is not None:
            return {"cmdbuf": self.cmdbuf_blob.size}
        return {e: b.size for e, b in self.parts.items()}


@attrs.frozen
class Subnet:
    """kind: "tpu" (static commands: groups), "cpu" (a host function) or "dynamic" (firmware IR).
    function: a cvimodel CPU subnet's function and parameters (bmk.models.cpu.params.CpuFunction),
    what bmk runs in numpy (bmk/models/cpu); None otherwise."""

    index: int
    id: int
    kind: str
    groups: tuple = ()
    inputs: tuple = ()
    outputs: tuple = ()
    next_ids: tuple = ()
    detail: str = ""                    # cpu: the op types or the function; dynamic: the IR's size
    function: object = None             # cvimodel cpu: CpuFunction (name, params)


@attrs.frozen
class Stage:
    """One compiled shape variant of a net (bmodel NetParameter; cvimodel Program)."""

    index: int
    inputs: tuple
    outputs: tuple
    subnets: tuple
    neuron: "Region | None" = None
    coeff: "Region | None" = None
    core_num: int = 1
    extra: dict = attrs.field(factory=dict)     # container-specific sizes (cvimodel shared_gmem, ...)


@attrs.frozen
class Net:
    index: int
    name: str
    stages: tuple


@attrs.frozen(repr=False)
class Model:
    """A compiled model: its chip, nets and the file's bytes (see the module docstring).

    chip: bmk's chip name ("bm1684", ...); target: the chip string the file carries;
    format: "bmodel" or "cvimodel"; version, time: what the file says of its build;
    neuron_size: device bytes for activations; kernel_module: (file name, Blob) of a
    firmware library carried in the file, or None; weights: cvimodel WEIGHT section Blob.
    """

    path: str
    format: str
    chip: str
    target: str
    nets: tuple
    version: str = ""
    time: str = ""
    neuron_size: int = 0
    device_num: int = 0
    kernel_module: "tuple | None" = None
    data: bytes = attrs.field(default=b"", repr=False, eq=False)
    # what running a stage leaves for the next run: {(net, stage): ...} (bmk.models.run)
    kept: dict = attrs.field(factory=dict, init=False, repr=False, eq=False)

    def __repr__(self):
        # one line: `bmk info` is the long form
        groups = sum(len(sn.groups) for net in self.nets for st in net.stages for sn in st.subnets)
        return (f"<Model {self.format} {self.chip} {self.path!r}: {len(self.nets)} net{'s' * (len(self.nets) != 1)}, "
                f"{groups} group{'s' * (groups != 1)}>")

    @property
    def decodable(self):
        """True when bmk has a decoder (specs) for the model's chip."""
        return chipnames.decodable(self.chip)

    def groups(self):
        """Every command group of every net, stage, TPU subnet and core, in file order."""
        return [g for net in self.nets for st in net.stages for sn in st.subnets for g in sn.groups]

    def group(self, label):
        """The group called `label`; ModelError listing the labels when there is none."""
        groups = self.groups()
        for g in groups:
            if g.label == label:
                return g
        names = ", ".join(g.label for g in groups[:8]) + (" ..." if len(groups) > 8 else "")
        raise ModelError(f"no command group {label!r} (groups: {names or 'none'})", self.path)

    def records(self, group):
        """The group's instructions, decoded, in program order (Records, as bmk.decode gives).

        ModelError when bmk has no decoder for the chip; a defect in the bytes is a ModelError
        naming the file byte offset of the bad command."""
        from bmk.models.decoding import decode_group
        return decode_group(self, group)

    def coefficients(self, stage, verify=False):
        """The bytes of a stage's coefficients as the file stores them (b"" without any).
        verify: ModelError when they do not hash to the sha256 the file records (`verified`)."""
        data = stage.coeff.blob.read(self.data) if stage.coeff and stage.coeff.blob else b""
        if verify and self.verified(stage, data) is False:
            got = self.coefficients_sha256(stage, data)
            raise ModelError(f"stage {stage.index}: the coefficients' sha256 {got[:16]}... must be the "
                             f"{stage.coeff.check_code[:16]}... the file records (CoeffMem.check_code): the weights "
                             "are damaged or cut", self.path)
        return data

    def coefficients_sha256(self, stage, data=None):
        """The sha256 (hex) of a stage's coefficient bytes, computed once per model and stage."""
        blob = stage.coeff.blob if stage.coeff else None
        key = ("sha256", blob.offset, blob.size) if blob else ("sha256",)
        got = self.kept.get(key)
        if got is None:
            import hashlib
            got = self.kept[key] = hashlib.sha256(self.coefficients(stage) if data is None else data).hexdigest()
        return got

    def verified(self, stage, data=None):
        """True when a stage's coefficients hash to the sha256 the file records, False when they
        do not, None when the file records none (or the stage has no coefficients)."""
        if stage.coeff is None or not stage.coeff.check_code:
            return None
        return self.coefficients_sha256(stage, data) == stage.coeff.check_code.lower()

    def run(self, inputs, net=0, stage=0, trace=None, progress=None, exact=True, verify=True):
        """Simulate net `net`, stage `stage` on `inputs` ({name: array}) -> {output name: ndarray}.
        Inputs are checked, never wrapped: an integer out of its tensor's type is an
        ArgumentError, and a float must convert exactly unless exact=False (rounded); the
        coefficients must hash to the sha256 the file records unless verify=False.

        See bmk.models.run."""
        from bmk.models.run import run_model
        return run_model(self, inputs, net, stage, trace=trace, progress=progress, exact=exact, verify=verify)

