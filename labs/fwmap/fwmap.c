/*
 * Lab "fwmap": the firmware map's overlap rule (mm/fwmap.c). The task
 * and hints: docs/labs/12-allocators.md, "Your turn".
 *
 * Write fwmap_insert() below: the one operation through which every
 * firmware entry and every reservation enters the kernel's memory map.
 * `make grade LAB=fwmap` puts it in place of mm/fwmap.c's own (the
 * region between the "lab fwmap/insert: begin" and "end" lines; keep
 * those lines), builds tests/host/test_fwmap.c under ASan and UBSan and
 * scores each check.
 *
 * The map (map->entries[0 .. map->n), room for map->cap) is sorted by
 * base and its entries never overlap: keep it so. What you may use (all
 * in mm/fwmap.c, read them first):
 *   find_from(map, addr)   index of the first entry that ends above addr
 *                          (map->n if none)
 *   put(map, i, base, end, type)   insert [base, end) at index i, where
 *                          it overlaps neither neighbour; merges with a
 *                          same-type neighbour; false if the map is full
 *   override(map, i, cur, seg, type)   give the piece [cur, seg) of
 *                          entry i the new type, splitting the entry
 *   coalesce(map)          merge adjacent entries of the same type
 *   fwmap_rank(type)       the higher rank wins an overlap
 *   entry_end(e), MIN(a, b)
 */

/* lab fwmap/insert: begin */
/*
 * Lay [base, end) of type over the map. Where the range covers no entry,
 * it becomes an entry of its own; where it overlaps an entry, the type of
 * higher fwmap_rank() wins on the overlapping piece (a reserved range
 * over available memory punches a hole; available memory over a reserved
 * range changes nothing). Adjacent entries of one type end up merged.
 *
 * Return: false when a piece had to be dropped because the map is full
 * (put() and override() report it), else true.
 *
 * Hints:
 * - Walk a cursor cur from base to end. At each step find_from(map, cur)
 *   gives the entry e that matters: none left, or e starts at or after
 *   end (the rest is a gap: put it and stop); e starts after cur (a gap
 *   up to e->base: put it); or e covers cur (the piece up to
 *   MIN(entry_end(e), end): override it if type's rank is higher).
 * - put() and override() insert entries: take a fresh index each step,
 *   never keep a pointer across them.
 * - Finish with coalesce(): override() may leave neighbours of one type.
 */
static bool fwmap_insert(struct fwmap *map, uint64_t base, uint64_t end,
			 uint32_t type)
{
	/* TODO: the range is dropped: the map stays empty. */
	(void)map;
	(void)base;
	(void)end;
	(void)type;
	return false;
}
/* lab fwmap/insert: end */
