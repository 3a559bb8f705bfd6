/*
 * Memory types: the names and encodings of mm/memtype.h.
 */
#include "mm/memtype.h"

const enum memtype memtype_all[MEMTYPE_COUNT] = {
	MEMTYPE_WB, MEMTYPE_WC, MEMTYPE_UC_MINUS,
	MEMTYPE_UC, MEMTYPE_WP, MEMTYPE_WT,
};

bool memtype_valid(unsigned int encoding)
{
	switch (encoding) {
	case MEMTYPE_UC:
	case MEMTYPE_WC:
	case MEMTYPE_WT:
	case MEMTYPE_WP:
	case MEMTYPE_WB:
	case MEMTYPE_UC_MINUS:
		return true;
	default:
		return false;
	}
}

const char *memtype_name(enum memtype t)
{
	switch (t) {
	case MEMTYPE_UC:
		return "UC";
	case MEMTYPE_WC:
		return "WC";
	case MEMTYPE_WT:
		return "WT";
	case MEMTYPE_WP:
		return "WP";
	case MEMTYPE_WB:
		return "WB";
	case MEMTYPE_UC_MINUS:
		return "UC-";
	default:
		return "undefined";
	}
}

static char ascii_upper(char c)
{
	return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}

static bool name_eq(const char *a, const char *b)
{
	while (*a && ascii_upper(*a) == ascii_upper(*b)) {
		a++;
		b++;
	}
	return *a == '\0' && *b == '\0';
}

enum memtype memtype_from_name(const char *name)
{
	unsigned int i;

	if (!name)
		return MEMTYPE_UNDEFINED;
	for (i = 0; i < MEMTYPE_COUNT; i++)
		if (name_eq(name, memtype_name(memtype_all[i])))
			return memtype_all[i];
	if (name_eq(name, "UC_MINUS"))
		return MEMTYPE_UC_MINUS;
	return MEMTYPE_UNDEFINED;
}
