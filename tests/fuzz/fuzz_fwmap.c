/*
 * libFuzzer harness for the firmware memory map sanitiser (mm/fwmap.c).
 *
 * Input: one byte of map capacity (1..MAX_CAP), one byte of flags
 * (bit 0: print problems and the map, as the kernel does; else quiet),
 * then the raw firmware entries, 20 bytes each as in multiboot2's tag
 * (base, length, type; little-endian), at most BOOT_MAX_MMAP of them,
 * except that the last RESERVATIONS x 20 bytes, when the input has them,
 * are the carve-outs the kernel makes next (low memory, kernel image,
 * boot information), each as base and length (the type bytes unused).
 *
 * The map's storage is a heap array of exactly its capacity, so ASan
 * catches any write past it. After sanitising and reserving, the map's
 * invariants are checked: sorted, non-overlapping, no empty entry, no two
 * adjacent entries of one type, known types only; and every usable range
 * is page aligned, non-empty, ascending and inside an available entry.
 */
// HOST_SRCS: mm/fwmap.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/multiboot2.h"
#include "lib/assert.h"
#include "mm/fwmap.h"
#include "mm/page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CAP 64
#define RAW_ENTRY_LEN 20	/* u64 base, u64 length, u32 type */
#define RESERVATIONS 3
#define HEADER_LEN 2
#define FLAG_VERBOSE 0x01

static const uint32_t reserve_types[RESERVATIONS] = {
	FWMAP_LOWMEM, FWMAP_KERNEL, FWMAP_BOOTINFO,
};

static void read_entry(const uint8_t *p, struct fwmap_entry *e)
{
	memcpy(&e->base, p, sizeof(e->base));
	memcpy(&e->len, p + 8, sizeof(e->len));
	memcpy(&e->type, p + 16, sizeof(e->type));
}

static bool known_type(uint32_t t)
{
	return (t >= FWMAP_AVAILABLE && t <= FWMAP_BAD) ||
	       (t >= FWMAP_LOWMEM && t <= FWMAP_BOOTALLOC);
}

static void check_map(const struct fwmap *map)
{
	const struct fwmap_entry *e = map->entries;
	uint64_t b, en, last_end = 0, total = 0;
	size_t it = 0, j = 0;
	bool first = true;

	kassert(map->n <= map->cap);
	for (size_t i = 0; i < map->n; i++) {
		kassert(e[i].len > 0);
		kassert(e[i].len <= UINT64_MAX - e[i].base);
		kassert(known_type(e[i].type));
		if (i > 0) {
			kassert(e[i - 1].base + e[i - 1].len <= e[i].base);
			kassert(e[i - 1].base + e[i - 1].len < e[i].base ||
				e[i - 1].type != e[i].type);
		}
	}
	while (fwmap_next_usable(map, &it, &b, &en)) {
		kassert(b < en);
		kassert(b % PAGE_SIZE == 0 && en % PAGE_SIZE == 0);
		kassert(first || b >= last_end);
		first = false;
		last_end = en;
		total += en - b;
		while (j < map->n && e[j].base + e[j].len < en)
			j++;
		kassert(j < map->n && e[j].type == FWMAP_AVAILABLE);
		kassert(e[j].base <= b && en <= e[j].base + e[j].len);
	}
	kassert(total == fwmap_usable_bytes(map));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fwmap_entry *raw, *storage;
	struct fwmap map;
	size_t nraw, cap, body;
	bool reserve;

	if (size < HEADER_LEN)
		return 0;
	cap = (size_t)data[0] % MAX_CAP + 1;
	body = size - HEADER_LEN;
	reserve = body >= RESERVATIONS * RAW_ENTRY_LEN;
	if (reserve)
		body -= RESERVATIONS * RAW_ENTRY_LEN;
	nraw = body / RAW_ENTRY_LEN;
	if (nraw > BOOT_MAX_MMAP)
		nraw = BOOT_MAX_MMAP;
	raw = malloc((nraw ? nraw : 1) * sizeof(*raw));
	storage = malloc(cap * sizeof(*storage));
	if (!raw || !storage)
		goto out;
	for (size_t i = 0; i < nraw; i++)
		read_entry(data + HEADER_LEN + i * RAW_ENTRY_LEN, &raw[i]);

	fwmap_init(&map, storage, cap);
	map.quiet = !(data[1] & FLAG_VERBOSE);
	fwmap_sanitize(&map, raw, nraw);
	check_map(&map);
	if (reserve) {
		const uint8_t *r = data + size - RESERVATIONS * RAW_ENTRY_LEN;

		for (size_t i = 0; i < RESERVATIONS; i++) {
			struct fwmap_entry res;

			read_entry(r + i * RAW_ENTRY_LEN, &res);
			fwmap_reserve(&map, res.base, res.len,
				       reserve_types[i]);
			check_map(&map);
		}
	}
	if (!map.quiet)
		fwmap_dump(&map);
out:
	free(raw);
	free(storage);
	return 0;
}
