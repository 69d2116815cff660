"""Argument checks, by family like lowering/ (dma.py, eltwise.py, conv.py, matrix.py): functions
`fn(c, p, **params)` of a `common.Check` (the shared vocabulary and bm1880's tensor rules) and
the op record; the op table (api.py) gives each row its function and parameters. Each raises
ArgumentError before anything is recorded: "<call>: <argument> must be <rule>, not <value!r>".
"""
