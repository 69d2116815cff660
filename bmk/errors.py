"""The one family of exceptions bmk raises.

Every message follows one template, "<call>: <argument> must be <rule>, not <value!r>",
so a user sees which call, which argument, which value and which rule.
"""


class BmkError(Exception):
    """Base class of every error bmk raises on purpose."""


class SpecError(BmkError):
    """A spec file under specs/ is malformed (raised at load time)."""


class EncodeError(BmkError):
    """A field value does not fit its field, or an instruction cannot be encoded."""


class DecodeError(BmkError):
    """Bytes are not a valid command buffer; the message names the byte offset."""

    def __init__(self, message, offset=None):
        super().__init__(message if offset is None else f"byte {offset}: {message}")
        self.offset = offset


class ArgumentError(BmkError):
    """An API call was given an argument that breaks a rule of the seed."""


class AllocError(ArgumentError):
    """Local memory could not be allocated or freed as asked."""


class ScheduleError(BmkError):
    """Misuse of the ordering API (streams, dependencies, parallel groups)."""


class CmdbufOverflowError(BmkError):
    """The command buffer would grow past the context's cmdbuf_size."""


class ModelError(BmkError):
    """A compiled model (bmodel, cvimodel) is malformed, or asks for what bmk cannot do yet
    (a chip without a decoder, a subnet bmk cannot run). The message names the file, the byte
    offset in it when there is one, and the rule."""

    def __init__(self, message, path=None, offset=None):
        where = "".join(part for part in (f"{path}: " if path is not None else "",
                                          f"byte {offset}: " if offset is not None else ""))
        super().__init__(where + message)
        self.path, self.offset = path, offset


class SimulationError(BmkError):
    """The simulator met an instruction it cannot execute (or a deadlock). A refusal of one
    field's value carries it as `field` and `value` (`refused_field`), which `bmk check` groups by."""

    field = value = None


def refused_field(message, field, value):
    """A SimulationError refusing `field` = `value` (message: the kind, the field, the value and
    the rule, as every refusal says them)."""
    err = SimulationError(message)
    err.field, err.value = field, value
    return err


QUOTE_MAX = 80     # characters of an offending value an error message quotes


class Shown:
    """A value as a message should show it (`must` prints its text as is): e.g. a local address
    as '0x10040 (NPU 1:0x40)'."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def quoted(value, most=QUOTE_MAX):
    """repr(value), cut to about `most` characters (a long token, a big array) so that an error
    stays one readable line."""
    try:
        text = repr(value)
    except Exception:                 # a value whose repr fails still gets a message
        text = f"<{type(value).__name__}>"
    if len(text) <= most:
        return text
    return f"{text[:most - 20]}... ({len(text)} characters)"


def must(call, argument, rule, value):
    """Build the standard message: '<call>: <argument> must be <rule>, not <value!r>' (the value
    quoted at most QUOTE_MAX characters)."""
    return f"{call}: {argument} must be {rule}, not {quoted(value)}"
