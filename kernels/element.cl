// The element type every GEMM kernel computes in, and its arithmetic: one place for both kernels
// (gemm.cl, gemm_direct.cl), which the runtime builds with this file between its #defines and the
// kernel's own source.
//
// PRECISION is numbered as CLBlast numbers its own: 32 float, 64 double, 3232 complex float, 6464
// complex double. A complex element is a two-word vector (float2, double2: .x the real part, .y
// the imaginary), so a complex kernel is the real one with its element twice as wide and its
// multiply-add the complex one. CONJ_A and CONJ_B (complex only) conjugate op(A) and op(B) inside
// the multiply-add, where the signs cost nothing: a conjugate transpose is the transpose the
// kernel already reads (TRANS_A, TRANS_B) with CONJ_ on.

#ifndef PRECISION
  #define PRECISION 32
#endif
#if PRECISION == 32
  typedef float real;
  #define SCALAR_ float
  #define COMPLEX 0
#elif PRECISION == 64
  #pragma OPENCL EXTENSION cl_khr_fp64 : enable
  typedef double real;
  #define SCALAR_ double
  #define COMPLEX 0
#elif PRECISION == 3232
  typedef float2 real;
  #define SCALAR_ float
  #define COMPLEX 1
#elif PRECISION == 6464
  #pragma OPENCL EXTENSION cl_khr_fp64 : enable
  typedef double2 real;
  #define SCALAR_ double
  #define COMPLEX 1
#else
  #error "PRECISION must be 32 (float), 64 (double), 3232 (complex float) or 6464 (complex double)"
#endif

// ---- index width: 32-bit unless some offset can pass 2^31 - 1 -----------------------------------
#ifdef INDEX_LONG
  typedef long idx_t;
#else
  typedef int idx_t;
#endif

#ifndef CONJ_A
  #define CONJ_A 0
#endif
#ifndef CONJ_B
  #define CONJ_B 0
#endif
#if !COMPLEX && (CONJ_A || CONJ_B)
  #error "CONJ_A and CONJ_B are for complex precisions (3232, 6464) only"
#endif

// ---- vectors of N elements, as words: a complex element is two of them --------------------------
// LANES(N): the words in N elements; VEC_(N): their vector type (float4 holds two complex floats).
#define VTYPE_CAT_(t, n) t##n
#define VTYPE_(t, n) VTYPE_CAT_(t, n)
#define LANES_CAT_(n) LANES_##n
#define LANES(n) LANES_CAT_(n)
#if COMPLEX
  #define LANES_1 2
  #define LANES_2 4
  #define LANES_4 8
  #define LANES_8 16
#else
  #define LANES_1 1
  #define LANES_2 2
  #define LANES_4 4
  #define LANES_8 8
#endif
#define VEC_(n) VTYPE_(SCALAR_, LANES(n))

// ---- arithmetic: ZERO, IS_ZERO(u), MUL(u, v) = u * v, MADD(acc, a, b): acc += op(a) * op(b) ---
#if COMPLEX
  #define ZERO ((real)(0, 0))
  // (Parameters are never named x or y: .x and .y are the parts.)
  #define IS_ZERO(u) ((u).x == (SCALAR_)0 && (u).y == (SCALAR_)0)
  #define MUL(u, v) ((real)((u).x * (v).x - (u).y * (v).y, (u).x * (v).y + (u).y * (v).x))
  // The imaginary parts as op() sees them.
  #define IM_A_(a) (CONJ_A ? -(a).y : (a).y)
  #define IM_B_(b) (CONJ_B ? -(b).y : (b).y)
  // Four multiply-adds, each its own statement so the compiler contracts each into one FMA.
  #define MADD(acc, a, b)                 \
    do {                                  \
      (acc).x += (a).x * (b).x;           \
      (acc).x -= IM_A_(a) * IM_B_(b);     \
      (acc).y += (a).x * IM_B_(b);        \
      (acc).y += IM_A_(a) * (b).x;        \
    } while (0)
#else
  #define ZERO ((real)0)
  #define IS_ZERO(u) ((u) == (real)0)
  #define MUL(u, v) ((u) * (v))
  #define MADD(acc, a, b) ((acc) += (a) * (b))
#endif

// C's element after the product: alpha * acc, plus beta * C where beta is not zero. beta == 0
// never reads C, so whatever it holds (NaN included) is overwritten.
#define UPDATE(out, acc) \
  (*(out) = IS_ZERO(beta) ? MUL(alpha, acc) : MUL(alpha, acc) + MUL(beta, *(out)))
