// tandem's direct GEMM kernel (KERNEL 2): C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C,
// row-major, reading every operand where and as the caller stored it: any leading dimension and
// offset, A and B in either layout (TRANS_A, TRANS_B), the edges of M, N and K handled here. It is
// for the calls where the tiled kernels' preparation costs more than it saves: small ones, whose
// copies and launches are most of their time, and odd ones, whose leading dimensions keep KERNEL
// 1 off its vector path. No host packing, no padding, no transposes on the device.
//
// A work-group computes an MWG x NWG tile of C on MDIMC x NDIMC work-items, each holding
// (MWG/MDIMC) x (NWG/NDIMC) accumulators whose rows are MDIMC apart and columns NDIMC apart, so
// neighbouring work-items read neighbouring words of local memory and write neighbouring words of
// C. Per K step the KWG-deep tiles of op(A) and op(B) are staged k-major in local memory, each row
// padded by PADA (PADB) words. Consecutive work-items load consecutive words of the stored
// operand, VWA (VWB) at a time where the operand's leading dimension and offset keep vectors
// aligned; a work-group whose tiles lie wholly inside the operands loads them unchecked, even
// from an odd leading dimension (one word at a time), and only the edge groups check bounds.
//
// Every parameter has a default (the built-in database's default direct kernel for GPUs,
// database/defaults.json; a test checks they agree), so this file compiles after element.cl alone.

// The element type and its arithmetic (real, SCALAR_, idx_t, ZERO, MADD, UPDATE, VEC_) come from
// kernels/element.cl, which the runtime puts before this file.

// ---- how A and B are stored (row-major view): 0 as op(X), 1 as op(X) transposed -----------------
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
  #define KWG 16      // K step: depth of the staged tiles
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
#ifndef VWA
  #define VWA 1       // words per global load of A, along its stored rows: 1, 2, 4 or 8
#endif
#ifndef VWB
  #define VWB 4       // words per global load of B, along its stored rows: 1, 2, 4 or 8
#endif
#ifndef PADA
  #define PADA 1      // words of padding after each k-row of A's local tile
#endif
#ifndef PADB
  #define PADB 0      // words of padding after each k-row of B's local tile
#endif

#define MWI (MWG / MDIMC)  // rows of C per work-item
#define NWI (NWG / NDIMC)  // columns of C per work-item
#define WGS (MDIMC * NDIMC)
#define ALD (MWG + PADA)   // local row length of A's tile ([k][m])
#define BLD (NWG + PADB)   // local row length of B's tile ([k][n])

// ---- validity: a parameter set the tuner must not build (src/gpu/gemm_params.cpp says why first)
#if MWG % MDIMC != 0 || NWG % NDIMC != 0
  #error "MWG must be a multiple of MDIMC and NWG a multiple of NDIMC"
#endif
#if (VWA != 1 && VWA != 2 && VWA != 4 && VWA != 8) || (VWB != 1 && VWB != 2 && VWB != 4 && VWB != 8)
  #error "VWA and VWB must be 1, 2, 4 or 8"
#endif
#if KWG % VWA != 0 || MWG % VWA != 0 || KWG % VWB != 0 || NWG % VWB != 0
  #error "VWA must divide KWG and MWG, and VWB must divide KWG and NWG"
#endif
#if PADA < 0 || PADB < 0
  #error "PADA and PADB must not be negative"
#endif

#define PRAGMA_(x) _Pragma(#x)
#define UNROLL(n) PRAGMA_(unroll n)
// A local tile's rows are padded, so a vector lands on any word: stored with vstoreN, which needs
// only a word's alignment (a vector-typed store needs the vector's, and a CPU device's aligned
// store instruction faults without it).
#define VSTORE_CAT_(n) vstore##n
#define VSTORE_(n) VSTORE_CAT_(n)
#if VWA == 1
  typedef real realA;
#else
  typedef VEC_(VWA) realA;
#endif
#if VWB == 1
  typedef real realB;
#else
  typedef VEC_(VWB) realB;
#endif

// Stages the KWG x MWG tile of op(A) at (m0, k0) into alm[k * ALD + m]. Consecutive work-items
// take consecutive vectors of A's stored rows. `inside`: the tile lies within op(A), so nothing is
// checked; `vec`: A's rows are vector-aligned, so a vector is one load.
void stage_a(__local real* alm, const __global real* a, const idx_t lda, const idx_t M,
             const idx_t K, const idx_t m0, const idx_t k0, const int lid, const bool inside,
             const bool vec) {
#if TRANS_A == 0
  // Stored M x K: A's rows run along k.
  const int per_row = KWG / VWA;
  for (int v = lid; v < MWG * per_row; v += WGS) {
    const int m = v / per_row, k = (v % per_row) * VWA;
    const __global real* src = a + (m0 + m) * lda + k0 + k;
    if (inside && vec) {
      const realA x = *(const __global realA*)src;
      for (int e = 0; e < VWA; ++e) alm[(k + e) * ALD + m] = ((const real*)&x)[e];
    } else {
      for (int e = 0; e < VWA; ++e)
        alm[(k + e) * ALD + m] =
            inside || (m0 + m < M && k0 + k + e < K) ? src[e] : ZERO;
    }
  }
#else
  // Stored K x M: A's rows run along m, straight into the local layout.
  const int per_row = MWG / VWA;
  for (int v = lid; v < KWG * per_row; v += WGS) {
    const int k = v / per_row, m = (v % per_row) * VWA;
    const __global real* src = a + (k0 + k) * lda + m0 + m;
    if (inside && vec) {
#if VWA == 1
      alm[k * ALD + m] = *src;
#else
      VSTORE_(LANES(VWA))(*(const __global realA*)src, 0, (__local SCALAR_*)(alm + k * ALD + m));
#endif
    } else {
      for (int e = 0; e < VWA; ++e)
        alm[k * ALD + m + e] = inside || (k0 + k < K && m0 + m + e < M) ? src[e] : ZERO;
    }
  }
#endif
}

// The same for the KWG x NWG tile of op(B) at (k0, n0), into blm[k * BLD + n].
void stage_b(__local real* blm, const __global real* b, const idx_t ldb, const idx_t K,
             const idx_t N, const idx_t k0, const idx_t n0, const int lid, const bool inside,
             const bool vec) {
#if TRANS_B == 0
  // Stored K x N: B's rows run along n.
  const int per_row = NWG / VWB;
  for (int v = lid; v < KWG * per_row; v += WGS) {
    const int k = v / per_row, n = (v % per_row) * VWB;
    const __global real* src = b + (k0 + k) * ldb + n0 + n;
    if (inside && vec) {
#if VWB == 1
      blm[k * BLD + n] = *src;
#else
      VSTORE_(LANES(VWB))(*(const __global realB*)src, 0, (__local SCALAR_*)(blm + k * BLD + n));
#endif
    } else {
      for (int e = 0; e < VWB; ++e)
        blm[k * BLD + n + e] = inside || (k0 + k < K && n0 + n + e < N) ? src[e] : ZERO;
    }
  }
#else
  // Stored N x K: B's rows run along k.
  const int per_row = KWG / VWB;
  for (int v = lid; v < NWG * per_row; v += WGS) {
    const int n = v / per_row, k = (v % per_row) * VWB;
    const __global real* src = b + (n0 + n) * ldb + k0 + k;
    if (inside && vec) {
      const realB x = *(const __global realB*)src;
      for (int e = 0; e < VWB; ++e) blm[(k + e) * BLD + n] = ((const real*)&x)[e];
    } else {
      for (int e = 0; e < VWB; ++e)
        blm[(k + e) * BLD + n] =
            inside || (n0 + n < N && k0 + k + e < K) ? src[e] : ZERO;
    }
  }
#endif
}

// The MWG x NWG tile of C at work-group (get_group_id(1), get_group_id(0)) of one product, its
// operands already moved to their first elements; alm and blm are the kernel's local tiles.
void direct_tile(const idx_t M, const idx_t N, const idx_t K, const real alpha,
                 const __global real* restrict a, const idx_t lda, const bool a_vec,
                 const __global real* restrict b, const idx_t ldb, const bool b_vec,
                 const real beta, __global real* c, const idx_t ldc, __local real* alm,
                 __local real* blm) {
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int lid = tm * NDIMC + tn;
  const idx_t m0 = (idx_t)get_group_id(1) * MWG, n0 = (idx_t)get_group_id(0) * NWG;
  // Uniform across the work-group, so every branch on them is taken by all its work-items.
  const bool m_inside = m0 + MWG <= M, n_inside = n0 + NWG <= N;

  real acc[MWI][NWI];
  for (int i = 0; i < MWI; ++i)
    for (int j = 0; j < NWI; ++j) acc[i][j] = ZERO;

  for (idx_t k0 = 0; k0 < K; k0 += KWG) {
    const bool k_inside = k0 + KWG <= K;
    stage_a(alm, a, lda, M, K, m0, k0, lid, m_inside && k_inside, a_vec);
    stage_b(blm, b, ldb, K, N, k0, n0, lid, n_inside && k_inside, b_vec);
    barrier(CLK_LOCAL_MEM_FENCE);
    UNROLL(KUNROLL)
    for (int kk = 0; kk < KWG; ++kk) {
      real ar[MWI], br[NWI];
      for (int i = 0; i < MWI; ++i) ar[i] = alm[kk * ALD + tm + i * MDIMC];
      for (int j = 0; j < NWI; ++j) br[j] = blm[kk * BLD + tn + j * NDIMC];
      for (int i = 0; i < MWI; ++i)
        for (int j = 0; j < NWI; ++j) MADD(acc[i][j], ar[i], br[j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // beta == 0 must not read C (UPDATE, element.cl).
  const bool inside = m_inside && n_inside;
  for (int i = 0; i < MWI; ++i) {
    const idx_t gm = m0 + tm + i * MDIMC;
    for (int j = 0; j < NWI; ++j) {
      const idx_t gn = n0 + tn + j * NDIMC;
      if (!inside && (gm >= M || gn >= N)) continue;
      UPDATE(c + gm * ldc + gn, acc[i][j]);
    }
  }
}

// One product.
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm(const idx_t M, const idx_t N, const idx_t K, const real alpha,
          const __global real* restrict a, const idx_t a_offset, const idx_t lda,
          const __global real* restrict b, const idx_t b_offset, const idx_t ldb,
          const real beta, __global real* c, const idx_t c_offset, const idx_t ldc) {
  __local real alm[KWG * ALD];
  __local real blm[KWG * BLD];
  direct_tile(M, N, K, alpha, a + a_offset, lda, lda % VWA == 0 && a_offset % VWA == 0,
              b + b_offset, ldb, ldb % VWB == 0 && b_offset % VWB == 0, beta, c + c_offset, ldc,
              alm, blm);
}

// A batch of products of one shape (the coalesced kernel): product `first + get_group_id(2)`
// reads A at a_offset + that index times stride_a, B and C likewise (a stride of 0 shares one
// operand among all of them). One launch runs as many products as the third dimension holds.
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_batch(const idx_t M, const idx_t N, const idx_t K, const real alpha,
                const __global real* restrict a, const idx_t a_offset, const idx_t lda,
                const idx_t stride_a, const __global real* restrict b, const idx_t b_offset,
                const idx_t ldb, const idx_t stride_b, const real beta, __global real* c,
                const idx_t c_offset, const idx_t ldc, const idx_t stride_c, const idx_t first) {
  __local real alm[KWG * ALD];
  __local real blm[KWG * BLD];
  const idx_t i = first + (idx_t)get_group_id(2);
  const idx_t at = a_offset + i * stride_a, bt = b_offset + i * stride_b;
  direct_tile(M, N, K, alpha, a + at, lda, lda % VWA == 0 && at % VWA == 0, b + bt, ldb,
              ldb % VWB == 0 && bt % VWB == 0, beta, c + c_offset + i * stride_c, ldc, alm, blm);
}
