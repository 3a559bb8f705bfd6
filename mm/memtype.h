/*
 * Memory types: what a mapping asks of the caches (write-back, write-
 * combining, uncached, ...), by name. mm/ speaks only these: vm_map(),
 * vm_set_memtype() and set_memory_type() take an enum memtype, and the
 * arch code turns it into paging-entry bits (arch/x86_64/pat_layout.h)
 * and knows how the MTRRs modify it (arch/x86_64/mtrr.h).
 *
 * The values are the x86 encodings (Intel SDM vol. 3A, "Memory Cache
 * Control"), so the arch code stores them as they are; a port would map
 * them to its own attributes. Seed 000 maps trace buffers WB, WC, UC or
 * WT on request: this is the vocabulary of that request.
 */
#ifndef MM_MEMTYPE_H
#define MM_MEMTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Architectural memory-type encodings (SDM "Memory Types That Can Be
 * Encoded in MTRRs" and "Memory Types That Can Be Encoded With PAT").
 * 2 and 3 are reserved everywhere; 7 (UC-) exists only in the PAT.
 */
enum memtype {
	MEMTYPE_UC = 0,		/* uncacheable, strongly ordered */
	MEMTYPE_WC = 1,		/* write-combining: uncached, writes buffered */
	MEMTYPE_WT = 4,		/* write-through */
	MEMTYPE_WP = 5,		/* write-protected */
	MEMTYPE_WB = 6,		/* write-back */
	MEMTYPE_UC_MINUS = 7,	/* UC, but an MTRR WC may override it */
	/* Not an encoding: a reserved value or an undefined combination. */
	MEMTYPE_UNDEFINED = 0xff,
};

/* Number of distinct memory types (UC, WC, WT, WP, WB, UC-). */
#define MEMTYPE_COUNT 6
/* The six types in a fixed order, for callers that iterate over them. */
extern const enum memtype memtype_all[MEMTYPE_COUNT];

/* True for the six encodings above (not for reserved values). */
bool memtype_valid(unsigned int encoding);
/* "WB", "WC", "UC-", "UC", "WP", "WT"; "undefined" for anything else. */
const char *memtype_name(enum memtype t);
/*
 * Parse a name as printed by memtype_name() (case-insensitive; "UC_MINUS"
 * is accepted for UC-). Returns MEMTYPE_UNDEFINED when unknown.
 */
enum memtype memtype_from_name(const char *name);

#endif
