/*
 * ramfs_page_backend (see ramfs_pages.h).
 */
#include "mm/page_alloc.h"
#include "workloads/ramfs_pages.h"

const struct ramfs_backend ramfs_page_backend = {
	page_alloc,
	page_free,
	true,
};
