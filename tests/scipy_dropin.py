"""A real client that calls the Fortran BLAS from C without the hidden string lengths: scipy's
scipy.linalg.blas wrappers. Every level-3 routine of every precision scipy wraps (gemm, symm,
syrk, syr2k, trmm, trsm, and hemm, herk, her2k for the complex ones), with every side, uplo,
transpose and diag it offers, at a size that goes straight to OpenBLAS (7 x 5) and one past the
drop-in's threshold (301 x 283, k 263). `run OUT` computes on fixed random inputs and saves the
results; `compare REF OUT` checks two runs agree within rounding."""
import itertools
import sys

import numpy as np
from scipy.linalg import blas

SIZES = ((7, 5, 3), (301, 283, 263))


def matrix(rng, dtype, rows, cols):
    """Entries of order 1/rows and a diagonal of about 1, so that every triangle, unit or not,
    is well conditioned for trsm."""
    m = rng.standard_normal((rows, cols))
    if np.issubdtype(dtype, np.complexfloating):
        m = m + 1j * rng.standard_normal((rows, cols))
    m = m / rows
    for i in range(min(rows, cols)):
        m[i, i] += 1
    return np.asfortranarray(m.astype(dtype))


def cases(dtype):
    """(name, function of a fresh rng) for every call."""
    p = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}[dtype]
    complex_ = p in "cz"
    for m, n, k in SIZES:
        for ta, tb in itertools.product((0, 1, 2) if complex_ else (0, 1), repeat=2):
            def gemm(rng, m=m, n=n, k=k, ta=ta, tb=tb):
                a = matrix(rng, dtype, *((m, k) if ta == 0 else (k, m)))
                b = matrix(rng, dtype, *((k, n) if tb == 0 else (n, k)))
                c = matrix(rng, dtype, m, n)
                return getattr(blas, p + "gemm")(0.75, a, b, -0.5, c, trans_a=ta, trans_b=tb)
            yield f"{p}gemm m{m} n{n} k{k} ta{ta} tb{tb}", gemm
        for side, lower in itertools.product((0, 1), repeat=2):
            routines = ("symm", "hemm") if complex_ else ("symm",)
            for routine in routines:
                def symm(rng, m=m, n=n, side=side, lower=lower, routine=routine):
                    a = matrix(rng, dtype, *((m, m) if side == 0 else (n, n)))
                    b, c = matrix(rng, dtype, m, n), matrix(rng, dtype, m, n)
                    return getattr(blas, p + routine)(0.75, a, b, -0.5, c, side=side, lower=lower)
                yield f"{p}{routine} m{m} n{n} side{side} lower{lower}", symm
            for trans_a, diag in itertools.product((0, 1, 2) if complex_ else (0, 1), (0, 1)):
                for routine in ("trmm", "trsm"):
                    def tri(rng, m=m, n=n, side=side, lower=lower, trans_a=trans_a, diag=diag,
                            routine=routine):
                        a = matrix(rng, dtype, *((m, m) if side == 0 else (n, n)))
                        b = matrix(rng, dtype, m, n)
                        return getattr(blas, p + routine)(0.75, a, b, side=side, lower=lower,
                                                          trans_a=trans_a, diag=diag)
                    yield (f"{p}{routine} m{m} n{n} side{side} lower{lower} trans{trans_a} "
                           f"diag{diag}", tri)
        for trans, lower in itertools.product((0, 1), (0, 1)):
            routines = ("syrk", "syr2k", "herk", "her2k") if complex_ else ("syrk", "syr2k")
            for routine in routines:
                if routine.startswith("her") and trans == 1:
                    trans_ = 2  # herk and her2k take N or C
                else:
                    trans_ = trans
                def rank(rng, n=n, k=k, trans=trans_, lower=lower, routine=routine):
                    shape = (n, k) if trans == 0 else (k, n)
                    a, b = matrix(rng, dtype, *shape), matrix(rng, dtype, *shape)
                    c = matrix(rng, dtype, n, n)
                    f = getattr(blas, p + routine)
                    if routine.endswith("2k"):
                        return f(0.75, a, b, beta=-0.5, c=c, trans=trans, lower=lower)
                    return f(0.75, a, beta=-0.5, c=c, trans=trans, lower=lower)
                yield f"{p}{routine} n{n} k{k} trans{trans_} lower{lower}", rank


def run(out):
    results = {}
    for dtype in (np.float32, np.float64, np.complex64, np.complex128):
        for i, (name, call) in enumerate(cases(dtype)):
            results[name] = call(np.random.default_rng(i))
    np.savez(out, **results)
    print(f"{len(results)} calls")


def compare(ref_file, out_file):
    ref, out = np.load(ref_file), np.load(out_file)
    bad = 0
    for name in ref.files:
        r, o = ref[name], out[name]
        if not np.all(np.isfinite(r)):
            bad += 1
            print(f"NOT FINITE without tandem: {name}")
            continue
        err = np.max(np.abs(r - o)) / max(1.0, np.max(np.abs(r)))
        tol = 2e-5 if r.dtype in (np.float32, np.complex64) else 1e-12
        if not (np.isfinite(err) and err <= tol):
            bad += 1
            print(f"DIFFERS: {name}: max relative difference {err:.3e} (tolerance {tol:g})")
    missing = set(ref.files) ^ set(out.files)
    print(f"{len(ref.files)} calls compared, {bad} differ, {len(missing)} missing")
    return bad == 0 and not missing


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        sys.exit(0 if compare(sys.argv[2], sys.argv[3]) else 1)
