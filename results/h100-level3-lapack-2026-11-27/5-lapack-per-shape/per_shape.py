import sys, collections
def load(path):
    d = collections.defaultdict(list)
    for line in open(path, errors="replace"):
        if not line.startswith("tandem: dgemm "): continue
        kv = dict(p.split("=", 1) for p in line.split()[2:] if "=" in p)
        try: tot = float(kv["total"].rstrip("ms"))
        except Exception: continue
        d[(int(kv["m"]), int(kv["n"]), int(kv["k"]))].append((kv.get("strategy"), tot, kv.get("cpu_threads"), kv.get("gpu_rows")))
    return d
a = load(sys.argv[1]); c = load(sys.argv[2])
rows = []
for shape in sorted(set(a) | set(c), key=lambda s: -s[0]*s[1]*s[2]):
    xa = a.get(shape, [])[1:]; xc = c.get(shape, [])[1:]   # the first call of a shape left out
    if not xa or not xc: continue
    sa = sum(t for _, t, _, _ in xa) / len(xa); sc = sum(t for _, t, _, _ in xc) / len(xc)
    strat = collections.Counter(s for s, _, _, _ in xa)
    rows.append((shape, dict(strat), round(sa, 2), round(sc, 2), len(xa)))
tot_a = tot_c = 0
for shape, strat, sa, sc, n in rows:
    tot_a += sa * n; tot_c += sc * n
    if sa + sc > 2: print(shape, strat, "auto %.2f ms" % sa, "cpu %.2f ms" % sc, "x%.2f" % (sa / sc if sc else 0), n)
print("sum over calls after each shape's first: auto %.0f ms, cpu %.0f ms" % (tot_a, tot_c))
