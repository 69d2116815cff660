"""What a chip's cost model rests on (`bmk chips` prints it)."""
import attrs


@attrs.frozen
class Basis:
    """checked: whether the model was compared with cycles a real chip measured; text: what
    its formulas come from."""

    checked: bool
    text: str
