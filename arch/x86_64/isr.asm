; Interrupt and exception entry stubs for all 256 vectors.
;
; The CPU pushes SS, RSP, RFLAGS, CS, RIP and, for some exceptions, an error
; code. Each stub evens this out (pushes 0 where the CPU pushed no error
; code), pushes its vector, and joins isr_common, which saves the general
; registers in the order of struct trap_frame (arch/x86_64/trap.h) and calls
; trap_dispatch(frame). The frame is 22 quadwords, so RSP stays 16-byte
; aligned at the call, as the ABI requires.

bits 64
extern trap_dispatch

%macro ISR_NOERR 1
isr_stub_%1:
	push qword 0
	push qword %1
	jmp isr_common
%endmacro

%macro ISR_ERR 1
isr_stub_%1:
	push qword %1
	jmp isr_common
%endmacro

section .text
isr_common:
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	cld
	mov rdi, rsp
	call trap_dispatch
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16		; vector and error code
	iretq

; Vectors whose exceptions push an error code (SDM vol. 3A, table 6-1).
%assign v 0
%rep 256
%if v == 8 || v == 10 || v == 11 || v == 12 || v == 13 || v == 14 || v == 17 || v == 21 || v == 29 || v == 30
	ISR_ERR v
%else
	ISR_NOERR v
%endif
%assign v v + 1
%endrep

section .rodata
align 8
global isr_stub_table
isr_stub_table:
%assign v 0
%rep 256
	dq isr_stub_ %+ v
%assign v v + 1
%endrep

section .note.GNU-stack noalloc noexec nowrite progbits
