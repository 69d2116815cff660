"""Lowering: op record -> descriptors ({field: value} of the bm1880 TIU / TDMA formats), by
family: dma.py (seed 4.12-4.18), eltwise.py (4.19-4.40), conv.py (4.38-4.45), matrix.py
(4.46-4.47); functions `fn(chip, p, **params)`, the op table (api.py) gives the parameters.
The shared field builders are in common.py.
"""
