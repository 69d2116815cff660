"""`python -m bmk ...` is the `bmk` command."""
from bmk.cli.main import bmk

if __name__ == "__main__":
    bmk(prog_name="bmk")
