/*
 * Machine profiles: the text format of cachemodel/profiles.txt.
 *
 *   # comment (also after a value)
 *   [core2-2007]                 a profile starts
 *   freq_mhz      2400           one number
 *   l1d           32768 8 3      a level: bytes ways latency
 *
 * Every key of struct cm_profile must be given once per profile, except
 * the optional ones (sfence and the timing mechanisms after it in
 * struct cm_profile), which are 0 when absent; unknown keys, missing
 * keys, repeated keys and numbers that do not fit are errors, reported
 * with the line number.
 */
#ifndef CACHEMODEL_PROFILE_H
#define CACHEMODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include "cachemodel/model.h"

/*
 * Parse profile 'name' out of text (NUL-terminated) into *out and check
 * it with cm_profile_check(). Returns true on success; on failure
 * returns false and writes a one-line reason (with the line number, or
 * the list of known profile names when name is absent) into err.
 */
bool cm_profile_parse(const char *text, const char *name,
		      struct cm_profile *out, char *err, size_t err_size);

#endif
