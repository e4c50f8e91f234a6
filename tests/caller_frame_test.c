/* Every level-3 entry of the drop-in leaves its caller's frame alone and computes right when a C
 * program calls it as C programs do (issue 39): the Fortran entries through prototypes without
 * gfortran's hidden string lengths (scipy's wrappers, many C programs and older LAPACK builds call
 * them so), the CBLAS entries through cblas.h's. Each call runs twice:
 *  - through frame_guard_call (tests/frame_guard_x86_64.S), which places guard values right above
 *    the stack arguments the caller passed, where the hidden lengths would be, and counts those the
 *    entry changed; OpenBLAS's own entry, called the same way, gives the reference result;
 *  - through an ordinary call compiled at -O2, as a program makes it.
 * Run plain (the entries are OpenBLAS's: the harness's own check) and under
 * LD_PRELOAD=libtandem_blas.so (tests/caller_frame_test.sh), at sizes that go straight to OpenBLAS
 * and sizes that go through tandem's own path, with every side, uplo, transpose and diag.
 *
 *   caller_frame_test        prints where the entries resolved, then one line per failure
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

/* The Fortran entries with their real arguments only, as a C caller declares them. */
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
FORTRAN_LEVEL3(float, s)
FORTRAN_LEVEL3(double, d)

enum Routine { GEMM, SYRK, SYR2K, SYMM, TRMM, TRSM, ROUTINES };
static const char *const kNames[ROUTINES] = {"gemm", "syrk", "syr2k", "symm", "trmm", "trsm"};

/* The entries of one precision, in Fortran and CBLAS, as this program resolved them. */
typedef void (*Entry)(void);
typedef struct {
  Entry fortran[ROUTINES], cblas[ROUTINES];
} Entries;

static Entries resolved(int dbl) {
  Entries e;
  if (dbl) {
    Entry f[ROUTINES] = {(Entry)dgemm_, (Entry)dsyrk_, (Entry)dsyr2k_,
                         (Entry)dsymm_, (Entry)dtrmm_, (Entry)dtrsm_};
    Entry c[ROUTINES] = {(Entry)cblas_dgemm, (Entry)cblas_dsyrk, (Entry)cblas_dsyr2k,
                         (Entry)cblas_dsymm, (Entry)cblas_dtrmm, (Entry)cblas_dtrsm};
    memcpy(e.fortran, f, sizeof f), memcpy(e.cblas, c, sizeof c);
  } else {
    Entry f[ROUTINES] = {(Entry)sgemm_, (Entry)ssyrk_, (Entry)ssyr2k_,
                         (Entry)ssymm_, (Entry)strmm_, (Entry)strsm_};
    Entry c[ROUTINES] = {(Entry)cblas_sgemm, (Entry)cblas_ssyrk, (Entry)cblas_ssyr2k,
                         (Entry)cblas_ssymm, (Entry)cblas_strmm, (Entry)cblas_strsm};
    memcpy(e.fortran, f, sizeof f), memcpy(e.cblas, c, sizeof c);
  }
  return e;
}

/* OpenBLAS's own entries, found through a symbol only OpenBLAS exports. */
static Entries openblas_own(int dbl) {
  Dl_info info;
  void *lib = NULL;
  if (dladdr((void *)openblas_get_num_threads, &info) != 0)
    lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "cannot find OpenBLAS\n");
    exit(2);
  }
  Entries e;
  const char p = dbl ? 'd' : 's';
  for (int r = 0; r < ROUTINES; ++r) {
    char name[32];
    snprintf(name, sizeof name, "%c%s_", p, kNames[r]);
    e.fortran[r] = (Entry)dlsym(lib, name);
    snprintf(name, sizeof name, "cblas_%c%s", p, kNames[r]);
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
static void scalar(Args *a, int dbl, double v) {
  uint64_t bits = 0xfeedface00000000ull;
  if (dbl) {
    memcpy(&bits, &v, sizeof v);
  } else {
    const float f = (float)v;
    uint32_t b32;
    memcpy(&b32, &f, sizeof f);
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

/* A column-major matrix of either precision, `ld` at least its rows. */
typedef struct {
  int dbl, rows, cols, ld;
  void *data;
} Matrix;

static double at(const Matrix *m, int i) {
  return m->dbl ? ((double *)m->data)[i] : (double)((float *)m->data)[i];
}
static void set(Matrix *m, int i, double v) {
  if (m->dbl)
    ((double *)m->data)[i] = v;
  else
    ((float *)m->data)[i] = (float)v;
}

static unsigned long long g_seed = 88172645463325252ull;
static double draw(void) {
  g_seed ^= g_seed << 13, g_seed ^= g_seed >> 7, g_seed ^= g_seed << 17;
  return (double)(g_seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Random entries of order 1/rows and a diagonal of about 1 (so that every triangle, unit or not,
 * is well conditioned for trsm), and a leading dimension 3 past the rows. */
static Matrix matrix(int dbl, int rows, int cols) {
  Matrix m = {dbl, rows, cols, rows + 3, NULL};
  const size_t n = (size_t)m.ld * (size_t)(cols > 0 ? cols : 1);
  m.data = calloc(n, dbl ? sizeof(double) : sizeof(float));
  for (size_t i = 0; i < n; ++i) set(&m, (int)i, draw() / (double)rows);
  for (int i = 0; i < rows && i < cols; ++i) set(&m, i + i * m.ld, 1.0 + at(&m, i + i * m.ld));
  return m;
}
static Matrix copy(const Matrix *from) {
  Matrix m = *from;
  const size_t bytes =
      (size_t)m.ld * (size_t)(m.cols > 0 ? m.cols : 1) * (m.dbl ? sizeof(double) : sizeof(float));
  m.data = malloc(bytes);
  memcpy(m.data, from->data, bytes);
  return m;
}

/* Whether `got` is `want` within rounding: relative to the largest entry, as the reference
 * testers judge (tandem's products may sum in another order than OpenBLAS's). */
static int close_to(const Matrix *got, const Matrix *want) {
  double worst = 0, scale = 1;
  for (int i = 0; i < want->ld * want->cols; ++i) {
    if (!isfinite(at(got, i)) || !isfinite(at(want, i))) return 0;
    worst = fmax(worst, fabs(at(got, i) - at(want, i)));
    scale = fmax(scale, fabs(at(want, i)));
  }
  return worst <= (want->dbl ? 1e-11 : 2e-4) * scale;
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

static Operands operands(int dbl, const Case *c) {
  Operands o;
  const int notrans = c->trans == 'N';
  const int order = c->side == 'L' ? c->m : c->n;
  switch (c->routine) {
    case GEMM:
      o.a = notrans ? matrix(dbl, c->m, c->k) : matrix(dbl, c->k, c->m);
      o.b = c->transb == 'N' ? matrix(dbl, c->k, c->n) : matrix(dbl, c->n, c->k);
      o.out = matrix(dbl, c->m, c->n);
      break;
    case SYRK:
    case SYR2K:
      o.a = notrans ? matrix(dbl, c->n, c->k) : matrix(dbl, c->k, c->n);
      o.b = notrans ? matrix(dbl, c->n, c->k) : matrix(dbl, c->k, c->n);
      o.out = matrix(dbl, c->n, c->n);
      break;
    default:
      o.a = matrix(dbl, order, order);
      o.b = matrix(dbl, c->m, c->n);
      o.out = c->routine == SYMM ? matrix(dbl, c->m, c->n) : o.b;
      break;
  }
  return o;
}

/* The Fortran call's arguments; every one is a pointer, and `ints` keeps the integers alive. */
static Args fortran_args(int dbl, const Case *c, Operands *o, const double *alpha,
                         const double *beta, blasint ints[8], float sf[2]) {
  Args a = {{0}, {0}, 0, 0};
  sf[0] = (float)*alpha, sf[1] = (float)*beta;
  const void *pa = dbl ? (const void *)alpha : (const void *)&sf[0];
  const void *pb = dbl ? (const void *)beta : (const void *)&sf[1];
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
      ptr(&a, &c->uplo), ptr(&a, &c->trans), ptr(&a, &ints[1]), ptr(&a, &ints[2]), ptr(&a, pa);
      ptr(&a, o->a.data), ptr(&a, &ints[3]);
      if (c->routine == SYR2K) ptr(&a, o->b.data), ptr(&a, &ints[4]);
      ptr(&a, pb), ptr(&a, o->out.data), ptr(&a, &ints[5]);
      break;
    case SYMM:
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
static int cblas_trans(char c) { return c == 'N' ? CblasNoTrans : CblasTrans; }
static int cblas_diag(char c) { return c == 'U' ? CblasUnit : CblasNonUnit; }

/* The CBLAS call's arguments, column-major. */
static Args cblas_args(int dbl, const Case *c, Operands *o, double alpha, double beta) {
  Args a = {{0}, {0}, 0, 0};
  i32(&a, CblasColMajor);
  switch (c->routine) {
    case GEMM:
      i32(&a, cblas_trans(c->trans)), i32(&a, cblas_trans(c->transb)), i32(&a, c->m);
      i32(&a, c->n), i32(&a, c->k), scalar(&a, dbl, alpha), ptr(&a, o->a.data), i32(&a, o->a.ld);
      ptr(&a, o->b.data), i32(&a, o->b.ld), scalar(&a, dbl, beta), ptr(&a, o->out.data);
      i32(&a, o->out.ld);
      break;
    case SYRK:
    case SYR2K:
      i32(&a, cblas_uplo(c->uplo)), i32(&a, cblas_trans(c->trans)), i32(&a, c->n), i32(&a, c->k);
      scalar(&a, dbl, alpha), ptr(&a, o->a.data), i32(&a, o->a.ld);
      if (c->routine == SYR2K) ptr(&a, o->b.data), i32(&a, o->b.ld);
      scalar(&a, dbl, beta), ptr(&a, o->out.data), i32(&a, o->out.ld);
      break;
    case SYMM:
      i32(&a, cblas_side(c->side)), i32(&a, cblas_uplo(c->uplo)), i32(&a, c->m), i32(&a, c->n);
      scalar(&a, dbl, alpha), ptr(&a, o->a.data), i32(&a, o->a.ld), ptr(&a, o->b.data);
      i32(&a, o->b.ld), scalar(&a, dbl, beta), ptr(&a, o->out.data), i32(&a, o->out.ld);
      break;
    default:
      i32(&a, cblas_side(c->side)), i32(&a, cblas_uplo(c->uplo)), i32(&a, cblas_trans(c->trans));
      i32(&a, cblas_diag(c->diag)), i32(&a, c->m), i32(&a, c->n), scalar(&a, dbl, alpha);
      ptr(&a, o->a.data), i32(&a, o->a.ld), ptr(&a, o->out.data), i32(&a, o->out.ld);
      break;
  }
  return a;
}

/* The Fortran entries called as an ordinary C program calls them, through their prototypes. */
#define CALL_FORTRAN(T, p)                                                                        \
  switch (c->routine) {                                                                           \
    case GEMM:                                                                                    \
      p##gemm_(&c->trans, &c->transb, &i[0], &i[1], &i[2], (const T *)pa, o->a.data, &i[3],       \
               o->b.data, &i[4], (const T *)pb, o->out.data, &i[5]);                              \
      break;                                                                                      \
    case SYRK:                                                                                    \
      p##syrk_(&c->uplo, &c->trans, &i[1], &i[2], (const T *)pa, o->a.data, &i[3], (const T *)pb, \
               o->out.data, &i[5]);                                                               \
      break;                                                                                      \
    case SYR2K:                                                                                   \
      p##syr2k_(&c->uplo, &c->trans, &i[1], &i[2], (const T *)pa, o->a.data, &i[3], o->b.data,    \
                &i[4], (const T *)pb, o->out.data, &i[5]);                                        \
      break;                                                                                      \
    case SYMM:                                                                                    \
      p##symm_(&c->side, &c->uplo, &i[0], &i[1], (const T *)pa, o->a.data, &i[3], o->b.data,      \
               &i[4], (const T *)pb, o->out.data, &i[5]);                                         \
      break;                                                                                      \
    case TRMM:                                                                                    \
      p##trmm_(&c->side, &c->uplo, &c->trans, &c->diag, &i[0], &i[1], (const T *)pa, o->a.data,   \
               &i[3], o->out.data, &i[5]);                                                        \
      break;                                                                                      \
    default:                                                                                      \
      p##trsm_(&c->side, &c->uplo, &c->trans, &c->diag, &i[0], &i[1], (const T *)pa, o->a.data,   \
               &i[3], o->out.data, &i[5]);                                                        \
      break;                                                                                      \
  }

__attribute__((noinline)) static void ordinary_call(int dbl, const Case *c, Operands *o,
                                                    const blasint *i, const void *pa,
                                                    const void *pb) {
  if (dbl) {
    CALL_FORTRAN(double, d)
  } else {
    CALL_FORTRAN(float, s)
  }
}

static int g_failures = 0, g_calls = 0;

static void fail(int dbl, const char *how, const Case *c, const char *what) {
  ++g_failures;
  printf("FAIL %s %c%s side %c uplo %c trans %c diag %c transb %c m %d n %d k %d: %s\n", how,
         dbl ? 'd' : 's', kNames[c->routine], c->side, c->uplo, c->trans, c->diag, c->transb, c->m,
         c->n, c->k, what);
}

/* One case through one interface (`cblas` or Fortran), guarded and, for Fortran, ordinary. */
static void run_case(int dbl, int cblas, const Case *c, const Entries *mine, const Entries *own) {
  const double alpha = 0.75, beta = -0.5;
  Operands theirs = operands(dbl, c);
  Operands ours = theirs, plain = theirs;
  ours.out = copy(&theirs.out), plain.out = copy(&theirs.out);
  if (c->routine == TRMM || c->routine == TRSM) ours.b = ours.out, plain.b = plain.out;
  blasint ints[3][8];
  float sf[3][2];
  const Args want = cblas ? cblas_args(dbl, c, &theirs, alpha, beta)
                          : fortran_args(dbl, c, &theirs, &alpha, &beta, ints[0], sf[0]);
  const Args got = cblas ? cblas_args(dbl, c, &ours, alpha, beta)
                         : fortran_args(dbl, c, &ours, &alpha, &beta, ints[1], sf[1]);
  const char *how = cblas ? "cblas" : "fortran";
  const Entry own_entry = cblas ? own->cblas[c->routine] : own->fortran[c->routine];
  const Entry entry = cblas ? mine->cblas[c->routine] : mine->fortran[c->routine];
  if (guarded(own_entry, &want) != 0) fail(dbl, how, c, "OpenBLAS itself changed a guard");
  const int changed = guarded(entry, &got);
  ++g_calls;
  if (changed != 0) {
    char what[96];
    snprintf(what, sizeof what, "%d of 8 guards above the stack arguments changed", changed);
    fail(dbl, how, c, what);
  }
  if (!close_to(&ours.out, &theirs.out)) fail(dbl, how, c, "result differs from OpenBLAS's");
  if (!cblas) {
    fortran_args(dbl, c, &plain, &alpha, &beta, ints[2], sf[2]);
    ordinary_call(dbl, c, &plain, ints[2], dbl ? (const void *)&alpha : (const void *)&sf[2][0],
                  dbl ? (const void *)&beta : (const void *)&sf[2][1]);
    ++g_calls;
    if (!close_to(&plain.out, &theirs.out))
      fail(dbl, "fortran (ordinary call)", c, "result differs from OpenBLAS's");
  }
  free(theirs.a.data), free(theirs.out.data), free(ours.out.data), free(plain.out.data);
  if (c->routine != TRMM && c->routine != TRSM) free(theirs.b.data);
}

/* Every option of a routine at one size. */
static void run_routine(int dbl, enum Routine r, int m, int n, int k) {
  const Entries mine = resolved(dbl), own = openblas_own(dbl);
  const char sides[] = "LR", uplos[] = "UL", transes[] = "NT", diags[] = "NU";
  for (int s = 0; s < 2; ++s)
    for (int u = 0; u < 2; ++u)
      for (int t = 0; t < 2; ++t)
        for (int d = 0; d < 2; ++d) {
          /* Each routine's own options: gemm's transb takes diag's loop. */
          if ((r == GEMM || r == SYRK || r == SYR2K) && s == 1) continue;
          if ((r == GEMM) && u == 1) continue;
          if ((r == SYRK || r == SYR2K) && d == 1) continue;
          if (r == SYMM && (t == 1 || d == 1)) continue;
          const Case c = {r, sides[s], uplos[u], transes[t], diags[d], transes[d], m, n, k};
          for (int cblas = 0; cblas < 2; ++cblas) run_case(dbl, cblas, &c, &mine, &own);
        }
}

static void where(const char *name, void *entry) {
  Dl_info info;
  printf("%s: %s\n", name, dladdr(entry, &info) != 0 ? info.dli_fname : "?");
}

int main(void) {
  where("dtrmm_", (void *)dtrmm_);
  where("cblas_sgemm", (void *)cblas_sgemm);
  /* Sizes that go straight to OpenBLAS, and awkward ones past the drop-in's threshold (256^3),
   * whose products go through tandem's path where the routing sends them there. */
  const int sizes[][3] = {{7, 5, 3}, {301, 283, 263}};
  for (int dbl = 0; dbl < 2; ++dbl)
    for (int r = 0; r < ROUTINES; ++r)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        run_routine(dbl, (enum Routine)r, sizes[s][0], sizes[s][1], sizes[s][2]);
  printf("%d calls, %d failures\n", g_calls, g_failures);
  return g_failures == 0 ? 0 : 1;
}
