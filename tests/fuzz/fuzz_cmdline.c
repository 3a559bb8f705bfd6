/*
 * libFuzzer harness for the kernel command line: the tokenizer
 * (lib/cmdline.c) and the typed options on top of it (kernel/options.c).
 * The input is the line (NUL-terminated here, as GRUB's tag is). The
 * tokenizer must make progress on every call, keep every token and every
 * error span inside the line, and end; then options_parse() and
 * options_print() run on the same line.
 */
// HOST_SRCS: lib/cmdline.c kernel/options.c lib/string.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/options.h"
#include "lib/assert.h"
#include "lib/cmdline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(const char *line, size_t len, const char *p, size_t n)
{
	return p >= line && n <= len && (size_t)(p - line) <= len - n;
}

static void check_list(const char *v, size_t n)
{
	const char *list = v, *end = v + n, *e;
	size_t len, elements = 0;

	while ((e = cmdline_list_next(&list, end, &len)) != NULL) {
		kassert(e >= v && e + len <= end);
		kassert(++elements <= n + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct cmdline_iter it;
	struct cmdline_token t;
	enum cmdline_status st;
	const char *last;
	unsigned calls = 0;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	cmdline_iter_init(&it, line);
	last = it.p;
	while ((st = cmdline_next(&it, &t)) != CMDLINE_END) {
		unsigned long long num;

		kassert(it.p > last);	/* progress: no endless loop */
		kassert(++calls <= size);
		last = it.p;
		if (st == CMDLINE_ERROR) {
			kassert(it.error != NULL);
			kassert(inside(line, size, it.error_at, it.error_len));
			continue;
		}
		kassert(t.key_len > 0);
		kassert(inside(line, size, t.key, t.key_len));
		if (t.value) {
			kassert(inside(line, size, t.value, t.value_len));
			check_list(t.value, t.value_len);
			(void)cmdline_parse_u64(t.value, t.value_len, &num);
		}
	}
	options_parse(line);
	options_print();
	free(line);
	return 0;
}
