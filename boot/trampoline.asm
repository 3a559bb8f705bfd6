; AP start-up trampoline: real mode -> protected mode -> long mode -> the
; kernel's higher half (SDM vol. 3A, 9.4 "MP initialization", 9.8-9.9
; "mode switching"). arch/x86_64/smp.c copies the bytes between
; trampoline_start and trampoline_end to TRAMPOLINE_PHYS (a low page) and
; fills the parameter block at its end before each start-up IPI, whose
; vector is TRAMPOLINE_PHYS >> 12: the AP starts at CS = vector << 8, IP = 0.
;
; The AP gets its own identity mapping of the low 2 MiB through a small
; PML4 built by smp.c (the trampoline tables), whose entries 256..511 are
; copies of the kernel's, so the jump to the higher half works; there it
; loads the kernel's CR3. Nothing relies on the boot identity map.
;
; params.stage records how far the AP got (1 real, 2 protected, 3 long
; mode, 4 in C), so a CPU that never reports can be diagnosed.

%include "boot/boot.inc"

TRAMPOLINE_PHYS	equ 0x8000		; keep in step with arch/x86_64/smp.h
DIRECT_MAP_BASE	equ 0xffff800000000000	; arch/x86_64/include/asm/direct_map.h
CR0_NW		equ 1 << 29
CR0_CD		equ 1 << 30
TRAMP_CS32	equ 0x08
TRAMP_CS64	equ 0x10
TRAMP_DS	equ 0x18
GDT_CODE32	equ 0x00cf9a000000ffff	; 4 GiB flat, execute/read, 32-bit

; Linear address of a trampoline label once copied.
%define TADDR(l) (TRAMPOLINE_PHYS + ((l) - trampoline_start))

section .rodata
align 16
global trampoline_start, trampoline_end, trampoline_params
bits 16
trampoline_start:
	cli
	cld
	mov ax, cs
	mov ds, ax
	mov byte [params_stage - trampoline_start], 1
	lgdt [tramp_gdt_ptr - trampoline_start]
	mov eax, cr0
	or eax, CR0_PE
	mov cr0, eax
	jmp dword TRAMP_CS32:TADDR(pm32)

bits 32
pm32:
	mov ax, TRAMP_DS
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov byte [TADDR(params_stage)], 2
	mov eax, [TADDR(params_cr4)]
	mov cr4, eax
	mov eax, [TADDR(params_tramp_cr3)]
	mov cr3, eax
	mov ecx, MSR_EFER
	mov eax, [TADDR(params_efer)]
	xor edx, edx
	wrmsr
	; INIT leaves caching disabled (CD, NW set): turn it on.
	mov eax, cr0
	and eax, ~(CR0_CD | CR0_NW)
	or eax, CR0_PG | CR0_PE | CR0_WP
	mov cr0, eax
	jmp TRAMP_CS64:TADDR(lm64)

bits 64
lm64:
	mov byte [TADDR(params_stage)], 3
	mov rax, ap_long_mode_high
	jmp rax

align 8
tramp_gdt:
	dq 0
	dq GDT_CODE32			; TRAMP_CS32
	dq GDT_CODE64			; TRAMP_CS64
	dq GDT_DATA			; TRAMP_DS
tramp_gdt_end:
tramp_gdt_ptr:
	dw tramp_gdt_end - tramp_gdt - 1
	dd TADDR(tramp_gdt)

; The parameter block: struct trampoline_params in arch/x86_64/smp.c.
align 8
trampoline_params:
params_tramp_cr3:	dq 0	; trampoline PML4, below 4 GiB
params_cr4:		dq 0	; CR4 for the switch (PAE, PGE)
params_efer:		dq 0	; EFER for the switch (LME, NXE)
params_kernel_cr3:	dq 0	; the kernel's page tables
params_stack:		dq 0	; top of this AP's kernel stack
params_percpu:		dq 0	; its struct percpu, passed to ap_main
params_stage:		dq 0
trampoline_end:

; Higher half, kernel page tables next: read the parameters through the
; direct map, which the trampoline PML4 and the kernel's both map.
section .text
extern ap_main
ap_long_mode_high:
	mov rbx, DIRECT_MAP_BASE + TADDR(trampoline_params)
	mov rax, [rbx + (params_kernel_cr3 - trampoline_params)]
	mov cr3, rax
	mov rsp, [rbx + (params_stack - trampoline_params)]
	mov rdi, [rbx + (params_percpu - trampoline_params)]
	xor ebp, ebp
	call ap_main
.halt:
	cli
	hlt
	jmp .halt

section .note.GNU-stack noalloc noexec nowrite progbits
