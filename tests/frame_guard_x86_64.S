/* A call with guard values right above its stack arguments (x86-64 System V), for
 * tests/caller_frame_test.c: the callee owns the stack slots of the arguments its caller passed and
 * nothing above them, so a BLAS entry that stores into a slot its C caller never passed (where
 * gfortran's hidden string lengths would be) changes a guard.
 *
 *   uint64_t frame_guard_call(void (*fn)(void), const uint64_t regs[6], const uint64_t xmm[2],
 *                             const uint64_t* stack, uint64_t count, uint64_t guard);
 *
 * Calls fn with rdi..r9 = regs, xmm0 and xmm1's low halves = xmm, and `count` stack arguments
 * from `stack`, with kGuards slots of `guard` right above the last of them; returns how many
 * guards fn changed. */
#include <cet.h>

#define kGuards 8

        .text
        .globl  frame_guard_call
        .type   frame_guard_call, @function
frame_guard_call:
        .cfi_startproc
        _CET_ENDBR
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq   %rbx
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        /* -48(%rbp): the guard, -56(%rbp): where the guards start. */
        subq    $16, %rsp
        movq    %r9, -48(%rbp)
        movq    %rdi, %r12
        movq    %rsi, %r13
        movq    %rdx, %r14
        movq    %rcx, %r15
        movq    %r8, %rbx
        /* rsp is 16-aligned at the call: 56 bytes are below rbp here, kGuards * 8 and count * 8
         * follow, so one padding slot (above the guards) when count is even. */
        testq   $1, %rbx
        jnz     1f
        subq    $8, %rsp
1:
        movl    $kGuards, %ecx
2:
        pushq   -48(%rbp)
        decl    %ecx
        jnz     2b
        movq    %rsp, -56(%rbp)
        movq    %rbx, %rcx
3:
        testq   %rcx, %rcx
        jz      4f
        pushq   -8(%r15,%rcx,8)
        decq    %rcx
        jmp     3b
4:
        movq    (%r14), %xmm0
        movq    8(%r14), %xmm1
        movq    (%r13), %rdi
        movq    8(%r13), %rsi
        movq    16(%r13), %rdx
        movq    24(%r13), %rcx
        movq    32(%r13), %r8
        movq    40(%r13), %r9
        xorl    %eax, %eax
        call    *%r12
        /* Count the guards that changed. */
        xorl    %eax, %eax
        movq    -48(%rbp), %rdx
        movq    -56(%rbp), %r10
        movl    $kGuards, %ecx
5:
        cmpq    %rdx, (%r10)
        je      6f
        incl    %eax
6:
        addq    $8, %r10
        decl    %ecx
        jnz     5b
        leaq    -40(%rbp), %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbx
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   frame_guard_call, .-frame_guard_call

        .section .note.GNU-stack, "", @progbits
