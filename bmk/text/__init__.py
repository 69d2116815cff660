"""Text tools as library code, for every chip and for raw streams (docs/asm.md).

- `bmk.text.asm`: the assembly text, one printer (`disassemble`, `format_record`) and one
  parser (`parse`, `assemble`), both derived from the specs;
- `bmk.text.loading`: reading an input (cmd_hdr_t buffer, assembly text, or raw per-engine
  streams merged in program order) into a `Listing`;
- `bmk.text.diff`: instruction-by-instruction, field-by-field differences of two Listings.

The command-line tools (`bmk.cli`) only wrap these in click commands.
"""
import importlib

_HOME = {"AsmError": "asm", "Program": "asm", "assemble": "asm", "disassemble": "asm", "format_record": "asm",
         "parse": "asm", "Diff": "diff", "diff_listings": "diff", "Listing": "loading", "load": "loading",
         "load_path": "loading", "load_raw": "loading"}
__all__ = sorted(_HOME)


def __getattr__(name):
    # Imported when first asked for: a command imports the modules it uses (bmk-disasm no diff).
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'bmk.text' has no attribute {name!r}")
    return getattr(importlib.import_module(f"bmk.text.{home}"), name)
