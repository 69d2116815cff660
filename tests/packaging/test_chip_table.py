"""The README's chip table is written from the chip registry (tools/chip_table.py): stale while
a chip or a capability is added until the tool is run, so this test names the command."""
import json

from bmk.isa import chips
from bmk.isa.registry import registry
from tests.tool_loader import ROOT, load_tool

tool = load_tool("chip_table")


def test_the_readme_table_is_the_registry():
    text = (ROOT / "README.md").read_text()
    assert tool.rewritten(text) == text, "README.md's chip table is stale: run python tools/chip_table.py"


def test_one_row_per_chip_saying_what_the_registry_says():
    rows = {line.split(" | ")[0].lstrip("| ").split(" (")[0]: line for line in tool.table().splitlines()[2:]}
    assert list(rows) == list(chips())
    for caps in registry():
        row = rows[caps.chip]
        assert (f"`{caps.api}`" in row) == bool(caps.api)
        assert (f"`bmk demo --chip {caps.chip}`" in row) == bool(caps.demo)
        assert row.split(" | ")[4].startswith("yes") == bool(caps.simulator)


def test_every_chip_has_its_board_facts():
    assert set(json.loads(tool.FACTS.read_text())["chips"]) == set(chips())
