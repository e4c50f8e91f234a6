"""A real client: numpy's a @ b for 2048-square float32 and float64 (numpy calls cblas_sgemm and
cblas_dgemm through libblas.so.3), and a.T @ a for 1024-square ones (numpy calls cblas_ssyrk and
cblas_dsyrk for a product of an array with its own transpose); for complex64 and complex128,
a @ b and a.conj().T @ a for 512-square ones (cblas_cgemm and cblas_zgemm: the conjugate is a new
array, so the second is a transposed GEMM, not a rank-k update). `run OUT` computes on fixed random
inputs and saves the results; `compare REF OUT` checks the two runs agree."""
import sys

import numpy as np


def run(out):
    rng = np.random.default_rng(2026)
    results = {}
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((2048, 2048)).astype(dtype)
        b = rng.standard_normal((2048, 2048)).astype(dtype)
        results[np.dtype(dtype).name] = a @ b
        g = rng.standard_normal((1024, 1024)).astype(dtype)
        results[np.dtype(dtype).name + "_gram"] = g.T @ g
    for dtype in (np.complex64, np.complex128):
        def draw():
            return (rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))).astype(dtype)
        a, b = draw(), draw()
        results[np.dtype(dtype).name] = a @ b
        results[np.dtype(dtype).name + "_gram"] = a.conj().T @ a
    np.savez(out, **results)


def compare(ref_file, out_file):
    ref, out = np.load(ref_file), np.load(out_file)
    ok = True
    for name in ("float32", "float64", "float32_gram", "float64_gram",
                 "complex64", "complex128", "complex64_gram", "complex128_gram"):
        r, o = ref[name].astype(np.complex128), out[name].astype(np.complex128)
        err = np.max(np.abs(r - o)) / np.max(np.abs(r))
        single = name.split("_")[0] in ("float32", "complex64")
        tol = 1e-5 if single else 1e-12
        print(f"{name}: max relative difference with and without tandem = {err:.3e} (tolerance {tol:g})")
        ok = ok and bool(np.isfinite(err)) and err <= tol
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        sys.exit(0 if compare(sys.argv[2], sys.argv[3]) else 1)
