; Multiboot2 header and 32-bit entry: from GRUB's protected mode to the
; 64-bit higher-half kernel.
;
; GRUB (BIOS or UEFI, after ExitBootServices) jumps to _start in 32-bit
; protected mode, paging off, EAX = multiboot2 magic, EBX = physical address
; of the boot information. We check the magic and the CPU (long mode, PAE,
; NX), build early page tables, enable long mode and jump to the kernel in
; the top 2 GiB. See docs/boot.md for the walk-through.
;
; Early page tables (2 MiB pages), zeroed here rather than trusted:
;   PML4[0]   -> pdpt_low   identity 0-4 GiB (boot code, early MMIO)
;   PML4[256] -> pdpt_low   direct map at DIRECT_MAP_BASE, 0-4 GiB
;   PML4[511] -> pdpt_high  [510] -> 0-1 GiB, [511] -> 1-2 GiB (the kernel)
; mm/ replaces all of this with the kernel's own tables once it runs.

%include "boot/boot.inc"

section .multiboot
align 8
mb2_header:
	dd MB2_HEADER_MAGIC
	dd MB2_ARCH_I386
	dd mb2_header_end - mb2_header
	dd -(MB2_HEADER_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
align 8
.info_request:				; optional: boot on without them
	dw MB2_HTAG_INFO_REQUEST, MB2_HTAG_OPTIONAL
	dd .info_request_end - .info_request
	dd MB2_TAG_CMDLINE, MB2_TAG_MMAP, MB2_TAG_FRAMEBUFFER
	dd MB2_TAG_ACPI_OLD, MB2_TAG_ACPI_NEW
.info_request_end:
align 8
.console_flags:				; we can also use EGA text mode
	dw MB2_HTAG_CONSOLE_FLAGS, MB2_HTAG_OPTIONAL
	dd 12
	dd MB2_CONSOLE_EGA_TEXT_SUPPORTED
align 8
; No framebuffer header tag on purpose: with one, GRUB switches a BIOS
; machine to graphics even when text mode is there. Without it GRUB keeps
; VGA text on BIOS and, having no text mode on UEFI, still hands over the
; GOP framebuffer (the info request above asks for its tag).
	dw MB2_HTAG_END, 0
	dd 8
mb2_header_end:

section .boot.text progbits alloc exec nowrite align=16
bits 32
global _start
_start:
	cli
	cld
	mov esp, boot_stack_top
	mov [boot_mb_magic], eax
	mov [boot_mb_info], ebx

	cmp eax, MB2_BOOTLOADER_MAGIC
	jne .no_multiboot

	; CPUID itself: toggling EFLAGS.ID must stick.
	pushfd
	pop eax
	mov ecx, eax
	xor eax, EFLAGS_ID
	push eax
	popfd
	pushfd
	pop eax
	push ecx
	popfd
	xor eax, ecx
	jz .no_long_mode

	mov eax, CPUID_EXT_MAX
	cpuid
	cmp eax, CPUID_EXT_FEATURES
	jb .no_long_mode
	mov eax, CPUID_EXT_FEATURES
	cpuid
	test edx, CPUID_EXT_EDX_LM
	jz .no_long_mode
	test edx, CPUID_EXT_EDX_NX
	jz .no_nx
	mov eax, CPUID_FEATURES
	cpuid
	test edx, CPUID_EDX_PAE
	jz .no_pae

	; Zero the early tables ourselves: never trust what was there.
	mov edi, early_tables_start
	mov ecx, (early_tables_end - early_tables_start) / 4
	xor eax, eax
	rep stosd

	; pdpt_low: four 1 GiB slots, each a PD of 512 2 MiB pages.
	mov edi, pdpt_low
	mov eax, pd_0_4g + (PTE_P + PTE_W)
	mov ecx, 4
.fill_pdpt:
	mov [edi], eax
	add eax, PAGE_SIZE
	add edi, 8
	loop .fill_pdpt

	mov edi, pd_0_4g
	mov eax, PTE_P | PTE_W | PTE_PS
	xor edx, edx
	mov ecx, 4 * 512
.fill_pd:
	mov [edi], eax
	mov [edi + 4], edx
	add eax, LARGE_PAGE_SIZE
	adc edx, 0
	add edi, 8
	loop .fill_pd

	mov dword [pdpt_high + 510 * 8], pd_0_4g + (PTE_P + PTE_W)
	mov dword [pdpt_high + 511 * 8], pd_0_4g + PAGE_SIZE + (PTE_P + PTE_W)

	mov dword [pml4 + 0 * 8], pdpt_low + (PTE_P + PTE_W)
	mov dword [pml4 + 256 * 8], pdpt_low + (PTE_P + PTE_W)
	mov dword [pml4 + 511 * 8], pdpt_high + (PTE_P + PTE_W)

	mov eax, cr4
	or eax, CR4_PAE | CR4_PGE
	mov cr4, eax
	mov eax, pml4
	mov cr3, eax
	mov ecx, MSR_EFER
	rdmsr
	or eax, EFER_LME | EFER_NXE
	wrmsr
	mov eax, cr0
	or eax, CR0_PG | CR0_PE | CR0_WP
	mov cr0, eax

	lgdt [early_gdt_ptr]
	jmp EARLY_KERNEL_CS:long_mode_entry

.no_multiboot:
	mov esi, msg_no_multiboot
	jmp early_fatal
.no_long_mode:
	mov esi, msg_no_long_mode
	jmp early_fatal
.no_nx:
	mov esi, msg_no_nx
	jmp early_fatal
.no_pae:
	mov esi, msg_no_pae
	jmp early_fatal

; Print the NUL-terminated string at ESI on COM1 and VGA text, then halt.
; Used only before long mode, when nothing else can report.
early_fatal:
	mov dx, COM1 + UART_LCR
	mov al, UART_LCR_DLAB
	out dx, al
	mov dx, COM1 + UART_DLL
	mov al, UART_DIVISOR_115200
	out dx, al
	mov dx, COM1 + UART_DLM
	xor al, al
	out dx, al
	mov dx, COM1 + UART_LCR
	mov al, UART_LCR_8N1
	out dx, al
	mov edi, VGA_TEXT_PHYS
	mov ebx, esi
.next:
	mov al, [ebx]
	test al, al
	jz .done
	mov ah, VGA_ATTR_ERROR
	mov [edi], ax
	add edi, 2
	mov ah, al
	mov dx, COM1 + UART_LSR
.wait:
	in al, dx
	test al, UART_LSR_THRE
	jz .wait
	mov al, ah
	mov dx, COM1 + UART_THR
	out dx, al
	inc ebx
	jmp .next
.done:
	cli
	hlt
	jmp .done

bits 64
long_mode_entry:
	mov ax, EARLY_KERNEL_DS
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor ax, ax
	mov fs, ax
	mov gs, ax
	; Leave the identity mapping: continue on the higher-half stack.
	mov rsp, boot_kernel_stack_top
	xor ebp, ebp
	mov edi, [boot_mb_magic]
	mov esi, [boot_mb_info]
	mov rax, kmain
	call rax
.halt:
	cli
	hlt
	jmp .halt

section .boot.data progbits alloc noexec write align=8
align 8
early_gdt:
	dq 0
	dq GDT_CODE64			; EARLY_KERNEL_CS
	dq GDT_DATA			; EARLY_KERNEL_DS
early_gdt_end:
early_gdt_ptr:
	dw early_gdt_end - early_gdt - 1
	dd early_gdt

global boot_mb_magic, boot_mb_info
boot_mb_magic:	dd 0
boot_mb_info:	dd 0

msg_no_multiboot: db "FATAL: not started by a multiboot2 loader (bad magic in EAX)", 13, 10, 0
msg_no_long_mode: db "FATAL: this CPU has no 64-bit long mode; the kernel needs x86_64", 13, 10, 0
msg_no_nx:	  db "FATAL: this CPU has no NX (execute-disable) bit; the kernel needs it", 13, 10, 0
msg_no_pae:	  db "FATAL: this CPU has no PAE; the kernel needs it", 13, 10, 0

section .boot.bss nobits alloc write
align PAGE_SIZE
early_tables_start:
pml4:		resb PAGE_SIZE
pdpt_low:	resb PAGE_SIZE
pdpt_high:	resb PAGE_SIZE
pd_0_4g:	resb 4 * PAGE_SIZE
early_tables_end:
boot_stack:	resb BOOT32_STACK_SIZE
boot_stack_top:

; The boot CPU's kernel stack, with a guard page below it that mm/ unmaps.
section .bss
align PAGE_SIZE
global boot_stack_guard, boot_kernel_stack, boot_kernel_stack_top
boot_stack_guard:	resb PAGE_SIZE
boot_kernel_stack:	resb KERNEL_STACK_SIZE
boot_kernel_stack_top:

extern kmain
section .note.GNU-stack noalloc noexec nowrite progbits
