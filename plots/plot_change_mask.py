#!/usr/bin/env python3
"""Draw lesson 11's idea from build/bin/mask_picture's files: a frame, its change mask, the
tiles changed and recomputed, and a close-up of the receptive-field dilation.

Reads:  PREFIX_grey.pgm, PREFIX_active.pgm, PREFIX_tiles.pgm and PREFIX_info.txt, written by
        `mask_picture --out PREFIX` (lessons/11_delta/extras/mask_picture.c). Nothing is
        computed here but counts of the files' pixels: the masks are the lesson's host code's.
Writes: --out PNG, four panels: the grey frame; the pixels whose change passed the
        threshold; the input tiles that changed and the output tiles recomputed because a
        changed tile reaches them; a close-up of --zoom (default: the window of 9x12 tiles
        with the most tiles recomputed only for a neighbour) with the tile grid.
Exit codes: 0 done; 2 a file is missing or malformed, the files disagree with each other
or with the info file, or --out cannot be written (one line on stderr naming the file).

    python3 plots/plot_change_mask.py PREFIX --out docs/img/11_change_mask.png [--zoom TY,TX]
"""
import argparse
import io
import os
import sys

ZOOM_TILES = (9, 12)  # tile rows, tile columns of the close-up
DPI = 100
PALETTE = 64
CHANGED = (0.85, 0.1, 0.1)  # an input tile that changed; an active pixel
REACHED = (1.0, 0.75, 0.0)  # an output tile recomputed only because a neighbour changed
BOX = (0.0, 0.45, 1.0)  # the close-up's place in the frame


def fail(message):
    print(f"plot_change_mask.py: {message}", file=sys.stderr)
    return 2


def read_pgm(path):
    """A binary PGM with maxval 255 as rows of bytes: (width, height, pixels)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, at = [], 0
    while len(fields) < 4:
        while at < len(data) and data[at:at + 1].isspace():
            at += 1
        if data[at:at + 1] == b"#":
            while at < len(data) and data[at:at + 1] not in (b"\n", b"\r"):
                at += 1
            continue
        start = at
        while at < len(data) and not data[at:at + 1].isspace():
            at += 1
        if start == at:
            raise ValueError(f"{path}: a truncated PGM header")
        fields.append(data[start:at])
    at += 1  # the one whitespace byte after maxval
    if fields[0] != b"P5" or fields[3] != b"255":
        raise ValueError(f"{path}: not a binary PGM with maxval 255")
    try:
        width, height = int(fields[1]), int(fields[2])
    except ValueError:
        raise ValueError(f"{path}: a width or height that is not a number")
    pixels = data[at:]
    if width < 1 or height < 1 or len(pixels) != width * height:
        raise ValueError(f"{path}: {len(pixels)} bytes of pixels for {width}x{height}")
    return width, height, pixels


def read_info(path):
    info = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                key, value = line.strip().split("=", 1)
                info[key] = value
    need = ("preset", "h", "w", "c", "ksize", "threshold", "tile", "frame", "file",
            "active_pixels", "pixels", "changed_tiles", "recomputed_tiles", "tiles", "reach")
    missing = [k for k in need if k not in info]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)}")
    return info


def load(prefix):
    """The three images as numpy arrays and the info, checked against each other."""
    import numpy as np

    info = read_info(f"{prefix}_info.txt")
    arrays = {}
    for name in ("grey", "active", "tiles"):
        path = f"{prefix}_{name}.pgm"
        w, h, pixels = read_pgm(path)
        arrays[name] = np.frombuffer(pixels, dtype=np.uint8).reshape(h, w)
    h, w, tile = int(info["h"]), int(info["w"]), int(info["tile"])
    grey, active, tiles = arrays["grey"], arrays["active"], arrays["tiles"]
    if grey.shape != (h, w) or active.shape != (h, w):
        raise ValueError(f"{prefix}_grey.pgm, _active.pgm: not {w}x{h} as the info says")
    if tiles.shape != (-(-h // tile), -(-w // tile)):
        raise ValueError(f"{prefix}_tiles.pgm: {tiles.shape[1]}x{tiles.shape[0]} tiles, "
                         f"not those of a {w}x{h} frame in tiles of {tile}")
    if not set(np.unique(active)) <= {0, 255} or not set(np.unique(tiles)) <= {0, 128, 255}:
        raise ValueError(f"{prefix}: a mask value other than 0/255 or 0/128/255")
    counts = {"active_pixels": int((active == 255).sum()), "changed_tiles": int((tiles == 255).sum()),
              "recomputed_tiles": int((tiles > 0).sum()), "pixels": h * w, "tiles": tiles.size}
    for key, value in counts.items():
        if int(info[key]) != value:
            raise ValueError(f"{prefix}: {key} {value} in the images, {info[key]} in the info")
    # A tile changed exactly when one of its pixels is active.
    padded = np.zeros((tiles.shape[0] * tile, tiles.shape[1] * tile), dtype=bool)
    padded[:h, :w] = active == 255
    holds = padded.reshape(tiles.shape[0], tile, tiles.shape[1], tile).any(axis=(1, 3))
    if not np.array_equal(holds, tiles == 255):
        raise ValueError(f"{prefix}: the changed tiles are not the tiles holding active pixels")
    return grey, active == 255, tiles, info


def default_zoom(tiles):
    """(ty, tx) of the ZOOM_TILES window holding the most lone changed tiles (no changed
    neighbour: each drags a whole ring of 8 along) with their rings, the first of equals."""
    import numpy as np

    zh, zw = min(ZOOM_TILES[0], tiles.shape[0]), min(ZOOM_TILES[1], tiles.shape[1])
    changed = np.pad(tiles == 255, 1).astype(np.int64)
    near = sum(changed[1 + dy:changed.shape[0] - 1 + dy, 1 + dx:changed.shape[1] - 1 + dx]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    lone = (tiles == 255) & (near == 1)
    best, at = -1, (0, 0)
    for ty in range(tiles.shape[0] - zh + 1):
        for tx in range(tiles.shape[1] - zw + 1):
            n = int(lone[ty + 1:ty + zh - 1, tx + 1:tx + zw - 1].sum())  # the ring inside too
            if n > best:
                best, at = n, (ty, tx)
    return at, (zh, zw)


def overlay(grey, dim):
    """The grey frame as RGB floats, lightened by `dim` so colours on it stand out."""
    import numpy as np

    g = grey.astype(np.float32) / 255.0
    g = dim + (1.0 - dim) * g
    return np.dstack([g, g, g])


def tile_image(tiles, tile, shape):
    """The tile map blown up to pixels: 2 changed, 1 recomputed for a neighbour, 0 neither."""
    import numpy as np

    code = np.where(tiles == 255, 2, np.where(tiles == 128, 1, 0))
    big = np.kron(code, np.ones((tile, tile), dtype=np.int64))
    return big[:shape[0], :shape[1]]


def paint(rgb, where, colour, alpha):
    for ch in range(3):
        rgb[..., ch] = (1 - alpha * where) * rgb[..., ch] + alpha * where * colour[ch]
    return rgb


def draw(prefix, out, zoom):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle
    import numpy as np

    grey, active, tiles, info = load(prefix)
    h, w, tile = grey.shape[0], grey.shape[1], int(info["tile"])
    if zoom is None:
        (zy, zx), (zh, zw) = default_zoom(tiles)
    else:
        (zy, zx) = zoom
        zh, zw = min(ZOOM_TILES[0], tiles.shape[0]), min(ZOOM_TILES[1], tiles.shape[1])
        if not (0 <= zy and zy + zh <= tiles.shape[0] and 0 <= zx and zx + zw <= tiles.shape[1]):
            raise ValueError(f"--zoom {zy},{zx}: the {zh}x{zw} tiles do not fit in "
                             f"{tiles.shape[0]}x{tiles.shape[1]}")
    px, pa, pc = (int(info[k]) for k in ("pixels", "active_pixels", "changed_tiles"))
    nt, pr = int(info["tiles"]), int(info["recomputed_tiles"])
    codes = tile_image(tiles, tile, grey.shape)

    mask_rgb = paint(overlay(grey, 0.75), active.astype(np.float32), CHANGED, 1.0)
    tiles_rgb = overlay(grey, 0.55)
    tiles_rgb = paint(tiles_rgb, (codes == 1).astype(np.float32), REACHED, 0.55)
    tiles_rgb = paint(tiles_rgb, (codes == 2).astype(np.float32), CHANGED, 0.55)

    fig, axes = plt.subplots(2, 2, figsize=(12.0, 9.8), dpi=DPI, layout="constrained")
    (a, b), (c, d) = axes
    a.imshow(grey, cmap="gray", vmin=0, vmax=255, interpolation="antialiased")
    a.set_title(f"frame {info['frame']} ({info['file']}), {w}x{h}\n"
                f"the layer's input: a {info['c']}-channel stem of it")
    y0, x0 = zy * tile, zx * tile
    zoom_h, zoom_w = min(zh * tile, h - y0), min(zw * tile, w - x0)
    a.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), zoom_w, zoom_h, fill=False, ec=BOX, lw=2.5))
    b.imshow(mask_rgb, interpolation="antialiased")
    b.set_title(f"change mask: {pa} of {px} pixels active ({100 * pa / px:.2f} %)\n"
                f"max over {info['c']} channels of |x - x_ref| > {info['threshold']}")
    c.imshow(tiles_rgb, interpolation="antialiased")
    c.set_title(f"{tile}x{tile} input tiles changed: {pc} of {nt} ({100 * pc / nt:.2f} %)\n"
                f"output tiles recomputed: {pr} of {nt} ({100 * pr / nt:.2f} %)")
    c.legend(handles=[Patch(color=CHANGED, label="input tile changed (and recomputed)"),
                      Patch(color=REACHED, label=f"recomputed: a changed tile within "
                                                 f"{info['reach']} tile (ksize {info['ksize']})")],
             loc="lower left", fontsize=8, framealpha=0.9)

    sl = (slice(y0, y0 + zoom_h), slice(x0, x0 + zoom_w))
    close = overlay(grey[sl], 0.55)
    close = paint(close, (codes[sl] == 1).astype(np.float32), REACHED, 0.45)
    close = paint(close, (codes[sl] == 2).astype(np.float32), CHANGED, 0.30)
    close = paint(close, active[sl].astype(np.float32), CHANGED, 1.0)
    d.imshow(close, interpolation="nearest", extent=(x0 - 0.5, x0 + zoom_w - 0.5,
                                                     y0 + zoom_h - 0.5, y0 - 0.5))
    for k in range(zh + 1):
        d.axhline(y0 + k * tile - 0.5, color="black", lw=0.4, alpha=0.5)
    for k in range(zw + 1):
        d.axvline(x0 + k * tile - 0.5, color="black", lw=0.4, alpha=0.5)
    for ty in range(zy, zy + zh):
        for tx in range(zx, zx + zw):
            if ty < tiles.shape[0] and tx < tiles.shape[1] and tiles[ty, tx] == 255:
                d.add_patch(Rectangle((tx * tile - 0.5, ty * tile - 0.5), tile, tile,
                                      fill=False, ec=CHANGED, lw=2.0))
    d.set_xlim(x0 - 0.5, x0 + zoom_w - 0.5)
    d.set_ylim(y0 + zoom_h - 0.5, y0 - 0.5)
    d.set_title(f"close-up of the blue box, {tile}-pixel grid: active pixels (solid red),\n"
                f"changed tiles (red frame), recomputed for a neighbour (yellow)")
    for ax in (a, b, c):
        ax.set_xticks([])
        ax.set_yticks([])
    d.tick_params(labelsize=7)
    for ax in axes.flat:
        ax.title.set_fontsize(11)
    fig.suptitle(f"lesson 11, {info['preset']}: threshold {info['threshold']}, "
                 f"{tile}x{tile} tiles, {info['ksize']}x{info['ksize']} layer "
                 f"(lessons/11_delta/extras/mask_picture.c)", fontsize=12)
    directory = os.path.dirname(out)
    if directory:
        os.makedirs(directory, exist_ok=True)
    # PALETTE colours keep the PNG small: the frame is grey, the overlays few.
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    buffer.seek(0)
    from PIL import Image
    image = Image.open(buffer).convert("RGB")
    # Median cut merges rare colours (the box, the pure overlay colours, the white page)
    # into their neighbours: they get entries of their own.
    fixed = [BOX, CHANGED, REACHED, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)]
    cut = image.quantize(colors=PALETTE - len(fixed), method=Image.Quantize.MEDIANCUT,
                         dither=Image.Dither.NONE)
    palette = cut.getpalette()[:3 * (PALETTE - len(fixed))]
    palette += [round(255 * v) for colour in fixed for v in colour]
    # Each colour to its nearest palette entry (Pillow's own mapping is approximate).
    rgb = np.asarray(image, dtype=np.int32)
    colours, index = np.unique(rgb.reshape(-1, 3), axis=0, return_inverse=True)
    entries = np.array(palette, dtype=np.int32).reshape(-1, 3)
    nearest = ((colours[:, None, :] - entries[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    indexed = Image.fromarray(nearest[index.reshape(-1)].astype(np.uint8).reshape(rgb.shape[:2]),
                              mode="P")
    indexed.putpalette(palette)
    indexed.save(out, optimize=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prefix", help="the --out PREFIX given to mask_picture")
    parser.add_argument("--out", required=True, help="the PNG to write")
    parser.add_argument("--zoom", help="TY,TX: the close-up's top-left tile")
    args = parser.parse_args(argv)
    zoom = None
    if args.zoom is not None:
        try:
            zoom = tuple(int(v) for v in args.zoom.split(","))
            if len(zoom) != 2:
                raise ValueError
        except ValueError:
            return fail(f"--zoom {args.zoom}: expected TY,TX")
    try:
        draw(args.prefix, args.out, zoom)
    except (OSError, ValueError) as e:
        return fail(str(e))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
