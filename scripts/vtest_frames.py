#!/usr/bin/env python3
"""Makes data/vtest.tar.xz, the video frames of lesson 11, from the 24 PNG frames of
OpenCV's vtest.avi (data/SOURCES.md says where they come from). Standard library only.

    python3 scripts/vtest_frames.py PNG_DIR [data/vtest.tar.xz]

Each 768x576 8-bit RGB PNG becomes an 8-bit grey binary PGM (P5), grey = ITU-R BT.601
luma rounded to nearest, (299 R + 587 G + 114 B + 500) // 1000. Grey, because 24 RGB
frames are 5.9 MB even under xz (grey: 2.4 MB); the lesson's stem is a 1 -> C
convolution. The PGMs go into a tar with fixed metadata (sorted names, mtime 0, owner
0), compressed with xz -9e: the same PNGs give the same archive. CMake unpacks it into
the build folder at configure time. The script prints each frame's pixel sum (the host
test checks two) and the fraction of 16x16 tiles whose grey changes from the previous
frame by more than 2, 5 and 10 levels.
"""

import io
import lzma
import os
import struct
import sys
import tarfile
import zlib

FIRST, COUNT = 200, 24
WIDTH, HEIGHT = 768, 576
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RGB_COLOUR_TYPE, BYTES_PER_PIXEL = 2, 3
TILE = 16
GREY_STEPS = (2, 5, 10)


def unfilter(data, width, height):
    """The raw RGB bytes of a non-interlaced 8-bit PNG, its row filters undone."""
    stride = width * BYTES_PER_PIXEL
    out = bytearray()
    prior = bytearray(stride)
    for y in range(height):
        at = y * (stride + 1)
        kind, row = data[at], bytearray(data[at + 1 : at + 1 + stride])
        if kind == 1:
            for i in range(BYTES_PER_PIXEL, stride):
                row[i] = (row[i] + row[i - BYTES_PER_PIXEL]) & 255
        elif kind == 2:
            row = bytearray((a + b) & 255 for a, b in zip(row, prior))
        elif kind == 3:
            for i in range(stride):
                left = row[i - BYTES_PER_PIXEL] if i >= BYTES_PER_PIXEL else 0
                row[i] = (row[i] + ((left + prior[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = row[i - BYTES_PER_PIXEL] if i >= BYTES_PER_PIXEL else 0
                c = prior[i - BYTES_PER_PIXEL] if i >= BYTES_PER_PIXEL else 0
                b = prior[i]
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif kind != 0:
            sys.exit(f"unknown PNG row filter {kind}")
        out += row
        prior = row
    return bytes(out)


def read_rgb_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != PNG_SIGNATURE:
        sys.exit(f"{path}: not a PNG file")
    at, packed = 8, []
    while at < len(data):
        size, name = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + size]
        at += size + 12
        if name == b"IHDR":
            width, height, depth, colour, _, _, interlaced = struct.unpack(">IIBBBBB", body)
            if (width, height, depth, colour, interlaced) != (WIDTH, HEIGHT, 8, RGB_COLOUR_TYPE, 0):
                sys.exit(f"{path}: expected a {WIDTH}x{HEIGHT} 8-bit RGB non-interlaced PNG")
        elif name == b"IDAT":
            packed.append(body)
        elif name == b"IEND":
            break
    return unfilter(zlib.decompress(b"".join(packed)), WIDTH, HEIGHT)


def grey_of(rgb):
    r, g, b = rgb[0::3], rgb[1::3], rgb[2::3]
    return bytes((299 * R + 587 * G + 114 * B + 500) // 1000 for R, G, B in zip(r, g, b))


def changed_tile_fractions(before, after):
    """Per grey step: the fraction of TILE x TILE tiles (the last row and column of
    tiles cut by the image edge) holding a pixel that changed by more than the step."""
    tiles_x, tiles_y = -(-WIDTH // TILE), -(-HEIGHT // TILE)
    largest = [0] * (tiles_x * tiles_y)
    for y in range(HEIGHT):
        row = y * WIDTH
        tile_row = y // TILE * tiles_x
        for x in range(WIDTH):
            d = abs(after[row + x] - before[row + x])
            t = tile_row + x // TILE
            if d > largest[t]:
                largest[t] = d
    return [sum(d > step for d in largest) / len(largest) for step in GREY_STEPS]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    png_dir = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) == 3 else "data/vtest.tar.xz"
    tar_bytes = io.BytesIO()
    sums = [0.0] * len(GREY_STEPS)
    previous = None
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for frame in range(FIRST, FIRST + COUNT):
            grey = grey_of(read_rgb_png(os.path.join(png_dir, f"vtest_{frame}.png")))
            pgm = b"P5\n%d %d\n255\n" % (WIDTH, HEIGHT) + grey
            info = tarfile.TarInfo(f"vtest/vtest_{frame}.pgm")
            info.size, info.mtime, info.mode = len(pgm), 0, 0o644
            tar.addfile(info, io.BytesIO(pgm))
            print(f"vtest_{frame}.pgm  pixel sum {sum(grey)}")
            if previous is not None:
                for i, f in enumerate(changed_tile_fractions(previous, grey)):
                    sums[i] += f
            previous = grey
    packed = lzma.compress(tar_bytes.getvalue(), preset=9 | lzma.PRESET_EXTREME)
    with open(out_path, "wb") as f:
        f.write(packed)
    print(f"{out_path}: {len(packed)} bytes ({len(tar_bytes.getvalue())} unpacked)")
    for step, s in zip(GREY_STEPS, sums):
        print(f"{TILE}x{TILE} tiles with a grey change > {step}: {100 * s / (COUNT - 1):.1f}%")


if __name__ == "__main__":
    main()
