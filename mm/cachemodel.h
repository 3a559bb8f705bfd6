/*
 * What mm/ tells a cache timing model about memory (docs/cachemodel.md).
 *
 * Under QEMU with the cache-model plugin, the model must know each
 * page's memory type to time its accesses; set_memory_type() reports
 * every change here. The architecture implements this (x86_64: through
 * the model doorbell, arch/x86_64/model_doorbell.c); without a model
 * listening it costs a few loads and changes nothing.
 */
#ifndef MM_CACHEMODEL_H
#define MM_CACHEMODEL_H

#include <stdint.h>
#include "mm/memtype.h"

/*
 * Tell the model that [phys, phys + npages pages) is now mapped with
 * type t (the PAT type; the model is given the effective type, with the
 * MTRRs). Calls made before the model can be told are kept and told
 * later.
 */
void cachemodel_set_type(uint64_t phys, uint64_t npages, enum memtype t);

#endif
