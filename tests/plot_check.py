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
import subprocess
import sys
import xml.etree.ElementTree as ET

from PIL import Image  # python3-pil


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
    with Image.open(args.png) as image:
        counts = image.convert("RGB").getcolors(maxcolors=1 << 24)
    for c in colours:
        want = bytes.fromhex(c)
        seen = sum(n for n, rgb in counts if all(abs(rgb[i] - want[i]) <= 24 for i in range(3)))
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
