#!/usr/bin/env python3
"""Checks one of tandem compare's SVG plots, and the PNG that librsvg renders of it.

    plot_check.py SVG PNG --kind bars|lines --colours RRGGBB,... [--labels TEXT|TEXT...]
                  [--numbers 0,20,...] [--error-bars N]

The SVG must parse; each series' colour is filled (bars) or stroked (lines), never the other;
every --labels text appears (legend entries, units); the numeric labels are exactly --numbers
(round ticks, nothing else); there are at least --error-bars error bars (a vertical line with a
cap centred on each end). rsvg-convert (librsvg2-bin) then renders the PNG, which must show
each colour. Exits 1 with the reasons.
"""
import argparse
import collections
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib


def png_pixels(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG, not interlaced."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 4 if colour == 6 else 3
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def error_bars(shapes):
    """Vertical segments with a horizontal cap centred on each end."""
    def ends(e):
        pts = e.get("points", "").split()
        if len(pts) != 2 or e.get("fill", "none") != "none":
            return None
        return [tuple(map(float, p.split(","))) for p in pts]
    segments = [s for s in map(ends, shapes) if s]
    caps = {(round((a[0] + b[0]) / 2, 1), round(a[1], 1))
            for a, b in segments if abs(a[1] - b[1]) < 0.01 and abs(a[0] - b[0]) > 0.01}
    return sum(1 for a, b in segments
               if abs(a[0] - b[0]) < 0.01 and abs(a[1] - b[1]) > 0.01
               and (round(a[0], 1), round(a[1], 1)) in caps
               and (round(b[0], 1), round(b[1], 1)) in caps)


def check(args):
    problems = []
    root = ET.parse(args.svg).getroot()
    # PLplot draws both as polylines: filled (bars, legend boxes) or not (lines, axes).
    shapes = [e for e in root.iter() if e.tag.endswith(("polyline", "polygon", "path"))]
    fills = {e.get("fill", "none").lower() for e in shapes} - {"none"}
    strokes = {e.get("stroke", "").lower() for e in shapes if e.get("fill", "none") == "none"}
    texts = ["".join(e.itertext()) for e in root.iter() if e.tag.endswith("text")]
    colours = [c.lower() for c in args.colours.split(",")]
    for c in colours:
        drawn, other = (fills, strokes) if args.kind == "bars" else (strokes, fills)
        if "#" + c not in drawn:
            problems.append(f"no {args.kind} in #{c} (drawn: {sorted(drawn)})")
        if "#" + c in other:
            problems.append(f"#{c} is drawn as {'lines' if args.kind == 'bars' else 'bars'} too")
    for label in filter(None, (args.labels or "").split("|")):
        if label not in texts:
            problems.append(f"no label '{label}'")
    numbers = set()
    for t in texts:
        try:
            float(t)
            numbers.add(t)
        except ValueError:
            pass
    if args.numbers is not None and numbers != set(args.numbers.split(",")):
        problems.append(f"numeric labels {sorted(numbers, key=float)}, not {args.numbers}")
    if error_bars(shapes) < args.error_bars:
        problems.append(f"{error_bars(shapes)} error bars, fewer than {args.error_bars}")
    subprocess.run(["rsvg-convert", args.svg, "-o", args.png], check=True)
    width, height, channels, rows = png_pixels(args.png)
    counts = collections.Counter(row[x:x + 3] for row in rows
                                 for x in range(0, width * channels, channels))
    for c in colours:
        want = bytes.fromhex(c)
        seen = sum(n for rgb, n in counts.items()
                   if all(abs(rgb[i] - want[i]) <= 24 for i in range(3)))
        if seen < 20:
            problems.append(f"the PNG shows #{c} in {seen} pixels")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("svg")
    parser.add_argument("png")
    parser.add_argument("--kind", choices=["bars", "lines"], required=True)
    parser.add_argument("--colours", required=True)
    parser.add_argument("--labels")
    parser.add_argument("--numbers")
    parser.add_argument("--error-bars", type=int, default=0)
    args = parser.parse_args()
    problems = check(args)
    for p in problems:
        print(f"plot_check {args.svg}: {p}")
    if not problems:
        print(f"plot_check {args.svg}: {args.kind}, every colour, label and tick as expected")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
