/* The drop-in's level-3 entries on x86-64 (System V ABI), GEMM first, then syrk, syr2k, symm, trmm
 * and trsm, and for the complex precisions hemm, herk and her2k: each applies the straight path's
 * rule (src/blas3/dropin/straight.hpp) in scratch registers (rax, r10, r11) and jumps to OpenBLAS's
 * own entry with the caller's registers and stack as they came, or to the C++ entry (tandem_rest_*,
 * src/blas3/dropin/gemm_entries.cpp and level3_entries.cpp), which handles every other call.
 * Nothing here writes memory or the stack. tests/straight_test.cpp and
 * tests/straight_level3_test.cpp hold these entries to the C++ rule.
 *
 * A macro's `p` is the precision's letter (s, d, c, z): it picks how a scalar is tested and how
 * much work a product is (4 real multiply-adds for a complex one). Where cblas.h passes a complex
 * scalar by address, the scalar is one more integer argument and every argument after it moves
 * one slot: the CBLAS macros take where the scalars come (`by_address`: 0 in XMM registers, 1 by
 * address) and place the stack arguments by it. */
#include <cet.h>

#include "blas3/dropin/straight.hpp"

#if !defined(__x86_64__) || defined(__ILP32__) || !defined(__ELF__)
#error "the straight entries are for x86-64 ELF (LP64) only; CMake builds the C++ entries elsewhere"
#endif

        .text

/* A call with work at most the published bound (0 until published, so every call goes on):
 * m, n, k not negative (their OR's sign), then the work (m * n * k, times 4 for a complex p) less 1
 * as an unsigned 64-bit integer below `most` (a size of 0 makes it the largest; an overflow goes
 * on: the bound is below 2^63). m_, n_, k_ are where the three 32-bit sizes are (registers or
 * memory). Overwrites rax and r10. */
.macro  product_at_most m_, n_, k_, p, other
        movl    \m_, %eax
        orl     \n_, %eax
        orl     \k_, %eax
        js      \other
        movl    \m_, %eax
        movl    \n_, %r10d
        imulq   %r10, %rax
        movl    \k_, %r10d
        imulq   %r10, %rax
        jo      \other
.ifc \p,c
        imulq   $4, %rax, %rax
        jo      \other
.endif
.ifc \p,z
        imulq   $4, %rax, %rax
        jo      \other
.endif
        decq    %rax
        cmpq    tandem_straight+TANDEM_STRAIGHT_MOST(%rip), %rax
        jae     \other
.endm

/* A scalar's bits, loaded into eax or rax and doubled (the sign shifted out), are not all 0: the
 * scalar is not 0 (NaN is not 0; a complex one is not 0 when either part is not). Integer
 * instructions only: an SSE instruction that writes an XMM register can wait on the upper halves
 * a caller's AVX code left. scalar_not_zero reads the scalar of precision p at (reg);
 * value_not_zero a real one in the low lane of an XMM register. Overwrite rax. */
.macro  bits_not_zero load, from, bits, other
        \load   \from, \bits
        add     \bits, \bits
        jz      \other
.endm
.macro  scalar_not_zero p, reg, other
.ifc \p,s
        bits_not_zero movl, (\reg), %eax, \other
.endif
.ifc \p,d
        bits_not_zero movq, (\reg), %rax, \other
.endif
.ifc \p,c
        parts_not_zero movl, (\reg), 4(\reg), %eax, \other
.endif
.ifc \p,z
        parts_not_zero movq, (\reg), 8(\reg), %rax, \other
.endif
.endm
/* A CBLAS entry's alpha (precision p) is not 0: by address, its address in the stack slot at
 * `slot` (loaded into reg), or in xmm0. */
.macro  cblas_alpha_not_zero p, by_address, slot, reg, other
.if \by_address
        movq    \slot(%rsp), \reg
        scalar_not_zero \p, \reg, \other
.else
        value_not_zero \p, %xmm0, \other
.endif
.endm
/* A complex scalar (its parts at re and im) is not 0 when either part is not. */
.macro  parts_not_zero load, re, im, bits, other
        \load   \re, \bits
        add     \bits, \bits
        jnz     1f
        bits_not_zero \load, \im, \bits, \other
1:
.endm
.macro  value_not_zero p, xmm, other
.ifc \p,s
        bits_not_zero movd, \xmm, %eax, \other
.endif
.ifc \p,d
        bits_not_zero movq, \xmm, %rax, \other
.endif
.endm

/* The end of every GEMM entry: A (a_at(%rsp)), B (b_at(%rsp)) and C (c_at(%rsp)) are not NULL,
 * then the jump to OpenBLAS's entry; label 9 (every failed check) jumps to the C++ entry. */
.macro  operands_then_jump a_at, b_at, c_at, own, rest
        cmpq    $0, \a_at(%rsp)
        je      9f
        cmpq    $0, \b_at(%rsp)
        je      9f
        cmpq    $0, \c_at(%rsp)
        je      9f
        jmp     *tandem_straight+\own(%rip)
9:
        jmp     \rest
.endm

/* Fortran: transa rdi, transb rsi, m rdx, n rcx, k r8, alpha r9 (all by reference), then on the
 * stack a, lda, b, ldb, beta, c, ldc (gfortran's hidden lengths above them, where a caller passed
 * them, are never read). Column-major: lda at least m (A as stored, 'N') or k, ldb at least k
 * ('N') or n, ldc at least m. */
.macro  fortran_entry name, rest, own, p
        .globl  \name
        .type   \name, @function
\name:
        .cfi_startproc
        _CET_ENDBR
        product_at_most (%rdx), (%rcx), (%r8), \p, 9f
        scalar_not_zero \p, %r9, 9f
        leaq    tandem_straight+TANDEM_STRAIGHT_FORTRAN_OP(%rip), %r11
        movzbl  (%rdi), %eax
        movl    (%r11,%rax,4), %eax
        movzbl  (%rsi), %r10d
        movl    (%r11,%r10,4), %r10d
        testl   %eax, %eax
        jz      9f
        testl   %r10d, %r10d
        jz      9f
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %eax
        movl    (%r8), %eax
        cmove   (%rdx), %eax
        movq    16(%rsp), %r11
        cmpl    %eax, (%r11)
        jl      9f
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %r10d
        movl    (%rcx), %eax
        cmove   (%r8), %eax
        movq    32(%rsp), %r11
        cmpl    %eax, (%r11)
        jl      9f
        movl    (%rdx), %eax
        movq    56(%rsp), %r11
        cmpl    %eax, (%r11)
        jl      9f
        operands_then_jump 8, 24, 48, \own, \rest
        .cfi_endproc
        .size   \name, .-\name
.endm

/* CBLAS: order edi, transa esi, transb edx, m ecx, n r8d, k r9d, then for a real p alpha xmm0,
 * on the stack a (8), lda (16), b (24), ldb (32), c (40), ldc (48), beta xmm1; for a complex one
 * (`by_address`) alpha (8), a (16), lda (24), b (32), ldb (40), beta (48), c (56), ldc (64).
 * Column-major as Fortran; row-major: lda at least k (A as stored) or m, ldb at least n (B as
 * stored) or k, ldc at least n. */
.macro  cblas_entry name, rest, own, p, by_address
        .globl  \name
        .type   \name, @function
\name:
        .cfi_startproc
        _CET_ENDBR
        product_at_most %ecx, %r8d, %r9d, \p, 9f
        cblas_alpha_not_zero \p, \by_address, 8, %r11, 9f
        leal    -TANDEM_STRAIGHT_NO_TRANS(%rsi), %eax
        cmpl    $(TANDEM_STRAIGHT_CONJ_TRANS - TANDEM_STRAIGHT_NO_TRANS), %eax
        ja      9f
        leal    -TANDEM_STRAIGHT_NO_TRANS(%rdx), %eax
        cmpl    $(TANDEM_STRAIGHT_CONJ_TRANS - TANDEM_STRAIGHT_NO_TRANS), %eax
        ja      9f
        cmpl    $TANDEM_STRAIGHT_COL_MAJOR, %edi
        je      2f
        cmpl    $TANDEM_STRAIGHT_ROW_MAJOR, %edi
        jne     9f
        movl    %ecx, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %esi
        cmove   %r9d, %eax
        cmpl    %eax, 16+\by_address*8(%rsp)
        jl      9f
        movl    %r9d, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %edx
        cmove   %r8d, %eax
        cmpl    %eax, 32+\by_address*8(%rsp)
        jl      9f
        cmpl    %r8d, 48+\by_address*16(%rsp)
        jl      9f
        jmp     3f
2:
        movl    %r9d, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %esi
        cmove   %ecx, %eax
        cmpl    %eax, 16+\by_address*8(%rsp)
        jl      9f
        movl    %r8d, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %edx
        cmove   %r9d, %eax
        cmpl    %eax, 32+\by_address*8(%rsp)
        jl      9f
        cmpl    %ecx, 48+\by_address*16(%rsp)
        jl      9f
3:
        operands_then_jump 8+\by_address*8, 24+\by_address*8, 40+\by_address*16, \own, \rest
        .cfi_endproc
        .size   \name, .-\name
.endm

/* The other level-3 routines (syrk, syr2k, symm, trmm, trsm; hemm, herk, her2k), by the rule of
 * src/blas3/dropin/level3_entries.cpp's C++ entries (src/blas3/level3_rules.hpp) less one case: a
 * call with beta = 0 goes on to the C++ entry, which zeroes C before it goes straight. Each jumps to
 * OpenBLAS's entry at `own` (an offset into the table) when it is there, or to `rest`. */

/* A Fortran option character at (\at) is one of two letters (given in lower case: 0x6c l, 0x6e n,
 * 0x72 r, 0x75 u), in either case:
 * setting bit 5 lowers an upper-case letter, and no other byte meets a letter's lower case there. */
.macro  letter_is_one_of at, first, second, other
        movzbl  \at, %eax
        orl     $0x20, %eax
        cmpl    $\first, %eax
        je      1f
        cmpl    $\second, %eax
        jne     \other
1:
.endm

/* A Fortran transpose character at (\at) is N, T or C in either case (the GEMM entries' table):
 * eax is then its op, NO_TRANS for N. Overwrites r10. */
.macro  fortran_trans at, other
        leaq    tandem_straight+TANDEM_STRAIGHT_FORTRAN_OP(%rip), %r10
        movzbl  \at, %eax
        movl    (%r10,%rax,4), %eax
        testl   %eax, %eax
        jz      \other
.endm

/* The transposes a rank update allows beyond N (the transpose `op`, a register holding tandem's op
 * or CBLAS's, which are alike): rule 0 T and C (a real syrk or syr2k, where C is T), 1 T only (a
 * complex syrk or syr2k), 2 C only (herk and her2k). */
.macro  rank_trans_allowed rule, op, other
.if \rule == 1
        cmpl    $TANDEM_STRAIGHT_CONJ_TRANS, \op
        je      \other
.endif
.if \rule == 2
        cmpl    $(TANDEM_STRAIGHT_NO_TRANS + 1), \op
        je      \other
.endif
.endm

/* A leading dimension (a 32-bit integer at \ld, or pointed to by the pointer at \ld with `by`) is
 * at least \least (a 32-bit register). Overwrites r10 for `by`. */
.macro  ld_at_least ld, least, other
        cmpl    \least, \ld
        jl      \other
.endm
.macro  ld_by_at_least ld_at, least, other
        movq    \ld_at, %r10
        cmpl    \least, (%r10)
        jl      \other
.endm

/* OpenBLAS's entry at \own when the table has one, else \other. */
.macro  jump_own own, other
        movq    tandem_straight+\own(%rip), %rax
        testq   %rax, %rax
        jz      \other
        jmp     *%rax
.endm

.macro  entry_start name
        .globl  \name
        .type   \name, @function
\name:
        .cfi_startproc
        _CET_ENDBR
.endm
.macro  entry_end name, rest
9:
        jmp     \rest
        .cfi_endproc
        .size   \name, .-\name
.endm

/* A CBLAS enumeration (a 32-bit register) is one of `count` values from `first`. */
.macro  enum_in value, first, count, other
        leal    -\first(\value), %eax
        cmpl    $(\count - 1), %eax
        ja      \other
.endm

/* A Fortran side character at \side_at is L or R in either case; r11 is then A's order: m (at
 * \m_at) on the left, n (at \n_at) on the right. Overwrites rax. */
.macro  fortran_side_order side_at, m_at, n_at, other
        movzbl  \side_at, %eax
        orl     $0x20, %eax
        movl    \n_at, %r11d
        cmpl    $0x6c, %eax
        cmove   \m_at, %r11d
        je      2f
        cmpl    $0x72, %eax
        jne     \other
2:
.endm

/* A CBLAS side (esi) is Left or Right; r11 is then A's order: \m_ on the left, \n_ on the right
 * (both layouts: a row-major call is the column-major one with the side flipped and m and n
 * swapped). Overwrites rax. */
.macro  cblas_side_order m_, n_, other
        enum_in %rsi, TANDEM_STRAIGHT_LEFT, 2, \other
        movl    \n_, %r11d
        cmpl    $TANDEM_STRAIGHT_LEFT, %esi
        cmove   \m_, %r11d
.endm

/* Fortran syrk and syr2k (`two`), herk and her2k: uplo rdi, trans rsi, n rdx, k rcx, alpha r8, a
 * r9, then on the stack lda (8), [b (16), ldb (24),] beta, c, ldc. alpha's precision is ap and
 * beta's bp (herk's and her2k's real ones where p is complex), the transposes allowed `trans`
 * (rank_trans_allowed's rule). A (and B) are n x k, or k x n transposed: their leading dimensions
 * are at least that many rows; ldc at least n. */
.macro  fortran_rank name, rest, own, p, two, ap, bp, trans
        entry_start \name
        product_at_most (%rdx), (%rdx), (%rcx), \p, 9f
        scalar_not_zero \ap, %r8, 9f
        movq    16+\two*16(%rsp), %r11
        scalar_not_zero \bp, %r11, 9f
        letter_is_one_of (%rdi), 0x75, 0x6c, 9f
        fortran_trans (%rsi), 9f
        rank_trans_allowed \trans, %eax, 9f
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %eax
        movl    (%rcx), %r11d
        cmove   (%rdx), %r11d
        ld_by_at_least 8(%rsp), %r11d, 9f
.if \two
        ld_by_at_least 24(%rsp), %r11d, 9f
        cmpq    $0, 16(%rsp)
        je      9f
.endif
        movl    (%rdx), %r11d
        ld_by_at_least 32+\two*16(%rsp), %r11d, 9f
        testq   %r9, %r9
        jz      9f
        cmpq    $0, 24+\two*16(%rsp)
        je      9f
        jump_own \own, 9f
        entry_end \name, \rest
.endm

/* Fortran symm and hemm: side rdi, uplo rsi, m rdx, n rcx, alpha r8, a r9, then lda (8), b (16),
 * ldb (24), beta (32), c (40), ldc (48). A's order (r11) is m on the left, n on the right; ldb and
 * ldc at least m. */
.macro  fortran_symm name, rest, own, p
        entry_start \name
        fortran_side_order (%rdi), (%rdx), (%rcx), 9f
        product_at_most (%rdx), (%rcx), %r11d, \p, 9f
        scalar_not_zero \p, %r8, 9f
        movq    32(%rsp), %r10
        scalar_not_zero \p, %r10, 9f
        letter_is_one_of (%rsi), 0x75, 0x6c, 9f
        ld_by_at_least 8(%rsp), %r11d, 9f
        movl    (%rdx), %r11d
        ld_by_at_least 24(%rsp), %r11d, 9f
        ld_by_at_least 48(%rsp), %r11d, 9f
        testq   %r9, %r9
        jz      9f
        cmpq    $0, 16(%rsp)
        je      9f
        cmpq    $0, 40(%rsp)
        je      9f
        jump_own \own, 9f
        entry_end \name, \rest
.endm

/* Fortran trmm and trsm: side rdi, uplo rsi, transa rdx, diag rcx, m r8, n r9, then alpha (8), a
 * (16), lda (24), b (32), ldb (40). A's order (r11) is m on the left,
 * n on the right; ldb at least m. */
.macro  fortran_triangle name, rest, own, p
        entry_start \name
        fortran_side_order (%rdi), (%r8), (%r9), 9f
        product_at_most (%r8), (%r9), %r11d, \p, 9f
        movq    8(%rsp), %r10
        scalar_not_zero \p, %r10, 9f
        letter_is_one_of (%rsi), 0x75, 0x6c, 9f
        fortran_trans (%rdx), 9f
        letter_is_one_of (%rcx), 0x75, 0x6e, 9f
        ld_by_at_least 24(%rsp), %r11d, 9f
        movl    (%r8), %r11d
        ld_by_at_least 40(%rsp), %r11d, 9f
        cmpq    $0, 16(%rsp)
        je      9f
        cmpq    $0, 32(%rsp)
        je      9f
        jump_own \own, 9f
        entry_end \name, \rest
.endm


/* The layout (edi): 9f unless valid; then 2f for column-major, on for row-major. */
.macro  layout_or other
        cmpl    $TANDEM_STRAIGHT_COL_MAJOR, %edi
        je      2f
        cmpl    $TANDEM_STRAIGHT_ROW_MAJOR, %edi
        jne     \other
.endm

/* CBLAS syrk and syr2k (`two`), herk and her2k: order edi, uplo esi, trans edx, n ecx, k r8d.
 * alpha (precision ap) comes in xmm0, A in r9, then on the stack lda (8) [b (16), ldb (24)]; or,
 * by address (`alpha_address`), in r9, and every stack argument after it moves one slot (a at 8).
 * beta (precision bp) comes in the next XMM register, or by address (`beta_address`) in the
 * stack slot after the operands, before c and ldc. A (and B) span n rows in column-major
 * untransposed or row-major transposed, k otherwise; ldc at least n. `trans`: the transposes
 * allowed (rank_trans_allowed's rule). */
.macro  cblas_rank name, rest, own, p, two, ap, bp, trans, alpha_address, beta_address
        entry_start \name
        product_at_most %ecx, %ecx, %r8d, \p, 9f
.if \alpha_address
        scalar_not_zero \ap, %r9, 9f
.else
        value_not_zero \ap, %xmm0, 9f
.endif
.if \beta_address
        movq    16+\alpha_address*8+\two*16(%rsp), %r11
        scalar_not_zero \bp, %r11, 9f
.elseif \alpha_address
        value_not_zero \bp, %xmm0, 9f
.else
        value_not_zero \bp, %xmm1, 9f
.endif
        enum_in %rsi, TANDEM_STRAIGHT_UPPER, 2, 9f
        enum_in %rdx, TANDEM_STRAIGHT_NO_TRANS, 3, 9f
        rank_trans_allowed \trans, %edx, 9f
        movl    %ecx, %r11d
        layout_or 9f
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %edx
        cmove   %r8d, %r11d
        jmp     3f
2:
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %edx
        cmovne  %r8d, %r11d
3:
        ld_at_least 8+\alpha_address*8(%rsp), %r11d, 9f
.if \two
        ld_at_least 24+\alpha_address*8(%rsp), %r11d, 9f
        cmpq    $0, 16+\alpha_address*8(%rsp)
        je      9f
.endif
        ld_at_least 24+\alpha_address*8+\two*16+\beta_address*8(%rsp), %ecx, 9f
.if \alpha_address
        cmpq    $0, 8(%rsp)
.else
        testq   %r9, %r9
.endif
        jz      9f
        cmpq    $0, 16+\alpha_address*8+\two*16+\beta_address*8(%rsp)
        je      9f
        jump_own \own, 9f
        entry_end \name, \rest
.endm

/* CBLAS symm and hemm: order edi, side esi, uplo edx, m ecx, n r8d, then for a real p alpha xmm0,
 * a r9, beta xmm1, lda (8), b (16), ldb (24), c (32), ldc (40); for a complex one (`by_address`)
 * alpha r9, a (8), lda (16), b (24), ldb (32), beta (40), c (48), ldc (56). A's order (r11) is m on
 * the left, n on the right, in either layout; ldb and ldc at least m in column-major, n in
 * row-major. */
.macro  cblas_symm name, rest, own, p, by_address
        entry_start \name
        cblas_side_order %ecx, %r8d, 9f
        product_at_most %ecx, %r8d, %r11d, \p, 9f
.if \by_address
        scalar_not_zero \p, %r9, 9f
        movq    40(%rsp), %r10
        scalar_not_zero \p, %r10, 9f
.else
        value_not_zero \p, %xmm0, 9f
        value_not_zero \p, %xmm1, 9f
.endif
        enum_in %rdx, TANDEM_STRAIGHT_UPPER, 2, 9f
        ld_at_least 8+\by_address*8(%rsp), %r11d, 9f
        movl    %ecx, %r11d
        layout_or 9f
        movl    %r8d, %r11d
2:
        ld_at_least 24+\by_address*8(%rsp), %r11d, 9f
        ld_at_least 40+\by_address*16(%rsp), %r11d, 9f
.if \by_address
        cmpq    $0, 8(%rsp)
.else
        testq   %r9, %r9
.endif
        jz      9f
        cmpq    $0, 16+\by_address*8(%rsp)
        je      9f
        cmpq    $0, 32+\by_address*16(%rsp)
        je      9f
        jump_own \own, 9f
        entry_end \name, \rest
.endm

/* CBLAS trmm and trsm: order edi, side esi, uplo edx, transa ecx, diag r8d, m r9d, then n (8) and
 * for a real p alpha xmm0, a (16), lda (24), b (32), ldb (40); for a complex one (`by_address`)
 * alpha (16), a (24), lda (32), b (40), ldb (48). A's order (r11) is m on the left, n on the
 * right; ldb at least m in column-major, n in row-major. */
.macro  cblas_triangle name, rest, own, p, by_address
        entry_start \name
        cblas_side_order %r9d, 8(%rsp), 9f
        product_at_most %r9d, 8(%rsp), %r11d, \p, 9f
        cblas_alpha_not_zero \p, \by_address, 16, %r10, 9f
        enum_in %rdx, TANDEM_STRAIGHT_UPPER, 2, 9f
        enum_in %rcx, TANDEM_STRAIGHT_NO_TRANS, 3, 9f
        enum_in %r8, TANDEM_STRAIGHT_NON_UNIT, 2, 9f
        ld_at_least 24+\by_address*8(%rsp), %r11d, 9f
        movl    %r9d, %r11d
        layout_or 9f
        movl    8(%rsp), %r11d
2:
        ld_at_least 40+\by_address*8(%rsp), %r11d, 9f
        cmpq    $0, 16+\by_address*8(%rsp)
        je      9f
        cmpq    $0, 32+\by_address*8(%rsp)
        je      9f
        jump_own \own, 9f
        entry_end \name, \rest
.endm

/* One precision's syrk, syr2k, symm, trmm and trsm: p its letter, P its row of the table, `trans`
 * its syrk's and syr2k's transposes (rank_trans_allowed's rule), `by_address` whether CBLAS passes
 * its scalars by address. */
#define TANDEM_LEVEL3_ENTRIES(p, P, trans, by_address) \
        fortran_rank p##syrk_, tandem_rest_##p##syrk_, P+TANDEM_LEVEL3_SYRK, p, 0, p, p, trans; \
        fortran_rank p##syr2k_, tandem_rest_##p##syr2k_, P+TANDEM_LEVEL3_SYR2K, p, 1, p, p, trans; \
        fortran_symm p##symm_, tandem_rest_##p##symm_, P+TANDEM_LEVEL3_SYMM, p; \
        fortran_triangle p##trmm_, tandem_rest_##p##trmm_, P+TANDEM_LEVEL3_TRMM, p; \
        fortran_triangle p##trsm_, tandem_rest_##p##trsm_, P+TANDEM_LEVEL3_TRSM, p; \
        cblas_rank cblas_##p##syrk, tandem_rest_cblas_##p##syrk, P+TANDEM_LEVEL3_CBLAS_SYRK, p, 0, p, p, trans, by_address, by_address; \
        cblas_rank cblas_##p##syr2k, tandem_rest_cblas_##p##syr2k, P+TANDEM_LEVEL3_CBLAS_SYR2K, p, 1, p, p, trans, by_address, by_address; \
        cblas_symm cblas_##p##symm, tandem_rest_cblas_##p##symm, P+TANDEM_LEVEL3_CBLAS_SYMM, p, by_address; \
        cblas_triangle cblas_##p##trmm, tandem_rest_cblas_##p##trmm, P+TANDEM_LEVEL3_CBLAS_TRMM, p, by_address; \
        cblas_triangle cblas_##p##trsm, tandem_rest_cblas_##p##trsm, P+TANDEM_LEVEL3_CBLAS_TRSM, p, by_address

/* A complex precision's hemm, herk and her2k: p its letter, r its real precision's (herk's alpha
 * and beta, her2k's beta), H its row of the table. CBLAS passes herk's scalars by value, her2k's
 * alpha by address and its beta by value. */
#define TANDEM_HERMITIAN_ENTRIES(p, r, H) \
        fortran_symm p##hemm_, tandem_rest_##p##hemm_, H+TANDEM_HERMITIAN_HEMM, p; \
        fortran_rank p##herk_, tandem_rest_##p##herk_, H+TANDEM_HERMITIAN_HERK, p, 0, r, r, 2; \
        fortran_rank p##her2k_, tandem_rest_##p##her2k_, H+TANDEM_HERMITIAN_HER2K, p, 1, p, r, 2; \
        cblas_symm cblas_##p##hemm, tandem_rest_cblas_##p##hemm, H+TANDEM_HERMITIAN_CBLAS_HEMM, p, 1; \
        cblas_rank cblas_##p##herk, tandem_rest_cblas_##p##herk, H+TANDEM_HERMITIAN_CBLAS_HERK, p, 0, r, r, 2, 0, 0; \
        cblas_rank cblas_##p##her2k, tandem_rest_cblas_##p##her2k, H+TANDEM_HERMITIAN_CBLAS_HER2K, p, 1, p, r, 2, 1, 0

TANDEM_LEVEL3_ENTRIES(s, TANDEM_STRAIGHT_LEVEL3_S, 0, 0)
TANDEM_LEVEL3_ENTRIES(d, TANDEM_STRAIGHT_LEVEL3_D, 0, 0)
TANDEM_LEVEL3_ENTRIES(c, TANDEM_STRAIGHT_LEVEL3_C, 1, 1)
TANDEM_LEVEL3_ENTRIES(z, TANDEM_STRAIGHT_LEVEL3_Z, 1, 1)
TANDEM_HERMITIAN_ENTRIES(c, s, TANDEM_STRAIGHT_HERMITIAN_C)
TANDEM_HERMITIAN_ENTRIES(z, d, TANDEM_STRAIGHT_HERMITIAN_Z)

fortran_entry sgemm_, tandem_rest_sgemm_, TANDEM_STRAIGHT_OWN_SGEMM, s
fortran_entry dgemm_, tandem_rest_dgemm_, TANDEM_STRAIGHT_OWN_DGEMM, d
fortran_entry cgemm_, tandem_rest_cgemm_, TANDEM_STRAIGHT_OWN_CGEMM, c
fortran_entry zgemm_, tandem_rest_zgemm_, TANDEM_STRAIGHT_OWN_ZGEMM, z
cblas_entry cblas_sgemm, tandem_rest_cblas_sgemm, TANDEM_STRAIGHT_OWN_CBLAS_SGEMM, s, 0
cblas_entry cblas_dgemm, tandem_rest_cblas_dgemm, TANDEM_STRAIGHT_OWN_CBLAS_DGEMM, d, 0
cblas_entry cblas_cgemm, tandem_rest_cblas_cgemm, TANDEM_STRAIGHT_OWN_CBLAS_CGEMM, c, 1
cblas_entry cblas_zgemm, tandem_rest_cblas_zgemm, TANDEM_STRAIGHT_OWN_CBLAS_ZGEMM, z, 1

        .section .note.GNU-stack, "", @progbits
