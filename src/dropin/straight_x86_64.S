/* The drop-in's four GEMM entries on x86-64 (System V ABI): each applies the straight path's rule
 * (src/dropin/straight.hpp) in scratch registers (rax, r10, r11) and jumps to
 * OpenBLAS's own entry with the caller's registers and stack as they came, or to the C++ entry
 * (tandem_rest_*, src/dropin/gemm_entries.cpp), which handles every other call. Nothing here
 * writes memory or the stack. tests/straight_test.cpp holds these entries to the C++ rule. */
#include <cet.h>

#include "dropin/straight.hpp"

#if !defined(__x86_64__) || defined(__ILP32__) || !defined(__ELF__)
#error "the straight entries are for x86-64 ELF (LP64) only; CMake builds the C++ entries elsewhere"
#endif

        .text

/* A call with a product at most the published bound (0 until published, so every call goes on):
 * m, n, k not negative (their OR's sign), then m * n * k less 1 as an unsigned 64-bit integer
 * below `most` (a size of 0 makes it the largest; an overflow goes on). m_, n_, k_ are where the
 * three 32-bit sizes are (registers or memory). Overwrites rax and r10. */
.macro  product_at_most m_, n_, k_, other
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
        decq    %rax
        cmpq    tandem_straight+TANDEM_STRAIGHT_MOST(%rip), %rax
        jae     \other
.endm

/* alpha's bits, loaded into eax or rax with `load` and doubled (the sign shifted out), are not all
 * 0: alpha is not 0 (NaN is not 0). Integer instructions only: an SSE instruction that writes an
 * XMM register can wait on the upper halves a caller's AVX code left. */
.macro  alpha_not_zero load, from, bits, other
        \load   \from, \bits
        add     \bits, \bits
        jz      \other
.endm

/* The end of every entry: A (8(%rsp)), B (24(%rsp)) and C (c_at(%rsp)) are not NULL, then the
 * jump to OpenBLAS's entry; label 9 (every failed check) jumps to the C++ entry. */
.macro  operands_then_jump c_at, own, rest
        cmpq    $0, 8(%rsp)
        je      9f
        cmpq    $0, 24(%rsp)
        je      9f
        cmpq    $0, \c_at(%rsp)
        je      9f
        jmp     *tandem_straight+\own(%rip)
9:
        jmp     \rest
.endm

/* Fortran: transa rdi, transb rsi, m rdx, n rcx, k r8, alpha r9 (all by reference), then on the
 * stack a, lda, b, ldb, beta, c, ldc and the two hidden lengths. Column-major: lda at least m
 * (A as stored, 'N') or k, ldb at least k ('N') or n, ldc at least m. */
.macro  fortran_entry name, rest, own, load, bits
        .globl  \name
        .type   \name, @function
\name:
        .cfi_startproc
        _CET_ENDBR
        product_at_most (%rdx), (%rcx), (%r8), 9f
        alpha_not_zero \load, (%r9), \bits, 9f
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
        operands_then_jump 48, \own, \rest
        .cfi_endproc
        .size   \name, .-\name
.endm

/* CBLAS: order edi, transa esi, transb edx, m ecx, n r8d, k r9d, alpha xmm0, then on the stack
 * a, lda, b, ldb, c, ldc (beta in xmm1). Column-major as Fortran; row-major: lda at least k
 * (A as stored) or m, ldb at least n (B as stored) or k, ldc at least n. */
.macro  cblas_entry name, rest, own, load, bits
        .globl  \name
        .type   \name, @function
\name:
        .cfi_startproc
        _CET_ENDBR
        product_at_most %ecx, %r8d, %r9d, 9f
        alpha_not_zero \load, %xmm0, \bits, 9f
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
        cmpl    %eax, 16(%rsp)
        jl      9f
        movl    %r9d, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %edx
        cmove   %r8d, %eax
        cmpl    %eax, 32(%rsp)
        jl      9f
        cmpl    %r8d, 48(%rsp)
        jl      9f
        jmp     3f
2:
        movl    %r9d, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %esi
        cmove   %ecx, %eax
        cmpl    %eax, 16(%rsp)
        jl      9f
        movl    %r8d, %eax
        cmpl    $TANDEM_STRAIGHT_NO_TRANS, %edx
        cmove   %r9d, %eax
        cmpl    %eax, 32(%rsp)
        jl      9f
        cmpl    %ecx, 48(%rsp)
        jl      9f
3:
        operands_then_jump 40, \own, \rest
        .cfi_endproc
        .size   \name, .-\name
.endm

fortran_entry sgemm_, tandem_rest_sgemm_, TANDEM_STRAIGHT_OWN_SGEMM, movl, %eax
fortran_entry dgemm_, tandem_rest_dgemm_, TANDEM_STRAIGHT_OWN_DGEMM, movq, %rax
cblas_entry cblas_sgemm, tandem_rest_cblas_sgemm, TANDEM_STRAIGHT_OWN_CBLAS_SGEMM, movd, %eax
cblas_entry cblas_dgemm, tandem_rest_cblas_dgemm, TANDEM_STRAIGHT_OWN_CBLAS_DGEMM, movq, %rax

        .section .note.GNU-stack, "", @progbits
