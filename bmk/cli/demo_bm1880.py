"""`bmk demo --chip bm1880` (the default): the seed's samples A.1-A.3 and a small convolution
layer, written in bmk/cli/demo.py, which the other chips' demos share their printing with."""
from bmk.cli.demo import bm1880_main


def main(fields="changed"):
    return bm1880_main(fields)
