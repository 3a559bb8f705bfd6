; Kernel setjmp/longjmp, used by trap_try() to return from a caught fault.
; struct kjmp_buf: rbx, rbp, r12, r13, r14, r15, rsp, rip (8 quadwords).

bits 64
section .text

global ksetjmp
ksetjmp:
	mov [rdi + 0], rbx
	mov [rdi + 8], rbp
	mov [rdi + 16], r12
	mov [rdi + 24], r13
	mov [rdi + 32], r14
	mov [rdi + 40], r15
	lea rdx, [rsp + 8]	; the caller's RSP after our return
	mov [rdi + 48], rdx
	mov rdx, [rsp]		; our return address
	mov [rdi + 56], rdx
	xor eax, eax
	ret

global klongjmp
klongjmp:
	mov eax, esi
	test eax, eax
	jnz .nonzero
	inc eax			; longjmp(buf, 0) returns 1, as in C
.nonzero:
	mov rbx, [rdi + 0]
	mov rbp, [rdi + 8]
	mov r12, [rdi + 16]
	mov r13, [rdi + 24]
	mov r14, [rdi + 32]
	mov r15, [rdi + 40]
	mov rsp, [rdi + 48]
	jmp [rdi + 56]

section .note.GNU-stack noalloc noexec nowrite progbits
