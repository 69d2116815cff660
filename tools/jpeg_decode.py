"""Decode a baseline JPEG into an RGB uint8 array (a dev-only tool: tests and the package never decode JPEG).

Run by hand to turn a public photo into test data, e.g. tests/models/people_448.npz from curve/test.jpg of
biubug6/Pytorch_Retinaface (tests/models/README.md):

    python tools/jpeg_decode.py test.jpg tests/models/people_448.npz --width 448

Covers what the ITU T.81 baseline process needs (Annex F: Huffman-coded sequential DCT, 8-bit samples, any
sampling factors, restart intervals) and nothing more: progressive and arithmetic-coded files are refused.
Colour conversion is JFIF's (ITU T.871 section 7); chroma is upsampled by repetition, so the pixels can differ
from libjpeg's "fancy" upsampling by a few levels at colour edges.
"""

import argparse
import struct
import sys

import numpy as np

# Zig-zag order of the 64 coefficients (T.81 figure A.6): position k of the stream is natural index ZIGZAG[k].
ZIGZAG = np.array([
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14,
    21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60,
    61, 54, 47, 55, 62, 63])


def _idct_matrix():
    """C[u, x] = c(u)/2 * cos((2x+1) u pi / 16), so a block is C.T @ F @ C (T.81 section A.3.3)."""
    u = np.arange(8)[:, None]
    x = np.arange(8)[None, :]
    c = np.where(u == 0, np.sqrt(0.5), 1.0)
    return c / 2 * np.cos((2 * x + 1) * u * np.pi / 16)


class _Bits:
    """The entropy-coded bytes of one restart interval, byte stuffing removed, read MSB first."""

    def __init__(self, data):
        self.bits = "".join(format(b, "08b") for b in data)
        self.pos = 0

    def read(self, n):
        if n == 0:
            return 0
        s = self.bits[self.pos:self.pos + n]
        self.pos += n
        return int(s.ljust(n, "1"), 2)  # past the end, T.81 F.2.2.5 pads with ones

    def huffman(self, table):
        for length in range(1, 17):
            sym = table.get((length, self.bits[self.pos:self.pos + length]))
            if sym is not None:
                self.pos += length
                return sym
        raise ValueError(f"bad Huffman code at bit {self.pos}")


def _extend(v, t):
    """T.81 figure F.12: a t-bit magnitude category value to its signed coefficient."""
    return v - (1 << t) + 1 if t and v < (1 << (t - 1)) else v


def _huffman_table(counts, symbols):
    """T.81 annex C: code lengths and values to {(length, code bits): symbol}."""
    table, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(counts[length - 1]):
            table[(length, format(code, f"0{length}b"))] = symbols[k]
            code += 1
            k += 1
        code <<= 1
    return table


def _split_scan(data, start):
    """The entropy-coded segment from start: returns (intervals split at RSTn, offset of the next marker)."""
    intervals, cur, i = [], bytearray(), start
    while True:
        b = data[i]
        if b != 0xFF:
            cur.append(b)
            i += 1
            continue
        m = data[i + 1]
        if m == 0x00:
            cur.append(0xFF)
            i += 2
        elif 0xD0 <= m <= 0xD7:
            intervals.append(bytes(cur))
            cur = bytearray()
            i += 2
        elif m == 0xFF:
            i += 1
        else:
            intervals.append(bytes(cur))
            return intervals, i


def decode(data):
    """Baseline JPEG bytes -> (height, width, 3) uint8 RGB."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG (no SOI)")
    qt, dc_tables, ac_tables, restart = {}, {}, {}, 0
    frame = None
    planes = None
    i = 2
    while i < len(data):
        if data[i] != 0xFF:
            raise ValueError(f"expected a marker at byte {i}")
        marker = data[i + 1]
        if marker == 0xD9:
            break
        if marker == 0xFF:
            i += 1
            continue
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        seg = data[i + 4:i + 2 + length]
        if marker == 0xDB:
            j = 0
            while j < len(seg):
                pq, tq = seg[j] >> 4, seg[j] & 15
                if pq:
                    vals = struct.unpack(">64H", seg[j + 1:j + 129])
                    j += 129
                else:
                    vals = list(seg[j + 1:j + 65])
                    j += 65
                q = np.zeros(64)
                q[ZIGZAG] = vals
                qt[tq] = q.reshape(8, 8)
        elif marker == 0xC4:
            j = 0
            while j < len(seg):
                tc, th = seg[j] >> 4, seg[j] & 15
                counts = list(seg[j + 1:j + 17])
                n = sum(counts)
                table = _huffman_table(counts, list(seg[j + 17:j + 17 + n]))
                (ac_tables if tc else dc_tables)[th] = table
                j += 17 + n
        elif marker == 0xDD:
            restart = struct.unpack(">H", seg[:2])[0]
        elif marker in (0xC0, 0xC1):
            if seg[0] != 8:
                raise ValueError(f"{seg[0]}-bit samples: only 8-bit baseline is decoded")
            height, width, nc = struct.unpack(">HHB", seg[1:6])
            comps = [(seg[6 + 3 * k], seg[7 + 3 * k] >> 4, seg[7 + 3 * k] & 15, seg[8 + 3 * k]) for k in range(nc)]
            frame = (height, width, comps)
        elif 0xC2 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            raise ValueError(f"SOF{marker - 0xC0}: only baseline (SOF0/SOF1 Huffman) is decoded")
        elif marker == 0xDA:
            planes, i = _decode_scan(data, i + 2 + length, seg, frame, qt, dc_tables, ac_tables, restart)
            continue
        i += 2 + length
    if planes is None:
        raise ValueError("no scan")
    return _to_rgb(planes, frame)


def _decode_scan(data, start, seg, frame, qt, dc_tables, ac_tables, restart):
    """One interleaved scan from byte start -> (the components' sample planes, offset of the next marker)."""
    height, width, comps = frame
    ns = seg[0]
    if ns != len(comps):
        raise ValueError("non-interleaved scans are not decoded")
    sel = {seg[1 + 2 * k]: (seg[2 + 2 * k] >> 4, seg[2 + 2 * k] & 15) for k in range(ns)}
    hmax = max(c[1] for c in comps)
    vmax = max(c[2] for c in comps)
    mcux = -(-width // (8 * hmax))
    mcuy = -(-height // (8 * vmax))
    coef = {c[0]: np.zeros((mcuy * c[2], mcux * c[1], 8, 8)) for c in comps}
    intervals, end = _split_scan(data, start)
    total = mcux * mcuy
    per = restart or total
    for n_int, chunk in enumerate(intervals):
        bits = _Bits(chunk)
        pred = {c[0]: 0 for c in comps}
        for mcu in range(n_int * per, min(total, (n_int + 1) * per)):
            my, mx = divmod(mcu, mcux)
            for cid, h, v, _tq in comps:
                td, ta = sel[cid]
                for by in range(v):
                    for bx in range(h):
                        blk = np.zeros(64)
                        t = bits.huffman(dc_tables[td])
                        pred[cid] += _extend(bits.read(t), t)
                        blk[0] = pred[cid]
                        k = 1
                        while k < 64:
                            rs = bits.huffman(ac_tables[ta])
                            r, s = rs >> 4, rs & 15
                            if s == 0:
                                if r != 15:
                                    break
                                k += 16
                                continue
                            k += r
                            blk[ZIGZAG[k]] = _extend(bits.read(s), s)
                            k += 1
                        coef[cid][my * v + by, mx * h + bx] = blk.reshape(8, 8)
    c = _idct_matrix()
    planes = []
    for cid, h, v, tq in comps:
        blocks = c.T @ (coef[cid] * qt[tq]) @ c + 128
        ny, nx = blocks.shape[:2]
        plane = blocks.transpose(0, 2, 1, 3).reshape(ny * 8, nx * 8)
        plane = np.repeat(np.repeat(plane, vmax // v, 0), hmax // h, 1)
        planes.append(plane[:height, :width])
    return planes, end


def _to_rgb(planes, frame):
    if len(planes) == 1:
        y = np.clip(np.round(planes[0]), 0, 255).astype(np.uint8)
        return np.stack([y] * 3, -1)
    y, cb, cr = planes
    r = y + 1.402 * (cr - 128)
    g = y - 0.344136 * (cb - 128) - 0.714136 * (cr - 128)
    b = y + 1.772 * (cb - 128)
    return np.clip(np.round(np.stack([r, g, b], -1)), 0, 255).astype(np.uint8)


def resize_bilinear(img, out_h, out_w):
    """Bilinear resize with half-pixel centres (OpenCV's INTER_LINEAR sampling grid)."""
    h, w = img.shape[:2]

    def axis(n_out, n_in):
        src = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        i0 = np.floor(src).astype(int)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, src - i0

    y0, y1, fy = axis(out_h, h)
    x0, x1, fx = axis(out_w, w)
    f = img.astype(np.float64)
    rows = f[y0] * (1 - fy)[:, None, None] + f[y1] * fy[:, None, None]
    out = rows[:, x0] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def resize_area(img, out_h, out_w):
    """Shrink by averaging each output pixel's footprint (OpenCV's INTER_AREA for downscaling)."""

    def weights(n_out, n_in):
        # overlap of output cell [o, o+1) * n_in/n_out with input cell [i, i+1)
        edges = np.arange(n_out + 1) * n_in / n_out
        lo = np.maximum(edges[:-1, None], np.arange(n_in)[None, :])
        hi = np.minimum(edges[1:, None], np.arange(n_in)[None, :] + 1)
        w = np.clip(hi - lo, 0, None)
        return w / w.sum(1, keepdims=True)

    rows = np.einsum("oy,yxc->oxc", weights(out_h, img.shape[0]), img.astype(np.float64))
    out = np.einsum("px,oxc->opc", weights(out_w, img.shape[1]), rows)
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jpeg")
    ap.add_argument("out", help=".npz (array 'image', RGB uint8 HxWx3) or .ppm")
    ap.add_argument("--width", type=int,
                    help="resize to this width (area when shrinking, else bilinear), keeping the aspect ratio")
    args = ap.parse_args(argv)
    with open(args.jpeg, "rb") as f:
        img = decode(f.read())
    if args.width:
        h, w = img.shape[:2]
        resize = resize_area if args.width < w else resize_bilinear
        img = resize(img, round(h * args.width / w), args.width)
    if args.out.endswith(".ppm"):
        with open(args.out, "wb") as f:
            f.write(b"P6 %d %d 255\n" % (img.shape[1], img.shape[0]) + img.tobytes())
    else:
        np.savez_compressed(args.out, image=img)
    print(args.out, img.shape, file=sys.stderr)


if __name__ == "__main__":
    main()
