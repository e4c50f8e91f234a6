/* Every level-3 entry of the drop-in leaves its caller's frame alone and computes right when a C
 * program calls it as C programs do (issue 39): the Fortran entries through prototypes without
 * gfortran's hidden string lengths (scipy's wrappers, many C programs and older LAPACK builds call
 * them so), the CBLAS entries through cblas.h's. Every precision: s and d (gemm, syrk, syr2k, symm,
 * trmm, trsm), c and z (those, and hemm, herk, her2k). Each call runs twice:
 *  - through frame_guard_call (tests/frame_guard_x86_64.S), which places guard values right above
 *    the stack arguments the caller passed, where the hidden lengths would be, and counts those the
 *    entry changed; OpenBLAS's own entry, called the same way, gives the reference result;
 *  - through an ordinary call compiled at -O2, as a program makes it.
 * Run plain (the entries are OpenBLAS's: the harness's own check) and under
 * LD_PRELOAD=libtandem_blas.so (tests/caller_frame_test.sh), at sizes that go straight to OpenBLAS
 * and sizes that go through tandem's own path, with every side, uplo, transpose (the conjugate one
 * too where a complex routine takes it) and diag.
 *
 *   caller_frame_test [LETTERS]   prints where the entries resolved, then one line per failure;
 *                                 LETTERS: the precisions that run the larger size too (all: sdcz)
 * Exit 0 when every guard is intact and every result within rounding of OpenBLAS's. */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t frame_guard_call(void (*fn)(void), const uint64_t regs[6], const uint64_t xmm[2],
                          const uint64_t *stack, uint64_t count, uint64_t guard);

/* The Fortran entries with their real arguments only, as a C caller declares them. For c and z, T
 * is the complex type's part: arrays and complex scalars are (re, im) pairs of T, and herk's alpha
 * and beta and her2k's beta are real T. */
#define FORTRAN_LEVEL3(T, p)                                                                       \
  void p##gemm_(const char *, const char *, const blasint *, const blasint *, const blasint *,     \
                const T *, const T *, const blasint *, const T *, const blasint *, const T *, T *, \
                const blasint *);                                                                  \
  void p##syrk_(const char *, const char *, const blasint *, const blasint *, const T *,           \
                const T *, const blasint *, const T *, T *, const blasint *);                      \
  void p##syr2k_(const char *, const char *, const blasint *, const blasint *, const T *,          \
                 const T *, const blasint *, const T *, const blasint *, const T *, T *,           \
                 const blasint *);                                                                 \
  void p##symm_(const char *, const char *, const blasint *, const blasint *, const T *,           \
                const T *, const blasint *, const T *, const blasint *, const T *, T *,            \
                const blasint *);                                                                  \
  void p##trmm_(const char *, const char *, const char *, const char *, const blasint *,           \
                const blasint *, const T *, const T *, const blasint *, T *, const blasint *);     \
  void p##trsm_(const char *, const char *, const char *, const char *, const blasint *,           \
                const blasint *, const T *, const T *, const blasint *, T *, const blasint *);
#define FORTRAN_HERMITIAN(T, p)                                                           \
  void p##hemm_(const char *, const char *, const blasint *, const blasint *, const T *,  \
                const T *, const blasint *, const T *, const blasint *, const T *, T *,   \
                const blasint *);                                                         \
  void p##herk_(const char *, const char *, const blasint *, const blasint *, const T *,  \
                const T *, const blasint *, const T *, T *, const blasint *);             \
  void p##her2k_(const char *, const char *, const blasint *, const blasint *, const T *, \
                 const T *, const blasint *, const T *, const blasint *, const T *, T *,  \
                 const blasint *);
FORTRAN_LEVEL3(float, s)
FORTRAN_LEVEL3(double, d)
FORTRAN_LEVEL3(float, c)
FORTRAN_LEVEL3(double, z)
FORTRAN_HERMITIAN(float, c)
FORTRAN_HERMITIAN(double, z)

/* The precisions by their BLAS letters; c and z are complex, d and z double. */
enum Precision { S, D, C, Z, PRECISIONS };
static const char kLetters[PRECISIONS] = {'s', 'd', 'c', 'z'};
static int is_double(enum Precision p) { return p == D || p == Z; }
static int is_complex(enum Precision p) { return p == C || p == Z; }

/* The routines; those from HEMM on exist in c and z only. */
enum Routine { GEMM, SYRK, SYR2K, SYMM, TRMM, TRSM, HEMM, HERK, HER2K, ROUTINES };
static const char *const kNames[ROUTINES] = {"gemm", "syrk", "syr2k", "symm", "trmm",
                                             "trsm", "hemm", "herk",  "her2k"};
static int routines(enum Precision p) { return is_complex(p) ? ROUTINES : HEMM; }

/* The entries of one precision, in Fortran and CBLAS, as this program resolved them (s and d
 * have no hermitian ones: null). */
typedef void (*Entry)(void);
typedef struct {
  Entry fortran[ROUTINES], cblas[ROUTINES];
} Entries;

#define ENTRY(f) ((Entry)(f))
#define FORTRAN_ENTRIES(p)                                                              \
  ENTRY(p##gemm_), ENTRY(p##syrk_), ENTRY(p##syr2k_), ENTRY(p##symm_), ENTRY(p##trmm_), \
      ENTRY(p##trsm_)
#define CBLAS_ENTRIES(p)                                                                           \
  ENTRY(cblas_##p##gemm), ENTRY(cblas_##p##syrk), ENTRY(cblas_##p##syr2k), ENTRY(cblas_##p##symm), \
      ENTRY(cblas_##p##trmm), ENTRY(cblas_##p##trsm)
static const Entries kResolved[PRECISIONS] = {
    {{FORTRAN_ENTRIES(s)}, {CBLAS_ENTRIES(s)}},
    {{FORTRAN_ENTRIES(d)}, {CBLAS_ENTRIES(d)}},
    {{FORTRAN_ENTRIES(c), ENTRY(chemm_), ENTRY(cherk_), ENTRY(cher2k_)},
     {CBLAS_ENTRIES(c), ENTRY(cblas_chemm), ENTRY(cblas_cherk), ENTRY(cblas_cher2k)}},
    {{FORTRAN_ENTRIES(z), ENTRY(zhemm_), ENTRY(zherk_), ENTRY(zher2k_)},
     {CBLAS_ENTRIES(z), ENTRY(cblas_zhemm), ENTRY(cblas_zherk), ENTRY(cblas_zher2k)}},
};

/* OpenBLAS's own entries, found through a symbol only OpenBLAS exports. */
static Entries openblas_own(enum Precision p) {
  Dl_info info;
  void *lib = NULL;
  if (dladdr((void *)openblas_get_num_threads, &info) != 0)
    lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "cannot find OpenBLAS\n");
    exit(2);
  }
  Entries e = {{NULL}, {NULL}};
  for (int r = 0; r < routines(p); ++r) {
    char name[32];
    snprintf(name, sizeof name, "%c%s_", kLetters[p], kNames[r]);
    e.fortran[r] = (Entry)dlsym(lib, name);
    snprintf(name, sizeof name, "cblas_%c%s", kLetters[p], kNames[r]);
    e.cblas[r] = (Entry)dlsym(lib, name);
    if (e.fortran[r] == NULL || e.cblas[r] == NULL) {
      fprintf(stderr, "OpenBLAS lacks %s\n", name);
      exit(2);
    }
  }
  return e;
}

/* One call's arguments as the ABI passes them: integers and pointers in order (the first six in
 * registers, the rest on the stack), floating-point scalars in xmm0 and xmm1. */
typedef struct {
  uint64_t words[16], xmm[2];
  int count, scalars;
} Args;

static void word(Args *a, uint64_t w) { a->words[a->count++] = w; }
static void ptr(Args *a, const void *p) { word(a, (uint64_t)(uintptr_t)p); }
/* A 32-bit integer or enumeration, its upper half garbage (the ABI leaves it undefined). */
static void i32(Args *a, int v) { word(a, 0xdeadbeef00000000ull | (uint32_t)v); }

/* A scalar as the routine takes it, in the precision's type: a complex one (alpha and beta of c and
 * z, but herk's both and her2k's beta) as (re, im); a real one followed by a NaN where an
 * imaginary part would be, so that an entry that reads it as complex computes NaNs. */
typedef struct {
  int real;
  double d[2];
  float f[2];
} Scalar;

static Scalar value(int real, double re, double im) {
  Scalar s = {real, {re, real ? NAN : im}, {(float)re, real ? NAN : (float)im}};
  return s;
}
static const void *address(enum Precision p, const Scalar *s) {
  return is_double(p) ? (const void *)s->d : (const void *)s->f;
}

/* A scalar as CBLAS passes it: a real one by value (its float's upper half garbage), a complex
 * one by address. */
static void scalar(Args *a, enum Precision p, const Scalar *s) {
  if (!s->real) {
    ptr(a, address(p, s));
    return;
  }
  uint64_t bits = 0xfeedface00000000ull;
  if (is_double(p)) {
    memcpy(&bits, &s->d[0], sizeof s->d[0]);
  } else {
    uint32_t b32;
    memcpy(&b32, &s->f[0], sizeof b32);
    bits |= b32;
  }
  a->xmm[a->scalars++] = bits;
}

/* Calls `fn` with `a` and guards above its stack arguments; returns the guards changed. */
static int guarded(Entry fn, const Args *a) {
  uint64_t regs[6] = {0};
  for (int i = 0; i < 6 && i < a->count; ++i) regs[i] = a->words[i];
  const int stacked = a->count > 6 ? a->count - 6 : 0;
  return (int)frame_guard_call(fn, regs, a->xmm, a->words + 6, (uint64_t)stacked,
                               0x5a5a5a5a5a5a5a5aull);
}

/* A column-major matrix of any precision, `ld` at least its rows; a complex element is two
 * consecutive parts, real first. */
typedef struct {
  enum Precision prec;
  int rows, cols, ld;
  void *data;
} Matrix;

/* Its parts (real numbers) in storage, and one part. */
static size_t parts(const Matrix *m) {
  return (size_t)m->ld * (size_t)(m->cols > 0 ? m->cols : 1) * (is_complex(m->prec) ? 2u : 1u);
}
static double at(const Matrix *m, size_t i) {
  return is_double(m->prec) ? ((double *)m->data)[i] : (double)((float *)m->data)[i];
}
static void set(Matrix *m, size_t i, double v) {
  if (is_double(m->prec))
    ((double *)m->data)[i] = v;
  else
    ((float *)m->data)[i] = (float)v;
}

static unsigned long long g_seed = 88172645463325252ull;
static double draw(void) {
  g_seed ^= g_seed << 13, g_seed ^= g_seed >> 7, g_seed ^= g_seed << 17;
  return (double)(g_seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Random parts of order 1/rows (imaginary ones too, the diagonal's among them: hemm, herk and
 * her2k ignore those, and OpenBLAS's result from the same inputs is the reference either way),
 * a diagonal whose real part is about 1 (so that every triangle, unit or not, is well conditioned
 * for trsm), and a leading dimension 3 past the rows. */
static Matrix matrix(enum Precision p, int rows, int cols) {
  Matrix m = {p, rows, cols, rows + 3, NULL};
  const size_t n = parts(&m), width = is_complex(p) ? 2 : 1;
  m.data = calloc(n, is_double(p) ? sizeof(double) : sizeof(float));
  for (size_t i = 0; i < n; ++i) set(&m, i, draw() / (double)rows);
  for (int i = 0; i < rows && i < cols; ++i) {
    const size_t diagonal = (size_t)(i + i * m.ld) * width;
    set(&m, diagonal, 1.0 + at(&m, diagonal));
  }
  return m;
}
static Matrix copy(const Matrix *from) {
  Matrix m = *from;
  const size_t bytes = parts(&m) * (is_double(m.prec) ? sizeof(double) : sizeof(float));
  m.data = malloc(bytes);
  memcpy(m.data, from->data, bytes);
  return m;
}

/* Whether `got` is `want` within rounding: relative to the largest part, as the reference testers
 * judge (tandem's products may sum in another order than OpenBLAS's). The same bounds for complex:
 * each part of a complex result sums 2k real products where a real one sums k, about sqrt(2) to 2
 * times the rounding, and the bounds are two orders past what any precision shows (through the
 * hybrid split at 301 x 283 x 263, the worst part differed by 1.3e-6 and 2.1e-6 of the largest in s
 * and c, 2.0e-15 and 3.5e-15 in d and z). */
static int close_to(const Matrix *got, const Matrix *want) {
  double worst = 0, scale = 1;
  for (size_t i = 0; i < parts(want); ++i) {
    if (!isfinite(at(got, i)) || !isfinite(at(want, i))) return 0;
    worst = fmax(worst, fabs(at(got, i) - at(want, i)));
    scale = fmax(scale, fabs(at(want, i)));
  }
  return worst <= (is_double(want->prec) ? 1e-11 : 2e-4) * scale;
}

/* One case: the routine, its options and sizes (m, n, k as the routine uses them). */
typedef struct {
  enum Routine routine;
  char side, uplo, trans, diag, transb; /* transb: gemm's B */
  int m, n, k;
} Case;

/* The operands of a case: A, B, and the output (C, or B for trmm and trsm). */
typedef struct {
  Matrix a, b, out;
} Operands;

static Operands operands(enum Precision p, const Case *c) {
  Operands o;
  const int notrans = c->trans == 'N';
  const int order = c->side == 'L' ? c->m : c->n;
  switch (c->routine) {
    case GEMM:
      o.a = notrans ? matrix(p, c->m, c->k) : matrix(p, c->k, c->m);
      o.b = c->transb == 'N' ? matrix(p, c->k, c->n) : matrix(p, c->n, c->k);
      o.out = matrix(p, c->m, c->n);
      break;
    case SYRK:
    case SYR2K:
    case HERK:
    case HER2K:
      o.a = notrans ? matrix(p, c->n, c->k) : matrix(p, c->k, c->n);
      o.b = notrans ? matrix(p, c->n, c->k) : matrix(p, c->k, c->n);
      o.out = matrix(p, c->n, c->n);
      break;
    default:
      o.a = matrix(p, order, order);
      o.b = matrix(p, c->m, c->n);
      o.out = c->routine == SYMM || c->routine == HEMM ? matrix(p, c->m, c->n) : o.b;
      break;
  }
  return o;
}

/* The Fortran call's arguments; every one is a pointer, and `ints` keeps the integers alive. */
static Args fortran_args(enum Precision p, const Case *c, Operands *o, const Scalar *alpha,
                         const Scalar *beta, blasint ints[8]) {
  Args a = {{0}, {0}, 0, 0};
  const void *pa = address(p, alpha), *pb = address(p, beta);
  ints[0] = c->m, ints[1] = c->n, ints[2] = c->k;
  ints[3] = o->a.ld, ints[4] = o->b.ld, ints[5] = o->out.ld;
  switch (c->routine) {
    case GEMM:
      ptr(&a, &c->trans), ptr(&a, &c->transb), ptr(&a, &ints[0]), ptr(&a, &ints[1]);
      ptr(&a, &ints[2]), ptr(&a, pa), ptr(&a, o->a.data), ptr(&a, &ints[3]);
      ptr(&a, o->b.data), ptr(&a, &ints[4]), ptr(&a, pb), ptr(&a, o->out.data), ptr(&a, &ints[5]);
      break;
    case SYRK:
    case SYR2K:
    case HERK:
    case HER2K:
      ptr(&a, &c->uplo), ptr(&a, &c->trans), ptr(&a, &ints[1]), ptr(&a, &ints[2]), ptr(&a, pa);
      ptr(&a, o->a.data), ptr(&a, &ints[3]);
      if (c->routine == SYR2K || c->routine == HER2K) ptr(&a, o->b.data), ptr(&a, &ints[4]);
      ptr(&a, pb), ptr(&a, o->out.data), ptr(&a, &ints[5]);
      break;
    case SYMM:
    case HEMM:
      ptr(&a, &c->side), ptr(&a, &c->uplo), ptr(&a, &ints[0]), ptr(&a, &ints[1]), ptr(&a, pa);
      ptr(&a, o->a.data), ptr(&a, &ints[3]), ptr(&a, o->b.data), ptr(&a, &ints[4]);
      ptr(&a, pb), ptr(&a, o->out.data), ptr(&a, &ints[5]);
      break;
    default:
      ptr(&a, &c->side), ptr(&a, &c->uplo), ptr(&a, &c->trans), ptr(&a, &c->diag);
      ptr(&a, &ints[0]), ptr(&a, &ints[1]), ptr(&a, pa), ptr(&a, o->a.data), ptr(&a, &ints[3]);
      ptr(&a, o->out.data), ptr(&a, &ints[5]);
      break;
  }
  return a;
}

static int cblas_side(char c) { return c == 'L' ? CblasLeft : CblasRight; }
static int cblas_uplo(char c) { return c == 'U' ? CblasUpper : CblasLower; }
static int cblas_trans(char c) {
  return c == 'N' ? CblasNoTrans : c == 'T' ? CblasTrans : CblasConjTrans;
}
static int cblas_diag(char c) { return c == 'U' ? CblasUnit : CblasNonUnit; }

/* The CBLAS call's arguments, column-major; `scalar` passes alpha and beta as cblas.h declares
 * them (pointers in c and z, but herk's alpha and beta and her2k's beta, which are real). */
static Args cblas_args(enum Precision p, const Case *c, Operands *o, const Scalar *alpha,
                       const Scalar *beta) {
  Args a = {{0}, {0}, 0, 0};
  i32(&a, CblasColMajor);
  switch (c->routine) {
    case GEMM:
      i32(&a, cblas_trans(c->trans)), i32(&a, cblas_trans(c->transb)), i32(&a, c->m);
      i32(&a, c->n), i32(&a, c->k), scalar(&a, p, alpha), ptr(&a, o->a.data), i32(&a, o->a.ld);
      ptr(&a, o->b.data), i32(&a, o->b.ld), scalar(&a, p, beta), ptr(&a, o->out.data);
      i32(&a, o->out.ld);
      break;
    case SYRK:
    case SYR2K:
    case HERK:
    case HER2K:
      i32(&a, cblas_uplo(c->uplo)), i32(&a, cblas_trans(c->trans)), i32(&a, c->n), i32(&a, c->k);
      scalar(&a, p, alpha), ptr(&a, o->a.data), i32(&a, o->a.ld);
      if (c->routine == SYR2K || c->routine == HER2K) ptr(&a, o->b.data), i32(&a, o->b.ld);
      scalar(&a, p, beta), ptr(&a, o->out.data), i32(&a, o->out.ld);
      break;
    case SYMM:
    case HEMM:
      i32(&a, cblas_side(c->side)), i32(&a, cblas_uplo(c->uplo)), i32(&a, c->m), i32(&a, c->n);
      scalar(&a, p, alpha), ptr(&a, o->a.data), i32(&a, o->a.ld), ptr(&a, o->b.data);
      i32(&a, o->b.ld), scalar(&a, p, beta), ptr(&a, o->out.data), i32(&a, o->out.ld);
      break;
    default:
      i32(&a, cblas_side(c->side)), i32(&a, cblas_uplo(c->uplo)), i32(&a, cblas_trans(c->trans));
      i32(&a, cblas_diag(c->diag)), i32(&a, c->m), i32(&a, c->n), scalar(&a, p, alpha);
      ptr(&a, o->a.data), i32(&a, o->a.ld), ptr(&a, o->out.data), i32(&a, o->out.ld);
      break;
  }
  return a;
}

/* The Fortran entries called as an ordinary C program calls them, through their prototypes: the
 * cases of every precision, and those of c and z only. */
#define CALL_FORTRAN(T, p)                                                                        \
  case GEMM:                                                                                      \
    p##gemm_(&c->trans, &c->transb, &i[0], &i[1], &i[2], (const T *)pa, o->a.data, &i[3],         \
             o->b.data, &i[4], (const T *)pb, o->out.data, &i[5]);                                \
    break;                                                                                        \
  case SYRK:                                                                                      \
    p##syrk_(&c->uplo, &c->trans, &i[1], &i[2], (const T *)pa, o->a.data, &i[3], (const T *)pb,   \
             o->out.data, &i[5]);                                                                 \
    break;                                                                                        \
  case SYR2K:                                                                                     \
    p##syr2k_(&c->uplo, &c->trans, &i[1], &i[2], (const T *)pa, o->a.data, &i[3], o->b.data,      \
              &i[4], (const T *)pb, o->out.data, &i[5]);                                          \
    break;                                                                                        \
  case SYMM:                                                                                      \
    p##symm_(&c->side, &c->uplo, &i[0], &i[1], (const T *)pa, o->a.data, &i[3], o->b.data, &i[4], \
             (const T *)pb, o->out.data, &i[5]);                                                  \
    break;                                                                                        \
  case TRMM:                                                                                      \
    p##trmm_(&c->side, &c->uplo, &c->trans, &c->diag, &i[0], &i[1], (const T *)pa, o->a.data,     \
             &i[3], o->out.data, &i[5]);                                                          \
    break;                                                                                        \
  default:                                                                                        \
    p##trsm_(&c->side, &c->uplo, &c->trans, &c->diag, &i[0], &i[1], (const T *)pa, o->a.data,     \
             &i[3], o->out.data, &i[5]);                                                          \
    break;
#define CALL_HERMITIAN(T, p)                                                                      \
  case HEMM:                                                                                      \
    p##hemm_(&c->side, &c->uplo, &i[0], &i[1], (const T *)pa, o->a.data, &i[3], o->b.data, &i[4], \
             (const T *)pb, o->out.data, &i[5]);                                                  \
    break;                                                                                        \
  case HERK:                                                                                      \
    p##herk_(&c->uplo, &c->trans, &i[1], &i[2], (const T *)pa, o->a.data, &i[3], (const T *)pb,   \
             o->out.data, &i[5]);                                                                 \
    break;                                                                                        \
  case HER2K:                                                                                     \
    p##her2k_(&c->uplo, &c->trans, &i[1], &i[2], (const T *)pa, o->a.data, &i[3], o->b.data,      \
              &i[4], (const T *)pb, o->out.data, &i[5]);                                          \
    break;

__attribute__((noinline)) static void ordinary_call(enum Precision p, const Case *c, Operands *o,
                                                    const blasint *i, const void *pa,
                                                    const void *pb) {
  switch (p) {
    case S:
      switch (c->routine) { CALL_FORTRAN(float, s) }
      break;
    case D:
      switch (c->routine) { CALL_FORTRAN(double, d) }
      break;
    case C:
      switch (c->routine) { CALL_FORTRAN(float, c) CALL_HERMITIAN(float, c) }
      break;
    default:
      switch (c->routine) { CALL_FORTRAN(double, z) CALL_HERMITIAN(double, z) }
      break;
  }
}

static int g_failures = 0, g_calls = 0;

static void fail(enum Precision p, const char *how, const Case *c, const char *what) {
  ++g_failures;
  printf("FAIL %s %c%s side %c uplo %c trans %c diag %c transb %c m %d n %d k %d: %s\n", how,
         kLetters[p], kNames[c->routine], c->side, c->uplo, c->trans, c->diag, c->transb, c->m,
         c->n, c->k, what);
}

/* One case through one interface (`cblas` or Fortran), guarded and, for Fortran, ordinary. Alpha
 * and beta have nonzero imaginary parts where they are complex. */
static void run_case(enum Precision p, int cblas, const Case *c, const Entries *mine,
                     const Entries *own) {
  const int real_alpha = !is_complex(p) || c->routine == HERK;
  const int real_beta = real_alpha || c->routine == HER2K;
  Operands theirs = operands(p, c);
  Operands ours = theirs, plain = theirs;
  ours.out = copy(&theirs.out), plain.out = copy(&theirs.out);
  if (c->routine == TRMM || c->routine == TRSM) ours.b = ours.out, plain.b = plain.out;
  blasint ints[3][8];
  Scalar alpha[3], beta[3]; /* each call's own */
  for (int j = 0; j < 3; ++j)
    alpha[j] = value(real_alpha, 0.75, -0.375), beta[j] = value(real_beta, -0.5, 0.625);
  const Args want = cblas ? cblas_args(p, c, &theirs, &alpha[0], &beta[0])
                          : fortran_args(p, c, &theirs, &alpha[0], &beta[0], ints[0]);
  const Args got = cblas ? cblas_args(p, c, &ours, &alpha[1], &beta[1])
                         : fortran_args(p, c, &ours, &alpha[1], &beta[1], ints[1]);
  const char *how = cblas ? "cblas" : "fortran";
  const Entry own_entry = cblas ? own->cblas[c->routine] : own->fortran[c->routine];
  const Entry entry = cblas ? mine->cblas[c->routine] : mine->fortran[c->routine];
  if (guarded(own_entry, &want) != 0) fail(p, how, c, "OpenBLAS itself changed a guard");
  const int changed = guarded(entry, &got);
  ++g_calls;
  if (changed != 0) {
    char what[96];
    snprintf(what, sizeof what, "%d of 8 guards above the stack arguments changed", changed);
    fail(p, how, c, what);
  }
  if (!close_to(&ours.out, &theirs.out)) fail(p, how, c, "result differs from OpenBLAS's");
  if (!cblas) {
    fortran_args(p, c, &plain, &alpha[2], &beta[2], ints[2]);
    ordinary_call(p, c, &plain, ints[2], address(p, &alpha[2]), address(p, &beta[2]));
    ++g_calls;
    if (!close_to(&plain.out, &theirs.out))
      fail(p, "fortran (ordinary call)", c, "result differs from OpenBLAS's");
  }
  free(theirs.a.data), free(theirs.out.data), free(ours.out.data), free(plain.out.data);
  if (c->routine != TRMM && c->routine != TRSM) free(theirs.b.data);
}

/* Every option of a routine at one size: each side, uplo, transpose and diag it takes, gemm's
 * transb in diag's place. The transposes: N and T in s and d; in c and z, N, T and C (the conjugate
 * transpose) for gemm's A and B, trmm and trsm, N and T for syrk and syr2k, N and C for herk and
 * her2k. */
static void run_routine(enum Precision p, enum Routine r, int m, int n, int k) {
  const Entries own = openblas_own(p);
  const int sided = r == SYMM || r == HEMM || r == TRMM || r == TRSM;
  const int triangular = r == TRMM || r == TRSM;
  const char *const sides = sided ? "LR" : "L", *const uplos = r == GEMM ? "U" : "UL";
  const char *const transes = r == SYMM || r == HEMM                       ? "N"
                              : r == HERK || r == HER2K                    ? "NC"
                              : is_complex(p) && (r == GEMM || triangular) ? "NTC"
                                                                           : "NT";
  const char *const lasts = r == GEMM ? transes : triangular ? "NU" : "N";
  for (const char *s = sides; *s != '\0'; ++s)
    for (const char *u = uplos; *u != '\0'; ++u)
      for (const char *t = transes; *t != '\0'; ++t)
        for (const char *l = lasts; *l != '\0'; ++l) {
          const Case c = {r, *s, *u, *t, r == GEMM ? 'N' : *l, r == GEMM ? *l : 'N', m, n, k};
          for (int cblas = 0; cblas < 2; ++cblas) run_case(p, cblas, &c, &kResolved[p], &own);
        }
}

static void where(const char *name, void *entry) {
  Dl_info info;
  printf("%s: %s\n", name, dladdr(entry, &info) != 0 ? info.dli_fname : "?");
}

int main(int argc, char **argv) {
  /* The precisions that run the larger size too: every one unless the argument lists fewer. */
  const char *const large = argc > 1 ? argv[1] : "sdcz";
  where("dtrmm_", (void *)dtrmm_);
  where("cblas_sgemm", (void *)cblas_sgemm);
  where("zher2k_", (void *)zher2k_);
  where("cblas_cherk", (void *)cblas_cherk);
  /* Sizes that go straight to OpenBLAS, and awkward ones past the drop-in's threshold (256^3
   * real multiply-adds, 4 m n k for a complex product), whose products go through tandem's path
   * where the routing sends them there. */
  const int sizes[][3] = {{7, 5, 3}, {301, 283, 263}};
  for (int p = 0; p < PRECISIONS; ++p)
    for (int r = 0; r < routines((enum Precision)p); ++r)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        if (s == 0 || strchr(large, kLetters[p]) != NULL)
          run_routine((enum Precision)p, (enum Routine)r, sizes[s][0], sizes[s][1], sizes[s][2]);
  printf("%d calls, %d failures\n", g_calls, g_failures);
  return g_failures == 0 ? 0 : 1;
}
