// tandem's GEMM kernel family: C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C, all
// row-major with leading dimensions, for any M, N, K (the edges are bounds-checked, so no padding
// is needed and operands can be read in place from the caller's memory), in any of the four
// precisions (kernels/element.cl).
//
// Every tuning parameter has a default, so this file compiles after element.cl alone: the
// built-in database's default GPU kernel (database/defaults.json; a test checks they agree). The
// runtime and the tuner prepend their own #defines.

// The element type and its arithmetic (real, SCALAR_, idx_t, ZERO, MADD, UPDATE, VEC_) come from
// kernels/element.cl, which the runtime puts before this file.

// ---- operand read layouts (row-major view): 0 reads op(X) = X, 1 reads op(X) = X^T ------------
#ifndef TRANS_A
  #define TRANS_A 0
#endif
#ifndef TRANS_B
  #define TRANS_B 0
#endif

// ---- tuning parameters -------------------------------------------------------------------------
#ifndef MWG
  #define MWG 64      // rows of C per work-group
#endif
#ifndef NWG
  #define NWG 64      // columns of C per work-group
#endif
#ifndef KWG
  #define KWG 16      // K step: depth of one tile of A and B
#endif
#ifndef MDIMC
  #define MDIMC 16    // work-items per work-group along M
#endif
#ifndef NDIMC
  #define NDIMC 16    // work-items per work-group along N
#endif
#ifndef KUNROLL
  #define KUNROLL 4   // unroll factor of the inner K loop
#endif
#ifndef VW
  #define VW 4        // vector width of global loads into local memory: 1, 2, 4 or 8
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
#ifndef KERNEL
  #define KERNEL 0    // 0: the general kernel; 1: the tiled kernel (vector local reads, an
#endif                // unchecked path for interior tiles, optional double buffering)
#ifndef VWM
  #define VWM 1       // KERNEL 1: a work-item's rows come in vectors of VWM consecutive rows
#endif
#ifndef VWN
  #define VWN 1       // KERNEL 1: its columns in vectors of VWN consecutive columns
#endif
#ifndef AK
  #define AK 0        // KERNEL 1, A stored as op(A): 1 loads its tile k-fastest (whole rows of
#endif                // the tile per few work-items, coalesced), 0 m-fastest (no bank conflicts)
#ifndef DB
  #define DB 0        // KERNEL 1: 1 double-buffers the local tiles, the next one prefetched
#endif                // into registers while the current one is used (one barrier per K step)
#ifndef CA
  #define CA 0        // KERNEL 1: 0 stages tiles through registers (DB above); 2 to 4: that many
#endif                // local buffers filled by asynchronous copies, CA - 1 tiles ahead
// NV_MAXRREG is read by the host only: -cl-nv-maxrregcount for NVIDIA's compiler.

#define MWI (MWG / MDIMC)  // rows of C per work-item (register tile)
#define NWI (NWG / NDIMC)  // columns of C per work-item

// ---- validity: a parameter set the tuner must not build ----------------------------------------
#if KERNEL != 0 && KERNEL != 1
  #error "KERNEL must be 0 or 1"
#endif
#if KERNEL == 0 && CA != 0
  #error "CA is KERNEL 1's: it must be 0 with KERNEL 0"
#endif
#if MWG % MDIMC != 0 || NWG % NDIMC != 0
  #error "MWG must be a multiple of MDIMC and NWG a multiple of NDIMC"
#endif
#if VW != 1 && VW != 2 && VW != 4 && VW != 8
  #error "VW must be 1, 2, 4 or 8"
#endif
#if KERNEL == 0 && SA && ((TRANS_A == 0 && KWG % VW != 0) || (TRANS_A == 1 && MWG % VW != 0))
  #error "the contiguous side of the A tile must be a multiple of VW"
#endif
#if KERNEL == 0 && SB && ((TRANS_B == 0 && NWG % VW != 0) || (TRANS_B == 1 && KWG % VW != 0))
  #error "the contiguous side of the B tile must be a multiple of VW"
#endif

#define WGS (MDIMC * NDIMC)

#define PRAGMA_(x) _Pragma(#x)
#define UNROLL(n) PRAGMA_(unroll n)

// VW elements from global memory into the private array xs, as one vector of words.
#define VLOAD_CAT_(n) vload##n
#define VLOAD_(n) VLOAD_CAT_(n)
#define VSTORE_CAT_(n) vstore##n
#define VSTORE_(n) VSTORE_CAT_(n)
#define LOAD_VW(xs, src) \
  VSTORE_(LANES(VW))(VLOAD_(LANES(VW))(0, (const __global SCALAR_*)(src)), 0, (SCALAR_*)(xs))

// Element (m, k) of op(A) and (k, n) of op(B), in bounds or zero.
real load_a(const __global real* a, idx_t lda, idx_t M, idx_t K, idx_t m, idx_t k) {
  if (m >= M || k >= K) return ZERO;
#if TRANS_A == 0
  return a[m * lda + k];
#else
  return a[k * lda + m];
#endif
}

real load_b(const __global real* b, idx_t ldb, idx_t K, idx_t N, idx_t k, idx_t n) {
  if (k >= K || n >= N) return ZERO;
#if TRANS_B == 0
  return b[k * ldb + n];
#else
  return b[n * ldb + k];
#endif
}

// ---- transpose: dst (cols x rows) = src (rows x cols)^T, for operands a kernel reads in the other
// layout; a discrete device transposes its own copy instead of the host packing it transposed.
// 16 x 16 work-groups through a padded local tile, so reads and writes are both coalesced.
#define TILE_T 16
__kernel __attribute__((reqd_work_group_size(TILE_T, TILE_T, 1)))
void transpose(const idx_t rows, const idx_t cols, const __global real* restrict src,
               const idx_t src_offset, const idx_t ld_src, __global real* restrict dst,
               const idx_t dst_offset, const idx_t ld_dst) {
  __local real tile[TILE_T][TILE_T + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const idx_t c0 = (idx_t)get_group_id(0) * TILE_T, r0 = (idx_t)get_group_id(1) * TILE_T;
  src += src_offset;
  dst += dst_offset;
  if (r0 + ty < rows && c0 + tx < cols) tile[ty][tx] = src[(r0 + ty) * ld_src + c0 + tx];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (c0 + ty < cols && r0 + tx < rows) dst[(c0 + ty) * ld_dst + r0 + tx] = tile[tx][ty];
}

#if KERNEL == 0
// ================================================================================================
// KERNEL 0: the general kernel. Any layout, optional local staging of either operand, every load
// bounds-checked.

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
      LOAD_VW(xs, a + gm * lda + gk);
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
      LOAD_VW(xs, a + gk * lda + gm);
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
      LOAD_VW(xs, b + gk * ldb + gn);
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
      LOAD_VW(xs, b + gn * ldb + gk);
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
    for (int j = 0; j < NWI; ++j) acc[i][j] = ZERO;

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
        for (int j = 0; j < NWI; ++j) MADD(acc[i][j], areg[i], breg[j]);
    }
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  // beta == 0 must not read C (UPDATE, element.cl).
  for (int i = 0; i < MWI; ++i) {
    const idx_t gm = m0 + ROW_OF(tm, i);
    if (gm >= M) continue;
    for (int j = 0; j < NWI; ++j) {
      const idx_t gn = n0 + COL_OF(tn, j);
      if (gn >= N) continue;
      UPDATE(c + gm * ldc + gn, acc[i][j]);
    }
  }
}
#endif  // KERNEL == 0

#if KERNEL == 1
// ================================================================================================
// KERNEL 1: the tiled kernel. Both operands are staged in local memory k-major ([k][m], [k][n])
// without padding, so a work-item reads its rows and columns as whole vectors. Rows of a
// work-item come in vectors of VWM consecutive rows, MDIMC * VWM apart ("offset" assignment), and
// likewise its columns, so neighbouring work-items read neighbouring vectors. A work-group whose
// tile lies inside C, on operands whose rows are vector-aligned, loads whole vectors with no
// checks; edge tiles take the checked loads of KERNEL 0.

#if MWG % (MDIMC * VWM) != 0 || NWG % (NDIMC * VWN) != 0
  #error "MWG must be a multiple of MDIMC * VWM and NWG of NDIMC * VWN"
#endif
#if (MWG * KWG) % (WGS * VW) != 0 || (NWG * KWG) % (WGS * VW) != 0
  #error "each work-item must load a whole number of VW-vectors of each tile"
#endif
#if KWG % VW != 0 || MWG % VW != 0 || NWG % VW != 0
  #error "VW must divide KWG, MWG and NWG"
#endif
#if (VWM != 1 && VWM != 2 && VWM != 4 && VWM != 8) || (VWN != 1 && VWN != 2 && VWN != 4 && VWN != 8)
  #error "VWM and VWN must be 1, 2, 4 or 8"
#endif
#if CA != 0 && CA != 2 && CA != 3 && CA != 4
  #error "CA must be 0, 2, 3 or 4"
#endif
#if CA && (DB || TRANS_A != 1 || TRANS_B != 0)
  #error "CA copies tiles as they lie: A read transposed, B as stored (A_T 1, B_T 0), DB 0"
#endif
#if CA && VW * (PRECISION == 32 ? 4 : PRECISION == 6464 ? 16 : 8) != 16
  #error "CA copies 16 bytes at a time: VW elements must be 16 bytes"
#endif

// Vectors of VW, VWM and VWN elements (of words: a complex element is two, element.cl).
#if VW == 1
  typedef real realV;
#else
  typedef VEC_(VW) realV;
#endif
#if VWM == 1
  typedef real realM;
#else
  typedef VEC_(VWM) realM;
#endif
#if VWN == 1
  typedef real realN;
#else
  typedef VEC_(VWN) realN;
#endif

#define LOADS_A ((MWG * KWG) / (WGS * VW))  // VW-vectors of the A tile each work-item loads
#define LOADS_B ((NWG * KWG) / (WGS * VW))

// One VW-vector of a tile, from global memory: whole when `fast` (in bounds and aligned), else
// element by element with the bounds checks of load_a / load_b.
#if VW == 1
  #define SET_LANE(v, e, x) ((v) = (x))
  #define GET_LANE(v, e) (v)
#else
  #define SET_LANE(v, e, x) (((real*)&(v))[e] = (x))
  #define GET_LANE(v, e) (((real*)&(v))[e])
#endif

// Reads the work-item's share of the KWG x MWG tile of op(A) at (m0, k0) into registers. With A
// stored as op(A) (TRANS_A 0) the vectors run along k and consecutive work-items take
// consecutive rows, so the transposing stores into [k][m] fall on distinct banks; with A stored
// transposed they run along m, straight into the local layout.
void fetch_a(realV* ra, const __global real* a, idx_t lda, idx_t M, idx_t K, idx_t m0, idx_t k0,
             int lid, bool fast) {
  for (int t = 0; t < LOADS_A; ++t) {
    const int v = lid + t * WGS;
#if TRANS_A == 0
#if AK
    const int m = v / (KWG / VW), k = (v % (KWG / VW)) * VW;
#else
    const int m = v % MWG, k = (v / MWG) * VW;
#endif
    if (fast) {
      ra[t] = *(const __global realV*)(a + (m0 + m) * lda + k0 + k);
    } else {
      for (int e = 0; e < VW; ++e) SET_LANE(ra[t], e, load_a(a, lda, M, K, m0 + m, k0 + k + e));
    }
#else
    const int k = v / (MWG / VW), m = (v % (MWG / VW)) * VW;
    if (fast) {
      ra[t] = *(const __global realV*)(a + (k0 + k) * lda + m0 + m);
    } else {
      for (int e = 0; e < VW; ++e) SET_LANE(ra[t], e, load_a(a, lda, M, K, m0 + m + e, k0 + k));
    }
#endif
  }
}

void store_a(__local real* als, const realV* ra, int lid) {
  for (int t = 0; t < LOADS_A; ++t) {
    const int v = lid + t * WGS;
#if TRANS_A == 0
#if AK
    const int m = v / (KWG / VW), k = (v % (KWG / VW)) * VW;
#else
    const int m = v % MWG, k = (v / MWG) * VW;
#endif
    for (int e = 0; e < VW; ++e) als[(k + e) * MWG + m] = GET_LANE(ra[t], e);
#else
    const int k = v / (MWG / VW), m = (v % (MWG / VW)) * VW;
    *(__local realV*)(als + k * MWG + m) = ra[t];
#endif
  }
}

// The same for the KWG x NWG tile of op(B) at (k0, n0), into [k][n].
void fetch_b(realV* rb, const __global real* b, idx_t ldb, idx_t K, idx_t N, idx_t k0, idx_t n0,
             int lid, bool fast) {
  for (int t = 0; t < LOADS_B; ++t) {
    const int v = lid + t * WGS;
#if TRANS_B == 0
    const int k = v / (NWG / VW), n = (v % (NWG / VW)) * VW;
    if (fast) {
      rb[t] = *(const __global realV*)(b + (k0 + k) * ldb + n0 + n);
    } else {
      for (int e = 0; e < VW; ++e) SET_LANE(rb[t], e, load_b(b, ldb, K, N, k0 + k, n0 + n + e));
    }
#else
    const int n = v % NWG, k = (v / NWG) * VW;
    if (fast) {
      rb[t] = *(const __global realV*)(b + (n0 + n) * ldb + k0 + k);
    } else {
      for (int e = 0; e < VW; ++e) SET_LANE(rb[t], e, load_b(b, ldb, K, N, k0 + k + e, n0 + n));
    }
#endif
  }
}

void store_b(__local real* bls, const realV* rb, int lid) {
  for (int t = 0; t < LOADS_B; ++t) {
    const int v = lid + t * WGS;
#if TRANS_B == 0
    const int k = v / (NWG / VW), n = (v % (NWG / VW)) * VW;
    *(__local realV*)(bls + k * NWG + n) = rb[t];
#else
    const int n = v % NWG, k = (v / NWG) * VW;
    for (int e = 0; e < VW; ++e) bls[(k + e) * NWG + n] = GET_LANE(rb[t], e);
#endif
  }
}

#if CA
// ---- asynchronous copies: global to local without passing through registers ----------------------
// NVIDIA's cp.async (PTX ISA 7.0, sm_80 and later) through inline PTX: a work-item's copies since
// its last commit form a group; wait(n) returns once at most n of its groups are in flight, and a
// barrier after it makes every work-item's copies visible to the work-group. tandem builds this
// only for a device whose probe (src/gpu/engine.cpp, copy_probe below) copied exactly, or, for
// tests, with ASYNC_EMULATE, where a copy is an ordinary load and store.
#if ASYNC_EMULATE
  #define COPY_ASYNC(dst, src) (*(dst) = *(src))
  #define COMMIT_ASYNC()
  #define WAIT_ASYNC(n)
#else
  // 16 bytes, cached in L2 only (.cg); the local address as the 32-bit offset into the shared
  // window that PTX's .shared expects.
  #define COPY_ASYNC(dst, src)                                                           \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((uint)(size_t)(dst)), \
                 "l"(src) : "memory")
  #define COMMIT_ASYNC() asm volatile("cp.async.commit_group;" ::: "memory")
  #define WAIT_ASYNC(n) asm volatile("cp.async.wait_group %0;" ::"n"(n) : "memory")
#endif

// The work-item's share of the KWG x MWG tile of A (read transposed: rows of m) at (m0, k0) and of
// the KWG x NWG tile of B (rows of n) at (k0, n0), copied into [k][m] and [k][n] as they lie:
// asynchronously where `fast`, else checked element by element and stored at once.
void copy_a(__local real* als, const __global real* a, idx_t lda, idx_t M, idx_t K, idx_t m0,
            idx_t k0, int lid, bool fast) {
  for (int t = 0; t < LOADS_A; ++t) {
    const int v = lid + t * WGS;
    const int k = v / (MWG / VW), m = (v % (MWG / VW)) * VW;
    __local realV* dst = (__local realV*)(als + k * MWG + m);
    if (fast) {
      COPY_ASYNC(dst, (const __global realV*)(a + (k0 + k) * lda + m0 + m));
    } else {
      realV x;
      for (int e = 0; e < VW; ++e) SET_LANE(x, e, load_a(a, lda, M, K, m0 + m + e, k0 + k));
      *dst = x;
    }
  }
}

void copy_b(__local real* bls, const __global real* b, idx_t ldb, idx_t K, idx_t N, idx_t k0,
            idx_t n0, int lid, bool fast) {
  for (int t = 0; t < LOADS_B; ++t) {
    const int v = lid + t * WGS;
    const int k = v / (NWG / VW), n = (v % (NWG / VW)) * VW;
    __local realV* dst = (__local realV*)(bls + k * NWG + n);
    if (fast) {
      COPY_ASYNC(dst, (const __global realV*)(b + (k0 + k) * ldb + n0 + n));
    } else {
      realV x;
      for (int e = 0; e < VW; ++e) SET_LANE(x, e, load_b(b, ldb, K, N, k0 + k, n0 + n + e));
      *dst = x;
    }
  }
}

// The probe: one work-group of 32 copies 32 vectors of VW elements from `in` into local memory,
// lane l's to slot 31 - l, waits, and writes the slots back in order. A device copied exactly if
// out[l] == in[31 - l].
__kernel __attribute__((reqd_work_group_size(32, 1, 1)))
void copy_probe(const __global realV* in, __global realV* out) {
  __local realV slots[32] __attribute__((aligned(128)));
  const int lane = get_local_id(0);
  COPY_ASYNC(slots + 31 - lane, in + lane);
  COMMIT_ASYNC();
  WAIT_ASYNC(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[lane] = slots[lane];
}
#endif  // CA

// Row (column) of the work-item's i-th element inside the work-group tile.
#define ROW1(tm, i) ((((i) / VWM) * MDIMC + (tm)) * VWM + (i) % VWM)
#define COL1(tn, j) ((((j) / VWN) * NDIMC + (tn)) * VWN + (j) % VWN)

// acc += the product of one local tile pair, for this work-item's elements.
#define MULTIPLY_TILE(als, bls)                                                        \
  UNROLL(KUNROLL)                                                                      \
  for (int kk = 0; kk < KWG; ++kk) {                                                   \
    real ar[MWI], br[NWI];                                                             \
    for (int i = 0; i < MWI / VWM; ++i) {                                              \
      const realM x = ((__local const realM*)(als + kk * MWG))[i * MDIMC + tm];        \
      for (int e = 0; e < VWM; ++e) ar[i * VWM + e] = ((const real*)&x)[e];            \
    }                                                                                  \
    for (int j = 0; j < NWI / VWN; ++j) {                                              \
      const realN y = ((__local const realN*)(bls + kk * NWG))[j * NDIMC + tn];        \
      for (int e = 0; e < VWN; ++e) br[j * VWN + e] = ((const real*)&y)[e];            \
    }                                                                                  \
    for (int i = 0; i < MWI; ++i)                                                      \
      for (int j = 0; j < NWI; ++j) MADD(acc[i][j], ar[i], br[j]);                    \
  }

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

  // Uniform across the work-group: whether its tiles can be loaded as whole, unchecked vectors.
  const bool a_full = m0 + MWG <= M && lda % VW == 0 && a_offset % VW == 0;
  const bool b_full = n0 + NWG <= N && ldb % VW == 0 && b_offset % VW == 0;

  // Aligned for the vector reads and stores (double16, eight complex doubles, is 128 bytes).
#if CA
  #define BUFFERS CA
#else
  #define BUFFERS (1 + DB)
#endif
  __local real als[BUFFERS][KWG * MWG] __attribute__((aligned(128)));
  __local real bls[BUFFERS][KWG * NWG] __attribute__((aligned(128)));

  real acc[MWI][NWI];
  for (int i = 0; i < MWI; ++i)
    for (int j = 0; j < NWI; ++j) acc[i][j] = ZERO;

#if CA
  // Prologue: the first CA - 1 tile pairs on their way (a group each, empty past K, so that every
  // step waits for the same count). Step t waits for its own pair, and the barrier after the wait
  // also says every work-item is done with step t - 1's buffer, which the copies of pair t + CA - 1
  // then fill: one barrier per step.
  const idx_t steps = (K + KWG - 1) / KWG;
  for (int s = 0; s < CA - 1; ++s) {
    if (s < steps) {
      const idx_t k0 = (idx_t)s * KWG;
      const bool k_full = k0 + KWG <= K;
      copy_a(als[s], a, lda, M, K, m0, k0, lid, a_full && k_full);
      copy_b(bls[s], b, ldb, K, N, k0, n0, lid, b_full && k_full);
    }
    COMMIT_ASYNC();
  }
  int cur = 0, fill = CA - 1;  // buffers of step t and of step t + CA - 1
  for (idx_t t = 0; t < steps; ++t) {
    WAIT_ASYNC(CA - 2);
    barrier(CLK_LOCAL_MEM_FENCE);
    const idx_t ahead = t + CA - 1;
    if (ahead < steps) {
      const idx_t k0 = ahead * KWG;
      const bool k_full = k0 + KWG <= K;
      copy_a(als[fill], a, lda, M, K, m0, k0, lid, a_full && k_full);
      copy_b(bls[fill], b, ldb, K, N, k0, n0, lid, b_full && k_full);
    }
    COMMIT_ASYNC();
    {
      __local const real* al = als[cur];
      __local const real* bl = bls[cur];
      MULTIPLY_TILE(al, bl)
    }
    cur = cur == CA - 1 ? 0 : cur + 1;
    fill = fill == CA - 1 ? 0 : fill + 1;
  }
#elif DB
  realV ra[LOADS_A], rb[LOADS_B];
  // Prologue: the first tile pair into buffer 0. In the loop, the next pair is read from global
  // memory into registers before the current one is multiplied, and stored into the other buffer
  // after it; one barrier per step keeps both buffers consistent.
  if (K > 0) {
    const bool k_full = KWG <= K;
    fetch_a(ra, a, lda, M, K, m0, 0, lid, a_full && k_full);
    fetch_b(rb, b, ldb, K, N, 0, n0, lid, b_full && k_full);
    store_a(als[0], ra, lid);
    store_b(bls[0], rb, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  int cur = 0;
  for (idx_t k0 = 0; k0 < K; k0 += KWG) {
    const idx_t next = k0 + KWG;
    if (next < K) {
      const bool k_full = next + KWG <= K;
      fetch_a(ra, a, lda, M, K, m0, next, lid, a_full && k_full);
      fetch_b(rb, b, ldb, K, N, next, n0, lid, b_full && k_full);
    }
    {
      __local const real* al = als[cur];
      __local const real* bl = bls[cur];
      MULTIPLY_TILE(al, bl)
    }
    if (next < K) {
      store_a(als[1 - cur], ra, lid);
      store_b(bls[1 - cur], rb, lid);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    cur = 1 - cur;
  }
#else
  realV ra[LOADS_A], rb[LOADS_B];
  for (idx_t k0 = 0; k0 < K; k0 += KWG) {
    const bool k_full = k0 + KWG <= K;
    fetch_a(ra, a, lda, M, K, m0, k0, lid, a_full && k_full);
    fetch_b(rb, b, ldb, K, N, k0, n0, lid, b_full && k_full);
    store_a(als[0], ra, lid);
    store_b(bls[0], rb, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    {
      __local const real* al = als[0];
      __local const real* bl = bls[0];
      MULTIPLY_TILE(al, bl)
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  // beta == 0 must not read C (UPDATE, element.cl).
  const bool c_full = m0 + MWG <= M && n0 + NWG <= N && ldc % VWN == 0 && c_offset % VWN == 0;
  if (c_full) {
    for (int i = 0; i < MWI; ++i) {
      __global real* row = c + (m0 + ROW1(tm, i)) * ldc + n0;
      for (int j = 0; j < NWI / VWN; ++j) {
        __global realN* out = (__global realN*)(row + (j * NDIMC + tn) * VWN);
        realN x;
#if COMPLEX
        // Lane by lane: a vector's arithmetic is the words', not the complex numbers'.
        realN old;
        if (!IS_ZERO(beta)) old = *out;
        for (int e = 0; e < VWN; ++e) {
          real* lane = (real*)&x + e;
          *lane = acc[i][j * VWN + e];
          if (!IS_ZERO(beta)) *lane = MUL(alpha, *lane) + MUL(beta, ((real*)&old)[e]);
          else *lane = MUL(alpha, *lane);
        }
        *out = x;
#else
        for (int e = 0; e < VWN; ++e) ((real*)&x)[e] = acc[i][j * VWN + e];
        *out = beta == (real)0 ? alpha * x : alpha * x + beta * *out;
#endif
      }
    }
    return;
  }
  for (int i = 0; i < MWI; ++i) {
    const idx_t gm = m0 + ROW1(tm, i);
    if (gm >= M) continue;
    for (int j = 0; j < NWI; ++j) {
      const idx_t gn = n0 + COL1(tn, j);
      if (gn >= N) continue;
      UPDATE(c + gm * ldc + gn, acc[i][j]);
    }
  }
}
#endif  // KERNEL == 1
