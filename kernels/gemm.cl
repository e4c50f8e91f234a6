// tandem's GEMM kernel family: C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C, all
// row-major with leading dimensions, for any M, N, K (the edges are bounds-checked, so no padding
// is needed and operands can be read in place from the caller's memory).
//
// Every tuning parameter has a default, so this file compiles alone. The runtime and the tuner
// prepend their own #defines.

// ---- precision -------------------------------------------------------------------------------
#ifdef USE_DOUBLE
  #pragma OPENCL EXTENSION cl_khr_fp64 : enable
  typedef double real;
#else
  typedef float real;
#endif

// ---- index width: 32-bit unless some offset can pass 2^31 - 1 -----------------------------------
#ifdef INDEX_LONG
  typedef long idx_t;
#else
  typedef int idx_t;
#endif

// ---- operand read layouts (row-major view): 0 reads op(X) = X, 1 reads op(X) = X^T ------------
#ifndef TRANS_A
  #define TRANS_A 0
#endif
#ifndef TRANS_B
  #define TRANS_B 0
#endif

// ---- tuning parameters -------------------------------------------------------------------------
#ifndef MWG
  #define MWG 32      // rows of C per work-group
#endif
#ifndef NWG
  #define NWG 32      // columns of C per work-group
#endif
#ifndef KWG
  #define KWG 16      // K step: depth of one tile of A and B
#endif
#ifndef MDIMC
  #define MDIMC 8     // work-items per work-group along M
#endif
#ifndef NDIMC
  #define NDIMC 8     // work-items per work-group along N
#endif
#ifndef KUNROLL
  #define KUNROLL 4   // unroll factor of the inner K loop
#endif
#ifndef VW
  #define VW 1        // vector width of global loads into local memory: 1, 2, 4 or 8
#endif
#ifndef SA
  #define SA 1        // 1: stage tiles of A in local memory; 0: read A from global memory
#endif
#ifndef SB
  #define SB 1        // 1: stage tiles of B in local memory; 0: read B from global memory
#endif
#ifndef STRIDED
  #define STRIDED 1   // 1: a work-item's elements are MDIMC/NDIMC apart; 0: consecutive
#endif

#define MWI (MWG / MDIMC)  // rows of C per work-item (register tile)
#define NWI (NWG / NDIMC)  // columns of C per work-item

// ---- validity: a parameter set the tuner must not build ----------------------------------------
#if MWG % MDIMC != 0 || NWG % NDIMC != 0
  #error "MWG must be a multiple of MDIMC and NWG a multiple of NDIMC"
#endif
#if VW != 1 && VW != 2 && VW != 4 && VW != 8
  #error "VW must be 1, 2, 4 or 8"
#endif
#if SA && ((TRANS_A == 0 && KWG % VW != 0) || (TRANS_A == 1 && MWG % VW != 0))
  #error "the contiguous side of the A tile must be a multiple of VW"
#endif
#if SB && ((TRANS_B == 0 && NWG % VW != 0) || (TRANS_B == 1 && KWG % VW != 0))
  #error "the contiguous side of the B tile must be a multiple of VW"
#endif

#define WGS (MDIMC * NDIMC)

#define PRAGMA_(x) _Pragma(#x)
#define UNROLL(n) PRAGMA_(unroll n)

#define VLOAD_CAT_(n) vload##n
#define VLOAD_(n) VLOAD_CAT_(n)
#define VLOAD VLOAD_(VW)
#define VSTORE_CAT_(n) vstore##n
#define VSTORE_(n) VSTORE_CAT_(n)
#define VSTORE VSTORE_(VW)

// Element (m, k) of op(A) and (k, n) of op(B), in bounds or zero.
real load_a(const __global real* a, idx_t lda, idx_t M, idx_t K, idx_t m, idx_t k) {
  if (m >= M || k >= K) return (real)0;
#if TRANS_A == 0
  return a[m * lda + k];
#else
  return a[k * lda + m];
#endif
}

real load_b(const __global real* b, idx_t ldb, idx_t K, idx_t N, idx_t k, idx_t n) {
  if (k >= K || n >= N) return (real)0;
#if TRANS_B == 0
  return b[k * ldb + n];
#else
  return b[n * ldb + k];
#endif
}

// Index of a work-item's i-th row (or column) inside the work-group tile.
#if STRIDED
  #define ROW_OF(tm, i) ((tm) + (i) * MDIMC)
  #define COL_OF(tn, j) ((tn) + (j) * NDIMC)
#else
  #define ROW_OF(tm, i) ((tm) * MWI + (i))
  #define COL_OF(tn, j) ((tn) * NWI + (j))
#endif

// Local tiles are stored k-major ([k][m] and [k][n]) so the inner loop reads a row of each. One
// element of padding per row keeps transposing stores off a single bank.
#define ALD (MWG + 1)
#define BLD (NWG + 1)

#if SA
// Copies the KWG x MWG tile of op(A) at (m0, k0) into als[k * ALD + m]; consecutive work-items read
// consecutive addresses of A, VW elements at a time where the whole vector is in bounds.
void stage_a(__local real* als, const __global real* a, idx_t lda, idx_t M, idx_t K,
                    idx_t m0, idx_t k0, int lid) {
#if TRANS_A == 0
  const int per_row = KWG / VW;            // vectors along k
  for (int v = lid; v < MWG * per_row; v += WGS) {
    const int m = v / per_row, k = (v % per_row) * VW;
    const idx_t gm = m0 + m, gk = k0 + k;
#if VW > 1
    if (gm < M && gk + VW <= K) {
      real xs[VW];
      VSTORE(VLOAD(0, a + gm * lda + gk), 0, xs);
      for (int e = 0; e < VW; ++e) als[(k + e) * ALD + m] = xs[e];
      continue;
    }
#endif
    for (int e = 0; e < VW; ++e) als[(k + e) * ALD + m] = load_a(a, lda, M, K, gm, gk + e);
  }
#else
  const int per_row = MWG / VW;            // vectors along m
  for (int v = lid; v < KWG * per_row; v += WGS) {
    const int k = v / per_row, m = (v % per_row) * VW;
    const idx_t gm = m0 + m, gk = k0 + k;
#if VW > 1
    if (gk < K && gm + VW <= M) {
      real xs[VW];
      VSTORE(VLOAD(0, a + gk * lda + gm), 0, xs);
      for (int e = 0; e < VW; ++e) als[k * ALD + m + e] = xs[e];
      continue;
    }
#endif
    for (int e = 0; e < VW; ++e) als[k * ALD + m + e] = load_a(a, lda, M, K, gm + e, gk);
  }
#endif
}
#endif

#if SB
// Copies the KWG x NWG tile of op(B) at (k0, n0) into bls[k * BLD + n].
void stage_b(__local real* bls, const __global real* b, idx_t ldb, idx_t K, idx_t N,
                    idx_t k0, idx_t n0, int lid) {
#if TRANS_B == 0
  const int per_row = NWG / VW;            // vectors along n
  for (int v = lid; v < KWG * per_row; v += WGS) {
    const int k = v / per_row, n = (v % per_row) * VW;
    const idx_t gk = k0 + k, gn = n0 + n;
#if VW > 1
    if (gk < K && gn + VW <= N) {
      real xs[VW];
      VSTORE(VLOAD(0, b + gk * ldb + gn), 0, xs);
      for (int e = 0; e < VW; ++e) bls[k * BLD + n + e] = xs[e];
      continue;
    }
#endif
    for (int e = 0; e < VW; ++e) bls[k * BLD + n + e] = load_b(b, ldb, K, N, gk, gn + e);
  }
#else
  const int per_row = KWG / VW;            // vectors along k
  for (int v = lid; v < NWG * per_row; v += WGS) {
    const int n = v / per_row, k = (v % per_row) * VW;
    const idx_t gk = k0 + k, gn = n0 + n;
#if VW > 1
    if (gn < N && gk + VW <= K) {
      real xs[VW];
      VSTORE(VLOAD(0, b + gn * ldb + gk), 0, xs);
      for (int e = 0; e < VW; ++e) bls[(k + e) * BLD + n] = xs[e];
      continue;
    }
#endif
    for (int e = 0; e < VW; ++e) bls[(k + e) * BLD + n] = load_b(b, ldb, K, N, gk + e, gn);
  }
#endif
}
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm(const idx_t M, const idx_t N, const idx_t K, const real alpha,
          const __global real* restrict a, const idx_t a_offset, const idx_t lda,
          const __global real* restrict b, const idx_t b_offset, const idx_t ldb,
          const real beta, __global real* c, const idx_t c_offset, const idx_t ldc) {
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int lid = tm * NDIMC + tn;
  const idx_t m0 = (idx_t)get_group_id(1) * MWG, n0 = (idx_t)get_group_id(0) * NWG;
  a += a_offset;
  b += b_offset;
  c += c_offset;

#if SA
  __local real als[KWG * ALD];
#endif
#if SB
  __local real bls[KWG * BLD];
#endif

  real acc[MWI][NWI];
  for (int i = 0; i < MWI; ++i)
    for (int j = 0; j < NWI; ++j) acc[i][j] = (real)0;

  for (idx_t k0 = 0; k0 < K; k0 += KWG) {
#if SA
    stage_a(als, a, lda, M, K, m0, k0, lid);
#endif
#if SB
    stage_b(bls, b, ldb, K, N, k0, n0, lid);
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    UNROLL(KUNROLL)
    for (int kk = 0; kk < KWG; ++kk) {
      real areg[MWI], breg[NWI];
      for (int i = 0; i < MWI; ++i) {
#if SA
        areg[i] = als[kk * ALD + ROW_OF(tm, i)];
#else
        areg[i] = load_a(a, lda, M, K, m0 + ROW_OF(tm, i), k0 + kk);
#endif
      }
      for (int j = 0; j < NWI; ++j) {
#if SB
        breg[j] = bls[kk * BLD + COL_OF(tn, j)];
#else
        breg[j] = load_b(b, ldb, K, N, k0 + kk, n0 + COL_OF(tn, j));
#endif
      }
      for (int i = 0; i < MWI; ++i)
        for (int j = 0; j < NWI; ++j) acc[i][j] += areg[i] * breg[j];
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  // beta == 0 must not read C: whatever it holds (NaN included) is overwritten.
  for (int i = 0; i < MWI; ++i) {
    const idx_t gm = m0 + ROW_OF(tm, i);
    if (gm >= M) continue;
    for (int j = 0; j < NWI; ++j) {
      const idx_t gn = n0 + COL_OF(tn, j);
      if (gn >= N) continue;
      __global real* out = c + gm * ldc + gn;
      *out = beta == (real)0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *out;
    }
  }
}
