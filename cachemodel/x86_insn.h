/*
 * Classify an x86-64 instruction from its bytes, for the cache model:
 * the plugin calls this once per instruction at translation time and
 * attaches the result to the instruction's callbacks.
 *
 * Recognised (Intel SDM vol. 2 opcode maps):
 *   non-temporal stores  0F C3 movnti; 0F 2B movntps/pd; 0F E7 movntq/
 *                        movntdq; 0F F7 maskmovq/maskmovdqu; VEX 2B, E7
 *   cache flushes        0F AE /7 (mem) clflush, 66 0F AE /7 clflushopt
 *   fences               0F AE F8-FF sfence, F0-F7 mfence, E8-EF lfence
 *   locked               an F0 prefix, or xchg with memory (86/87, mod!=3)
 *   translation changes  0F 22 mov to a control register (CR0, CR3, CR4:
 *                        paging, address space, global pages), 0F 01 /7
 *                        (mem) invlpg, 66 0F 38 82 invpcid
 *   fast strings         F3 (rep) A4/A5 movs, F3 AA/AB stos
 *   spin-wait hint       F3 90 pause (not with REX.B: xchg eax, r8d)
 */
#ifndef CACHEMODEL_X86_INSN_H
#define CACHEMODEL_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

#define X86_NT_STORE (1u << 0)
#define X86_CLFLUSH (1u << 1)
#define X86_SFENCE (1u << 2)
#define X86_MFENCE (1u << 3)
#define X86_LFENCE (1u << 4)
#define X86_LOCKED (1u << 5)
#define X86_TLB_FLUSH (1u << 6)
#define X86_REP_STRING (1u << 7)
#define X86_PAUSE (1u << 8)

/*
 * The X86_* flags of the instruction in bytes[0..len). Returns 0 for
 * any other instruction and for truncated or undecodable bytes.
 */
unsigned x86_insn_classify(const uint8_t *bytes, size_t len);

#endif
