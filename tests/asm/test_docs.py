"""The example in docs/asm.md assembles to the golden it quotes."""
import pathlib

from bmk.text import asm as asmtext
from tests.goldens import golden

DOC = pathlib.Path(__file__).parent.parent.parent / "docs" / "asm.md"


def test_docs_example_is_the_golden():
    text = DOC.read_text()
    start = text.index("```\n# A load, a load, an add, a store") + 4
    example = text[start:text.index("```", start)]
    assert asmtext.assemble(example, filename="docs/asm.md") == golden("sched_serial_load_load_add_store")
