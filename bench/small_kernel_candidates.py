#!/usr/bin/env python3
"""Candidates for bench/kernel_sweep.sh: kernels/gemm.cl's tiled kernel (KERNEL 1) with small
tiles for sgemm calls of 256^3 to 1024^3, reading A and B as stored (no transpose launch), one
launch (CHUNK_FILL 64). Tiles of 16 to 64 rows and columns, 64 to 256 work-items each holding 2 to
32 elements of C, K steps of 16 and 32, with and without double buffering; each with the widest
vectors its shape allows (the kernel's own #error rules). Writes "s PARAMS" lines to stdout.

    python3 bench/small_kernel_candidates.py > candidates.txt
"""
import itertools


def widest_load(mwg, nwg, kwg, wgs):
    for vw in (8, 4, 2, 1):
        if ((mwg * kwg) % (wgs * vw) == 0 and (nwg * kwg) % (wgs * vw) == 0 and kwg % vw == 0
                and mwg % vw == 0 and nwg % vw == 0):
            return vw
    return None


def candidates():
    for mwg, nwg in itertools.product((16, 32, 64), repeat=2):
        for mdimc, ndimc in itertools.product((4, 8, 16, 32), repeat=2):
            wgs = mdimc * ndimc
            if not 64 <= wgs <= 256 or mwg % mdimc or nwg % ndimc:
                continue
            mwi, nwi = mwg // mdimc, nwg // ndimc
            if not 2 <= mwi * nwi <= 32:
                continue
            vwm, vwn = min(mwi, 8), min(nwi, 8)
            if mwi % vwm or nwi % vwn:
                continue
            for kwg in (16, 32):
                vw = widest_load(mwg, nwg, kwg, wgs)
                if vw is None:
                    continue
                for db in (0, 1):
                    yield {"AK": 0, "A_T": -1, "B_T": -1, "CHUNK_FILL": 64, "DB": db,
                           "KERNEL": 1, "KUNROLL": min(kwg, 16), "KWG": kwg, "MDIMC": mdimc,
                           "MWG": mwg, "NDIMC": ndimc, "NV_MAXRREG": 128, "NWG": nwg,
                           "QUEUES": 1, "SA": 1, "SB": 1, "STRIDED": 1, "VW": vw, "VWM": vwm,
                           "VWN": vwn}


if __name__ == "__main__":
    seen = []
    for c in candidates():
        line = ",".join("%s=%d" % (k, c[k]) for k in sorted(c))
        if line not in seen:
            seen.append(line)
    print("# %d candidates (bench/small_kernel_candidates.py)" % len(seen))
    for line in seen:
        print("s " + line)
