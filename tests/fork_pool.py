"""numpy through the drop-in across fork: the parent computes a product (through tandem's GPU
path when the environment asks for it), then a multiprocessing pool, which forks on Linux, has
each child compute products of its own; every result is checked against numpy's einsum (which
does not call BLAS). Exit 0 when all hold. A pool that hangs fails by its timeout."""
import multiprocessing as mp
import sys

import numpy as np


def product(seed):
    rng = np.random.default_rng(seed)
    dtype = np.float32 if seed % 2 == 0 else np.float64
    a = rng.standard_normal((300, 200)).astype(dtype)
    b = rng.standard_normal((200, 250)).astype(dtype)
    c = a @ b
    ref = np.einsum("ik,kj->ij", a.astype(np.float64), b.astype(np.float64))
    err = float(np.max(np.abs(c - ref)) / np.max(np.abs(ref)))
    return seed, err, 1e-4 if dtype == np.float32 else 1e-12


def main():
    ok = True
    for seed, err, tol in [product(0), product(1)]:  # the parent first: OpenCL opens here
        print(f"parent, product {seed}: relative error {err:.2e}")
        ok = ok and err <= tol
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map_async(product, range(2, 10)).get(timeout=120)
    for seed, err, tol in results:
        print(f"child, product {seed}: relative error {err:.2e}")
        ok = ok and err <= tol
    for seed, err, tol in [product(10)]:  # the parent after its children
        print(f"parent after the pool, product {seed}: relative error {err:.2e}")
        ok = ok and err <= tol
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
