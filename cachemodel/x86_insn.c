/*
 * A decoder just deep enough for x86_insn_classify(): legacy and REX
 * prefixes, the two-byte 0F map, two- and three-byte VEX, and the ModRM
 * byte where the mod field or the reg field matters.
 */
#include <stdbool.h>
#include "cachemodel/x86_insn.h"

#define PFX_LOCK 0xf0
#define PFX_REP 0xf3
#define PFX_OPSIZE 0x66
#define OP_MOVSB 0xa4
#define OP_MOVS 0xa5
#define OP_STOSB 0xaa
#define OP_STOS 0xab
#define OP_NOP 0x90
#define REX_B 0x01
#define ESCAPE_0F 0x0f
#define VEX2 0xc5
#define VEX3 0xc4
#define VEX_MAP_0F 1
#define MODRM_MOD(b) ((b) >> 6)
#define MODRM_REG(b) (((b) >> 3) & 7)
#define MOD_REGISTER 3

static bool legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3:			/* lock, rep */
	case 0x2e: case 0x36: case 0x3e: case 0x26:		/* segments */
	case 0x64: case 0x65:
	case 0x66: case 0x67:					/* sizes */
		return true;
	default:
		return false;
	}
}

/* Opcode byte op of the 0F map with its ModRM at bytes[i] (if i < len). */
static unsigned classify_0f(uint8_t op, const uint8_t *bytes, size_t i,
			    size_t len, bool opsize)
{
	uint8_t modrm;

	if (i >= len)
		return 0;
	modrm = bytes[i];
	switch (op) {
	case 0xc3:	/* movnti */
	case 0x2b:	/* movntps / movntpd */
	case 0xe7:	/* movntq / movntdq */
		return MODRM_MOD(modrm) != MOD_REGISTER ? X86_NT_STORE : 0;
	case 0xf7:	/* maskmovq / maskmovdqu: register operands, store to [rdi] */
		return MODRM_MOD(modrm) == MOD_REGISTER ? X86_NT_STORE : 0;
	case 0xae:
		if (MODRM_MOD(modrm) != MOD_REGISTER)
			return MODRM_REG(modrm) == 7 ? X86_CLFLUSH : 0;
		switch (MODRM_REG(modrm)) {
		case 5:
			return X86_LFENCE;
		case 6:
			return opsize ? 0 : X86_MFENCE;
		case 7:
			return opsize ? 0 : X86_SFENCE;
		default:
			return 0;
		}
	case 0x22:	/* mov to CRn */
		return X86_TLB_FLUSH;
	case 0x01:	/* group 7: /7 with memory is invlpg */
		return MODRM_MOD(modrm) != MOD_REGISTER &&
		       MODRM_REG(modrm) == 7 ? X86_TLB_FLUSH : 0;
	case 0x38:	/* three-byte map: 38 82 is invpcid (66 prefix) */
		return opsize && modrm == 0x82 ? X86_TLB_FLUSH : 0;
	default:
		return 0;
	}
}

unsigned x86_insn_classify(const uint8_t *bytes, size_t len)
{
	unsigned flags = 0;
	bool opsize = false, rep = false;
	size_t i = 0;
	uint8_t op, rex = 0;

	while (i < len && legacy_prefix(bytes[i])) {
		if (bytes[i] == PFX_LOCK)
			flags |= X86_LOCKED;
		if (bytes[i] == PFX_REP)
			rep = true;
		if (bytes[i] == PFX_OPSIZE)
			opsize = true;
		i++;
	}
	if (i < len && (bytes[i] & 0xf0) == 0x40)	/* REX */
		rex = bytes[i++];
	if (i >= len)
		return 0;
	op = bytes[i++];
	if (op == VEX2 || op == VEX3) {
		/* In 64-bit mode C4/C5 are always VEX. */
		size_t vex_len = op == VEX2 ? 1 : 2;

		if (i + vex_len >= len)
			return 0;
		if (op == VEX3 && (bytes[i] & 0x1f) != VEX_MAP_0F)
			return 0;
		i += vex_len;
		op = bytes[i++];
		if (op == 0x2b || op == 0xe7)
			return classify_0f(op, bytes, i, len, false);
		return 0;
	}
	if (rep && op == OP_NOP && !(rex & REX_B))
		return flags | X86_PAUSE;
	if (rep && (op == OP_MOVSB || op == OP_MOVS || op == OP_STOSB ||
		    op == OP_STOS))
		return flags | X86_REP_STRING;
	if (op == 0x86 || op == 0x87) {	/* xchg: locked with memory */
		if (i < len && MODRM_MOD(bytes[i]) != MOD_REGISTER)
			flags |= X86_LOCKED;
		return flags;
	}
	if (op == ESCAPE_0F && i < len) {
		op = bytes[i++];
		return flags | classify_0f(op, bytes, i, len, opsize);
	}
	return flags;
}
