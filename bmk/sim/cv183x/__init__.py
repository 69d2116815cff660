"""CV183X instruction semantics: bm1880's (CV183X = BM1880v2, the encoder bmk's bm1880 API follows:
the same descriptors and field names, specs/cv183x from tools/facts/bm1880.json)."""
from bmk.sim.bm1880 import SEMANTICS  # noqa: F401
