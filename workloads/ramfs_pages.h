/*
 * ramfs over the kernel's page allocator (mm/page_alloc.h): the backend
 * of every in-kernel ramfs. Host tests bring their own (aligned_alloc).
 */
#ifndef WORKLOADS_RAMFS_PAGES_H
#define WORKLOADS_RAMFS_PAGES_H

#include "workloads/ramfs.h"

/* page_alloc()/page_free(); pages come zeroed. */
extern const struct ramfs_backend ramfs_page_backend;

#endif
