// The matrix-engine codelet (KERNEL 3): dgemm and zgemm on the GPU's FP64 matrix instructions,
// NVIDIA's mma.sync through inline PTX, with the contract of kernels/gemm.cl: C[M x N] = alpha *
// op(A) * op(B) + beta * C, row-major with leading dimensions and offsets, any M, N, K (edges
// checked), op() conjugating where CONJ_A or CONJ_B says (element.cl).
//
// A work-group of NDIMC x MDIMC work-items is WARPS warps of 32, laid out WM along M and WN along
// N; each warp owns a WTM x WTN block of the work-group's MWG x NWG tile of C, as FM x FN
// instruction tiles of MMA_M x 8, held in registers in the instruction's fragment layout. Tiles
// of op(A) and op(B), KWG deep, are staged in local memory in the layout they are stored in
// (rows of k where the operand runs along m or n, rows of m or n where it runs along k), padded
// by PADA and PADB elements a row so a fragment's reads fall on distinct banks; with DB the next
// tiles are read into registers while the current ones are multiplied. With KP, each eight of k
// are dealt to the instruction's two steps so that a lane's two values of k are neighbours
// (k = 2t + step, not t + 4 step): where an operand's tile runs along k, one 16-byte read gives a
// lane both steps' fragments. The sum is the same in any order of k.
//
// The instruction is the only device-specific line: MMA_M 8 is mma.sync m8n8k4 (sm_80 and
// later), 16 is m16n8k4 (sm_90). tandem builds this file only for a device whose probe
// (src/gpu/engine.cpp, engine_probe below) ran the same instruction and got exact results, or,
// for tests, with ENGINE_EMULATE, where a work-group's local memory plays the warp's exchange of
// fragments so any OpenCL device can check the codelet's indexing.
//
// A complex product is four real ones on the same fragments: with a = ar + i ai and b = br + i bi,
// the real part gathers ar br and (-ai) bi, the imaginary part ar bi and ai br (a conjugated
// operand's imaginary parts enter negated), each part of C in its own accumulators.
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m8n8k4 / mma.m16n8k4 with .f64"), lane =
// 4 * g + t: A's element (g + 8 i, t) is the lane's a_i; B's (t, g) its b; C's (g + 8 (e / 2),
// 2 t + e % 2) its c_e.

#if PRECISION != 64 && PRECISION != 6464
  #error "the matrix-engine codelet computes in double precision, real or complex (d, z)"
#endif
#if COMPLEX && defined(KP) && KP
  #error "KP is for real elements: a complex element's neighbouring pair of k is 32 bytes"
#endif
#ifndef TRANS_A
  #define TRANS_A 0
#endif
#ifndef TRANS_B
  #define TRANS_B 0
#endif

// ---- tuning parameters (database/defaults.json's "engine"; a test checks they agree) ----------
#ifndef MWG
  #define MWG 64      // rows of C per work-group
#endif
#ifndef NWG
  #define NWG 128     // columns of C per work-group
#endif
#ifndef KWG
  #define KWG 8       // K step: depth of the local tiles
#endif
#ifndef MDIMC
  #define MDIMC 8     // work-items per work-group along M (the launch's shape; warps are
#endif                // counted on the flat index)
#ifndef NDIMC
  #define NDIMC 16    // work-items per work-group along N
#endif
#ifndef WM
  #define WM 1        // warps along M; the rest of the work-group's warps lie along N
#endif
#ifndef MMA_M
  #define MMA_M 16    // the instruction: 16 for m16n8k4, 8 for m8n8k4
#endif
#ifndef VW
  #define VW 2        // elements per global load and local store: 1 or 2
#endif
#ifndef PADA
  #define PADA 4      // elements of padding per row of A's local tile
#endif
#ifndef PADB
  #define PADB 4      // and of B's
#endif
#ifndef KP
  #define KP 0        // 1: k dealt in neighbouring pairs, fragments read 16 bytes at a time
#endif
#ifndef DB
  #define DB 1        // 1: the next tiles are read into registers while these are multiplied
#endif
#ifndef ENGINE_EMULATE
  #define ENGINE_EMULATE 0
#endif

#define WGS (MDIMC * NDIMC)
#define WARPS (WGS / 32)
#define WN (WARPS / WM)
#define WTM (MWG / WM)       // a warp's rows of C
#define WTN (NWG / WN)       // a warp's columns of C
#define FM (WTM / MMA_M)     // instruction tiles along M per warp
#define FN (WTN / 8)         // instruction tiles along N per warp
#define CF (MMA_M / 4)       // accumulators per lane per instruction tile
#define AF (MMA_M / 8)       // elements of A per lane per instruction

// ---- validity: the same rules as src/gpu/gemm_params.cpp's engine_rule, the last guard ---------
#if WGS % 32 != 0 || WARPS % WM != 0
  #error "the work-group must be whole warps, WM of them along M"
#endif
#if MMA_M != 8 && MMA_M != 16
  #error "MMA_M must be 8 or 16"
#endif
#if MWG % (WM * MMA_M) != 0 || NWG % (WN * 8) != 0
  #error "MWG must be a multiple of WM * MMA_M and NWG of WN * 8"
#endif
#if KWG % 4 != 0 || (VW != 1 && VW != 2) || PADA % VW != 0 || PADB % VW != 0
  #error "KWG must be a multiple of 4, VW 1 or 2, PADA and PADB multiples of VW"
#endif
#if KP && (KWG % 8 != 0 || PADA % 2 != 0 || PADB % 2 != 0)
  #error "KP needs KWG a multiple of 8 and even PADA and PADB"
#endif
#if (MWG * KWG) % (WGS * VW) != 0 || (NWG * KWG) % (WGS * VW) != 0
  #error "each work-item must load a whole number of VW-vectors of each tile"
#endif

#define PRAGMA_(x) _Pragma(#x)
#define UNROLL(n) PRAGMA_(unroll n)
// Every loop over the accumulators and fragments is unrolled whole: one index the compiler cannot
// resolve puts the whole array in memory (NVIDIA's build of a first version kept the 64
// accumulators in a 512-byte stack frame).
// The emulation is not unrolled: its barriers would multiply with the unrolled copies, and a CPU
// device's compiler takes minutes over the result.
#if ENGINE_EMULATE
  #define UNROLL_ALL
  #define UNROLL_K(n)
#else
  #define UNROLL_ALL PRAGMA_(unroll)
  #define UNROLL_K(n) UNROLL(n)
#endif

// VW elements (of words: a complex element is two, element.cl).
#if VW == 1
  typedef real realV;
#else
  typedef VEC_(VW) realV;
#endif

// ---- the instruction ----------------------------------------------------------------------------
#if !ENGINE_EMULATE
#if MMA_M == 16
  #define MMA(c, a, b)                                                                        \
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "                         \
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"                       \
                 : "=d"((c)[0]), "=d"((c)[1]), "=d"((c)[2]), "=d"((c)[3])                     \
                 : "d"((a)[0]), "d"((a)[1]), "d"(b), "d"((c)[0]), "d"((c)[1]), "d"((c)[2]),   \
                   "d"((c)[3]))
#else
  #define MMA(c, a, b)                                                                        \
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "                          \
                 "{%0, %1}, {%2}, {%3}, {%4, %5};"                                             \
                 : "=d"((c)[0]), "=d"((c)[1])                                                 \
                 : "d"((a)[0]), "d"(b), "d"((c)[0]), "d"((c)[1]))
#endif
#define MMA_SCRATCH
#define MMA_SCRATCH_ARG
#else
// The warp's exchange through local memory: every lane publishes its fragments, then computes its
// own accumulators from the lanes that hold the row of A and the column of B they need. Every
// work-item of the work-group calls it the same number of times, so the barriers are uniform.
#define MMA_SCRATCH , __local double* xa, __local double* xb
#define MMA_SCRATCH_ARG , xa, xb
void mma_emulated(double* c, const double* a, double b, int warp, int lane,
                  __local double* xa, __local double* xb) {
  __local double* wa = xa + warp * 32 * AF;
  __local double* wb = xb + warp * 32;
  for (int i = 0; i < AF; ++i) wa[lane * AF + i] = a[i];
  wb[lane] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  const int g = lane / 4, t = lane % 4;
  for (int e = 0; e < CF; ++e) {
    const int row = g + 8 * (e / 2), col = 2 * t + e % 2;
    double sum = c[e];
    for (int k = 0; k < 4; ++k) sum += wa[((row % 8) * 4 + k) * AF + row / 8] * wb[col * 4 + k];
    c[e] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#define MMA(c, a, b) mma_emulated((c), (a), (b), warp, lane, xa, xb)
#endif

// ---- the probe: one warp, one instruction, results as the fragment layout says -------------------
// Lane l holds a_i = l + 32 i - 20, b = 3 l - 50 and c_e = 7 e - l: small integers, so the
// product is exact and the host can compare every element (src/gpu/engine.cpp).
__kernel __attribute__((reqd_work_group_size(32, 1, 1)))
void engine_probe(__global double* out) {
  const int lane = get_local_id(0);
#if ENGINE_EMULATE
  __local double xa[32 * AF], xb[32];
  const int warp = 0;
#endif
  double a[AF], c[CF];
  for (int i = 0; i < AF; ++i) a[i] = (double)(lane + 32 * i - 20);
  const double b = (double)(3 * lane - 50);
  for (int e = 0; e < CF; ++e) c[e] = (double)(7 * e - lane);
  MMA(c, a, b);
  for (int e = 0; e < CF; ++e) out[lane * CF + e] = c[e];
}

// ---- local tiles ---------------------------------------------------------------------------------
// op(A)'s tile: [k][m] where A runs along m (TRANS_A 1), [m][k] where it runs along k; op(B)'s:
// [k][n] where B runs along n (TRANS_B 0), [n][k] where it runs along k.
#if TRANS_A
  #define ALD (MWG + PADA)
  #define AL(m, k) ((k) * ALD + (m))
  #define A_TILE (KWG * ALD)
#else
  #define ALD (KWG + PADA)
  #define AL(m, k) ((m) * ALD + (k))
  #define A_TILE (MWG * ALD)
#endif
#if TRANS_B
  #define BLD (KWG + PADB)
  #define BL(k, n) ((n) * BLD + (k))
  #define B_TILE (NWG * BLD)
#else
  #define BLD (NWG + PADB)
  #define BL(k, n) ((k) * BLD + (n))
  #define B_TILE (KWG * BLD)
#endif

#define LOADS_A ((MWG * KWG) / (WGS * VW))
#define LOADS_B ((NWG * KWG) / (WGS * VW))

// Where the t-th VW-vector a work-item loads lies in the tile: its row of the stored layout (r)
// and its first element along the row (e). Consecutive work-items take consecutive vectors of a
// row, so global reads are coalesced and local stores contiguous.
#define A_ROW_LEN (TRANS_A ? MWG : KWG)
#define B_ROW_LEN (TRANS_B ? KWG : NWG)

real engine_load_a(const __global real* a, idx_t lda, idx_t M, idx_t K, idx_t m, idx_t k) {
  if (m >= M || k >= K) return ZERO;
#if TRANS_A
  return a[k * lda + m];
#else
  return a[m * lda + k];
#endif
}

real engine_load_b(const __global real* b, idx_t ldb, idx_t K, idx_t N, idx_t k, idx_t n) {
  if (k >= K || n >= N) return ZERO;
#if TRANS_B
  return b[n * ldb + k];
#else
  return b[k * ldb + n];
#endif
}

// The work-item's vectors of the tiles at (m0, k0) and (k0, n0), into registers: whole vectors
// where `fast` (the tile inside the operand and its rows aligned), else element by element.
void fetch_tiles(realV* ra, realV* rb, const __global real* a, idx_t lda,
                 const __global real* b, idx_t ldb, idx_t M, idx_t N, idx_t K, idx_t m0,
                 idx_t n0, idx_t k0, int lid, bool a_fast, bool b_fast) {
  UNROLL(LOADS_A)
  for (int t = 0; t < LOADS_A; ++t) {
    const int v = lid + t * WGS, r = v / (A_ROW_LEN / VW), e = (v % (A_ROW_LEN / VW)) * VW;
#if TRANS_A
    const idx_t gm = m0 + e, gk = k0 + r;
    if (a_fast) {
      ra[t] = *(const __global realV*)(a + gk * lda + gm);
    } else {
      UNROLL_ALL
      for (int x = 0; x < VW; ++x) ((real*)&ra[t])[x] = engine_load_a(a, lda, M, K, gm + x, gk);
    }
#else
    const idx_t gm = m0 + r, gk = k0 + e;
    if (a_fast) {
      ra[t] = *(const __global realV*)(a + gm * lda + gk);
    } else {
      UNROLL_ALL
      for (int x = 0; x < VW; ++x) ((real*)&ra[t])[x] = engine_load_a(a, lda, M, K, gm, gk + x);
    }
#endif
  }
  UNROLL(LOADS_B)
  for (int t = 0; t < LOADS_B; ++t) {
    const int v = lid + t * WGS, r = v / (B_ROW_LEN / VW), e = (v % (B_ROW_LEN / VW)) * VW;
#if TRANS_B
    const idx_t gn = n0 + r, gk = k0 + e;
    if (b_fast) {
      rb[t] = *(const __global realV*)(b + gn * ldb + gk);
    } else {
      UNROLL_ALL
      for (int x = 0; x < VW; ++x) ((real*)&rb[t])[x] = engine_load_b(b, ldb, K, N, gk + x, gn);
    }
#else
    const idx_t gn = n0 + e, gk = k0 + r;
    if (b_fast) {
      rb[t] = *(const __global realV*)(b + gk * ldb + gn);
    } else {
      UNROLL_ALL
      for (int x = 0; x < VW; ++x) ((real*)&rb[t])[x] = engine_load_b(b, ldb, K, N, gk, gn + x);
    }
#endif
  }
}

void store_tiles(__local real* als, __local real* bls, const realV* ra, const realV* rb,
                 int lid) {
  UNROLL(LOADS_A)
  for (int t = 0; t < LOADS_A; ++t) {
    const int v = lid + t * WGS, r = v / (A_ROW_LEN / VW), e = (v % (A_ROW_LEN / VW)) * VW;
    *(__local realV*)(als + r * ALD + e) = ra[t];
  }
  UNROLL(LOADS_B)
  for (int t = 0; t < LOADS_B; ++t) {
    const int v = lid + t * WGS, r = v / (B_ROW_LEN / VW), e = (v % (B_ROW_LEN / VW)) * VW;
    *(__local realV*)(bls + r * BLD + e) = rb[t];
  }
}

// The accumulators: C's real parts (and its imaginary parts, for complex elements).
#if COMPLEX
  #define ACC_PARAMS double acc[FM][FN][CF], double acci[FM][FN][CF]
  #define ACC_ARGS acc, acci
#else
  #define ACC_PARAMS double acc[FM][FN][CF]
  #define ACC_ARGS acc
#endif

// The warp's block of C += the product of one pair of local tiles, four deep at a time.
void multiply_tiles(ACC_PARAMS, __local const real* als, __local const real* bls, int wm0, int wn0,
                    int g, int t, int warp, int lane MMA_SCRATCH) {
#if KP
  // Eight of k at a time: step s takes k = kk + 2 t + s.
  UNROLL_K(KWG / 8)
  for (int kk = 0; kk < KWG; kk += 8) {
    double af[2][FM][AF], bf[2][FN];
    UNROLL_ALL
    for (int i = 0; i < FM; ++i) {
      UNROLL_ALL
      for (int x = 0; x < AF; ++x) {
        const int m = wm0 + i * MMA_M + 8 * x + g;
#if TRANS_A
        af[0][i][x] = als[AL(m, kk + 2 * t)];
        af[1][i][x] = als[AL(m, kk + 2 * t + 1)];
#else
        const double2 v = *(__local const double2*)(als + AL(m, kk + 2 * t));
        af[0][i][x] = v.x;
        af[1][i][x] = v.y;
#endif
      }
    }
    UNROLL_ALL
    for (int j = 0; j < FN; ++j) {
      const int n = wn0 + j * 8 + g;
#if TRANS_B
      const double2 v = *(__local const double2*)(bls + BL(kk + 2 * t, n));
      bf[0][j] = v.x;
      bf[1][j] = v.y;
#else
      bf[0][j] = bls[BL(kk + 2 * t, n)];
      bf[1][j] = bls[BL(kk + 2 * t + 1, n)];
#endif
    }
    UNROLL_ALL
    for (int step = 0; step < 2; ++step) {
      UNROLL_ALL
      for (int i = 0; i < FM; ++i) {
        UNROLL_ALL
        for (int j = 0; j < FN; ++j) MMA(acc[i][j], af[step][i], bf[step][j]);
      }
    }
  }
#elif COMPLEX
  UNROLL_K(KWG / 4)
  for (int kk = 0; kk < KWG; kk += 4) {
    // Each part of each fragment; A's imaginary parts also negated, for C's real part.
    double ar[FM][AF], ai[FM][AF], an[FM][AF], br[FN], bi[FN];
    UNROLL_ALL
    for (int i = 0; i < FM; ++i) {
      UNROLL_ALL
      for (int x = 0; x < AF; ++x) {
        const real v = als[AL(wm0 + i * MMA_M + 8 * x + g, kk + t)];
        ar[i][x] = v.x;
        ai[i][x] = CONJ_A ? -v.y : v.y;
        an[i][x] = -ai[i][x];
      }
    }
    UNROLL_ALL
    for (int j = 0; j < FN; ++j) {
      const real v = bls[BL(kk + t, wn0 + j * 8 + g)];
      br[j] = v.x;
      bi[j] = CONJ_B ? -v.y : v.y;
    }
    UNROLL_ALL
    for (int i = 0; i < FM; ++i) {
      UNROLL_ALL
      for (int j = 0; j < FN; ++j) {
        MMA(acc[i][j], ar[i], br[j]);
        MMA(acc[i][j], an[i], bi[j]);
        MMA(acci[i][j], ar[i], bi[j]);
        MMA(acci[i][j], ai[i], br[j]);
      }
    }
  }
#else
  UNROLL_K(KWG / 4)
  for (int kk = 0; kk < KWG; kk += 4) {
    double af[FM][AF], bf[FN];
    UNROLL_ALL
    for (int i = 0; i < FM; ++i) {
      UNROLL_ALL
      for (int x = 0; x < AF; ++x) af[i][x] = als[AL(wm0 + i * MMA_M + 8 * x + g, kk + t)];
    }
    UNROLL_ALL
    for (int j = 0; j < FN; ++j) bf[j] = bls[BL(kk + t, wn0 + j * 8 + g)];
    UNROLL_ALL
    for (int i = 0; i < FM; ++i) {
      UNROLL_ALL
      for (int j = 0; j < FN; ++j) MMA(acc[i][j], af[i], bf[j]);
    }
  }
#endif
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm(const idx_t M, const idx_t N, const idx_t K, const real alpha,
          const __global real* restrict a, const idx_t a_offset, const idx_t lda,
          const __global real* restrict b, const idx_t b_offset, const idx_t ldb,
          const real beta, __global real* c, const idx_t c_offset, const idx_t ldc) {
  const int lid = get_local_id(1) * NDIMC + get_local_id(0);
  const int warp = lid / 32, lane = lid % 32, g = lane / 4, t = lane % 4;
  const int wm0 = (warp / WN) * WTM, wn0 = (warp % WN) * WTN;
  const idx_t m0 = (idx_t)get_group_id(1) * MWG, n0 = (idx_t)get_group_id(0) * NWG;
  a += a_offset;
  b += b_offset;
  c += c_offset;

  // Uniform across the work-group: whether its tiles lie inside A and B along m and n, with rows
  // aligned for whole vectors.
  const bool a_full = m0 + MWG <= M && lda % VW == 0 && a_offset % VW == 0;
  const bool b_full = n0 + NWG <= N && ldb % VW == 0 && b_offset % VW == 0;

  __local real als[1 + DB][A_TILE] __attribute__((aligned(32)));
  __local real bls[1 + DB][B_TILE] __attribute__((aligned(32)));
#if ENGINE_EMULATE
  __local double xa[WARPS * 32 * AF], xb[WARPS * 32];
#endif

  double acc[FM][FN][CF];
#if COMPLEX
  double acci[FM][FN][CF];
#endif
  UNROLL_ALL
  for (int i = 0; i < FM; ++i) {
    UNROLL_ALL
    for (int j = 0; j < FN; ++j) {
      UNROLL_ALL
      for (int e = 0; e < CF; ++e) {
        acc[i][j][e] = 0.0;
#if COMPLEX
        acci[i][j][e] = 0.0;
#endif
      }
    }
  }

  realV ra[LOADS_A], rb[LOADS_B];
#if DB
  if (K > 0) {
    const bool k_full = KWG <= K;
    fetch_tiles(ra, rb, a, lda, b, ldb, M, N, K, m0, n0, 0, lid, a_full && k_full,
                b_full && k_full);
    store_tiles(als[0], bls[0], ra, rb, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  int cur = 0;
  for (idx_t k0 = 0; k0 < K; k0 += KWG) {
    const idx_t next = k0 + KWG;
    if (next < K) {
      const bool k_full = next + KWG <= K;
      fetch_tiles(ra, rb, a, lda, b, ldb, M, N, K, m0, n0, next, lid, a_full && k_full,
                  b_full && k_full);
    }
    multiply_tiles(ACC_ARGS, als[cur], bls[cur], wm0, wn0, g, t, warp, lane MMA_SCRATCH_ARG);
    if (next < K) store_tiles(als[1 - cur], bls[1 - cur], ra, rb, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    cur = 1 - cur;
  }
#else
  for (idx_t k0 = 0; k0 < K; k0 += KWG) {
    const bool k_full = k0 + KWG <= K;
    fetch_tiles(ra, rb, a, lda, b, ldb, M, N, K, m0, n0, k0, lid, a_full && k_full,
                b_full && k_full);
    store_tiles(als[0], bls[0], ra, rb, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    multiply_tiles(ACC_ARGS, als[0], bls[0], wm0, wn0, g, t, warp, lane MMA_SCRATCH_ARG);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  // C's elements in the accumulator layout: (g + 8 (e / 2), 2 t + e % 2) of each instruction
  // tile. beta == 0 never reads C (UPDATE, element.cl).
  UNROLL_ALL
  for (int i = 0; i < FM; ++i) {
    UNROLL_ALL
    for (int e2 = 0; e2 < CF / 2; ++e2) {
      const idx_t gm = m0 + wm0 + i * MMA_M + 8 * e2 + g;
      if (gm < M) {
        UNROLL_ALL
        for (int j = 0; j < FN; ++j) {
          const idx_t gn = n0 + wn0 + j * 8 + 2 * t;
          __global real* out = c + gm * ldc + gn;
#if COMPLEX
          if (gn < N) UPDATE(out, ((real)(acc[i][j][2 * e2], acci[i][j][2 * e2])));
          if (gn + 1 < N) UPDATE(out + 1, ((real)(acc[i][j][2 * e2 + 1], acci[i][j][2 * e2 + 1])));
#else
          if (gn < N) UPDATE(out, acc[i][j][2 * e2]);
          if (gn + 1 < N) UPDATE(out + 1, acc[i][j][2 * e2 + 1]);
#endif
        }
      }
    }
  }
}
