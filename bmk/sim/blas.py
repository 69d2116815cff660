"""numpy's BLAS on one thread while the simulator runs a buffer.

The simulator's matrix products (conv, matmul) are many medium-sized products, one after
another. OpenBLAS (what numpy wheels bundle) runs each on every core it sees; on a machine
whose cores are shared with other work its threads wait for each other, and a conv-heavy
network (retinaface on bm1684) ran 7x slower than on one thread. `one_thread()` sets
OpenBLAS's thread count to 1 for the duration and restores it after; where the library
cannot be found (another BLAS, another platform) it does nothing.

How the library is found: numpy's own build config names its BLAS; the shared object loaded
into this process is located through /proc/self/maps (Linux), and its
`[scipy_]openblas_{get,set}_num_threads[64_]` entry points called with ctypes (the names
threadpoolctl also looks for).
"""
import contextlib
import ctypes
import functools

PREFIXES = ("scipy_openblas", "openblas")
SUFFIXES = ("64_", "")


@functools.lru_cache(maxsize=None)
def _api():
    """(get, set) of the loaded OpenBLAS, or None."""
    try:
        with open("/proc/self/maps") as fh:
            paths = sorted({line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line})
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in PREFIXES:
            for suffix in SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype, put.argtypes = ctypes.c_int, (ctypes.c_int,)
                    return get, put
    return None


@contextlib.contextmanager
def one_thread():
    import numpy  # noqa: F401  (loads the BLAS numpy uses, so that it can be found)
    api = _api()
    if api is None:
        yield
        return
    get, put = api
    before = get()
    if before == 1:
        yield
        return
    put(1)
    try:
        yield
    finally:
        put(before)
