"""Text tools as library code, for every chip and for raw streams (docs/asm.md).

- `bmk.text.asm`: the assembly text, one printer (`disassemble`, `format_record`) and one
  parser (`parse`, `assemble`), both derived from the specs;
- `bmk.text.loading`: reading an input (cmd_hdr_t buffer, assembly text, or raw per-engine
  streams merged in program order) into a `Listing`;
- `bmk.text.diff`: instruction-by-instruction, field-by-field differences of two Listings.

The command-line tools (`bmk.cli`) only wrap these in click commands.
"""
from bmk.text.asm import AsmError, Program, assemble, disassemble, format_record, parse
from bmk.text.diff import Diff, diff_listings
from bmk.text.loading import Listing, load, load_path, load_raw

__all__ = ["AsmError", "Diff", "Listing", "Program", "assemble", "diff_listings", "disassemble", "format_record",
           "load", "load_path", "load_raw", "parse"]
