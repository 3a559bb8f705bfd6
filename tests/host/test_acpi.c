/*
 * Host tests for kernel/acpi.c: synthetic ACPI tables in a fake physical
 * address space. The fake map hands out a fresh heap copy of exactly the
 * bytes asked for, so ASan catches any read past what the parser mapped.
 * Table layouts are written here from the spec's byte offsets, not from
 * the parser's structs, so a wrong offset in either shows up as a failure.
 */
// HOST_SRCS: kernel/acpi.c kernel/acpi_madt.c kernel/acpi_report.c mm/fwmap.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi.h"
#include "lib/ktest.h"
#include "mm/fwmap.h"

/* ---- Fake physical memory ----------------------------------------------- */

#define LOW_BASE	0x0ull		/* BDA (EBDA segment at 0x40E) */
#define LOW_SIZE	0x1000u
#define EBDA_BASE	0x9fc00ull
#define EBDA_SIZE	0x400u
#define ROM_BASE	0xe0000ull
#define ROM_SIZE	0x20000u
#define TBL_BASE	0x7fe0000ull
#define TBL_SIZE	0x10000u
#define HIGH_BASE	0x100000000ull	/* above 4 GiB: XSDT-only targets */
#define HIGH_SIZE	0x1000u
#define UNMAPPED	0x50000000ull
#define KERN_BASE	0x200000ull	/* "kernel image" in the guarded map */
#define KERN_SIZE	0x1000u
#define RAM_BASE	0x1000000ull	/* usable RAM in the guarded map */
#define RAM_SIZE	0x1000u

#define MAX_COPIES	4096

struct region {
	uint64_t base;
	size_t size;
	uint8_t *buf;
};

struct env {
	struct region low, ebda, rom, tbl, high, kern, ram;
	uint64_t tbl_next;	/* bump allocator in the table region */
	unsigned int maps_refused;
};

/*
 * Backing store and map copies live in globals, so a test that stops early
 * on an ASSERT leaves them reachable (no leak report) and the next
 * env_init() reclaims them.
 */
static uint8_t low_mem[LOW_SIZE], ebda_mem[EBDA_SIZE], rom_mem[ROM_SIZE];
static uint8_t tbl_mem[TBL_SIZE], high_mem[HIGH_SIZE];
static uint8_t kern_mem[KERN_SIZE], ram_mem[RAM_SIZE];
static void *copies[MAX_COPIES];
static unsigned int ncopies;

static struct region *find_region(struct env *e, uint64_t phys, size_t len)
{
	struct region *all[] = { &e->low, &e->ebda, &e->rom, &e->tbl,
				 &e->high, &e->kern, &e->ram };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct region *r = all[i];

		if (phys >= r->base && len <= r->size &&
		    phys - r->base <= r->size - len)
			return r;
	}
	return NULL;
}

/* Exact-size heap copy: ASan reports any read beyond len. */
static const void *fake_map(uint64_t phys, size_t len, void *arg)
{
	struct env *e = arg;
	struct region *r = find_region(e, phys, len);
	void *copy;

	if (!r || ncopies >= MAX_COPIES) {
		e->maps_refused++;
		return NULL;
	}
	copy = malloc(len);
	memcpy(copy, r->buf + (phys - r->base), len);
	copies[ncopies++] = copy;
	return copy;
}

static uint8_t *phys_ptr(struct env *e, uint64_t phys)
{
	struct region *r = find_region(e, phys, 1);

	return r ? r->buf + (phys - r->base) : NULL;
}

static void env_free(struct env *e)
{
	(void)e;
	for (unsigned int i = 0; i < ncopies; i++)
		free(copies[i]);
	ncopies = 0;
}

static void env_init(struct env *e)
{
	env_free(e);
	memset(e, 0, sizeof(*e));
	memset(low_mem, 0, sizeof(low_mem));
	memset(ebda_mem, 0, sizeof(ebda_mem));
	memset(rom_mem, 0, sizeof(rom_mem));
	memset(tbl_mem, 0, sizeof(tbl_mem));
	memset(high_mem, 0, sizeof(high_mem));
	memset(kern_mem, 0, sizeof(kern_mem));
	memset(ram_mem, 0, sizeof(ram_mem));
	e->low = (struct region){ LOW_BASE, LOW_SIZE, low_mem };
	e->ebda = (struct region){ EBDA_BASE, EBDA_SIZE, ebda_mem };
	e->rom = (struct region){ ROM_BASE, ROM_SIZE, rom_mem };
	e->tbl = (struct region){ TBL_BASE, TBL_SIZE, tbl_mem };
	e->high = (struct region){ HIGH_BASE, HIGH_SIZE, high_mem };
	e->kern = (struct region){ KERN_BASE, KERN_SIZE, kern_mem };
	e->ram = (struct region){ RAM_BASE, RAM_SIZE, ram_mem };
	e->tbl_next = TBL_BASE;
}

/* ---- Byte-level table builders (spec offsets) --------------------------- */

#define HDR_LEN		36
#define HDR_LENGTH_OFF	4
#define HDR_REV_OFF	8
#define HDR_CSUM_OFF	9
#define HDR_OEM_OFF	10

static void put16(uint8_t *p, size_t off, uint16_t v)
{
	p[off] = (uint8_t)v;
	p[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, size_t off, uint32_t v)
{
	put16(p, off, (uint16_t)v);
	put16(p, off + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, size_t off, uint64_t v)
{
	put32(p, off, (uint32_t)v);
	put32(p, off + 4, (uint32_t)(v >> 32));
}

/* Make the len bytes at p sum to zero by setting the byte at csum_off. */
static void fix_csum(uint8_t *p, size_t len, size_t csum_off)
{
	uint8_t sum = 0;

	p[csum_off] = 0;
	for (size_t i = 0; i < len; i++)
		sum += p[i];
	p[csum_off] = (uint8_t)-sum;
}

static void fill_header(uint8_t *p, const char *sig, uint32_t len,
			uint8_t rev)
{
	memcpy(p, sig, 4);
	put32(p, HDR_LENGTH_OFF, len);
	p[HDR_REV_OFF] = rev;
	memcpy(p + HDR_OEM_OFF, "TESTOE", 6);
	memcpy(p + 16, "TESTTBL ", 8);
	put32(p, 24, 1);
	put32(p, 28, 0x54455354);
	put32(p, 32, 1);
	fix_csum(p, len, HDR_CSUM_OFF);
}

/* Copy a table image into fake memory at a fresh 16-aligned address. */
static uint64_t install(struct env *e, const uint8_t *img, size_t len)
{
	uint64_t phys = e->tbl_next;

	memcpy(phys_ptr(e, phys), img, len);
	e->tbl_next = (phys + len + 15) & ~15ull;
	return phys;
}

/* Header + body in img (len bytes total): fill header, install. */
static uint64_t table(struct env *e, const char *sig, uint8_t rev,
		      uint8_t *img, size_t len)
{
	fill_header(img, sig, (uint32_t)len, rev);
	return install(e, img, len);
}

/* Root table of n entries of entry_len bytes. */
static uint64_t root(struct env *e, const char *sig, const uint64_t *ents,
		     size_t n)
{
	size_t elen = sig[0] == 'X' ? 8 : 4;
	uint8_t img[HDR_LEN + 16 * 8] = { 0 };

	for (size_t i = 0; i < n; i++) {
		if (elen == 8)
			put64(img, HDR_LEN + i * 8, ents[i]);
		else
			put32(img, HDR_LEN + i * 4, (uint32_t)ents[i]);
	}
	return table(e, sig, 1, img, HDR_LEN + n * elen);
}

#define RSDP_V1_LEN	20
#define RSDP_V2_LEN	36

static void make_rsdp(uint8_t *p, uint8_t rev, uint32_t rsdt, uint64_t xsdt)
{
	memset(p, 0, RSDP_V2_LEN);
	memcpy(p, "RSD PTR ", 8);
	memcpy(p + 9, "TESTOE", 6);
	p[15] = rev;
	put32(p, 16, rsdt);
	if (rev >= 2) {
		put32(p, 20, RSDP_V2_LEN);
		put64(p, 24, xsdt);
	}
	/* The extended checksum covers byte 8, so it is fixed last. */
	fix_csum(p, RSDP_V1_LEN, 8);
	if (rev >= 2)
		fix_csum(p, RSDP_V2_LEN, 32);
}

/* MADT entries. */
static size_t ent_lapic(uint8_t *p, uint8_t uid, uint8_t id, uint32_t flags)
{
	p[0] = 0;
	p[1] = 8;
	p[2] = uid;
	p[3] = id;
	put32(p, 4, flags);
	return 8;
}

static size_t ent_ioapic(uint8_t *p, uint8_t id, uint32_t addr, uint32_t gsi)
{
	p[0] = 1;
	p[1] = 12;
	p[2] = id;
	p[3] = 0;
	put32(p, 4, addr);
	put32(p, 8, gsi);
	return 12;
}

static size_t ent_override(uint8_t *p, uint8_t irq, uint32_t gsi,
			   uint16_t flags)
{
	p[0] = 2;
	p[1] = 10;
	p[2] = 0;
	p[3] = irq;
	put32(p, 4, gsi);
	put16(p, 8, flags);
	return 10;
}

static size_t ent_lapic_nmi(uint8_t *p, uint8_t uid, uint16_t flags,
			    uint8_t lint)
{
	p[0] = 4;
	p[1] = 6;
	p[2] = uid;
	put16(p, 3, flags);
	p[5] = lint;
	return 6;
}

static size_t ent_lapic_addr(uint8_t *p, uint64_t addr)
{
	p[0] = 5;
	p[1] = 12;
	put16(p, 2, 0);
	put64(p, 4, addr);
	return 12;
}

static size_t ent_x2apic(uint8_t *p, uint32_t id, uint32_t flags,
			 uint32_t uid)
{
	p[0] = 9;
	p[1] = 16;
	put16(p, 2, 0);
	put32(p, 4, id);
	put32(p, 8, flags);
	put32(p, 12, uid);
	return 16;
}

static size_t ent_x2apic_nmi(uint8_t *p, uint16_t flags, uint32_t uid,
			     uint8_t lint)
{
	p[0] = 0xa;
	p[1] = 12;
	put16(p, 2, flags);
	put32(p, 4, uid);
	p[8] = lint;
	return 12;
}

#define MADT_HDR_LEN	44
#define LAPIC_PHYS	0xfee00000u
#define LAPIC_OVERRIDE	0xfee10000ull

static size_t madt_start(uint8_t *p, uint32_t lapic)
{
	put32(p, 36, lapic);
	put32(p, 40, 1);	/* PCAT_COMPAT */
	return MADT_HDR_LEN;
}

/* The MADT of the "full" machine. */
static size_t full_madt(uint8_t *m, bool with_override)
{
	size_t n = madt_start(m, LAPIC_PHYS);

	n += ent_lapic(m + n, 0, 0, ACPI_CPU_ENABLED);
	n += ent_lapic(m + n, 1, 1, ACPI_CPU_ENABLED);
	n += ent_lapic(m + n, 2, 2, ACPI_CPU_ONLINE_CAPABLE);
	n += ent_lapic(m + n, 3, 3, 0);				/* unusable */
	n += ent_x2apic(m + n, 300, ACPI_CPU_ENABLED, 4);
	n += ent_x2apic(m + n, 1, ACPI_CPU_ENABLED, 1);		/* duplicate */
	n += ent_ioapic(m + n, 2, 0xfec00000u, 0);
	n += ent_override(m + n, 0, 2, 0);
	n += ent_override(m + n, 9, 9, 0xd);
	n += ent_lapic_nmi(m + n, 0xff, 0, 1);
	n += ent_x2apic_nmi(m + n, 5, 300, 1);
	if (with_override)
		n += ent_lapic_addr(m + n, LAPIC_OVERRIDE);
	return n;
}

/* FADT offsets (ACPI 6.5 table 5.9). */
#define FADT_DSDT		40
#define FADT_PM_TMR_BLK		76
#define FADT_PM_TMR_LEN		91
#define FADT_CENTURY		108
#define FADT_BOOT_ARCH		109
#define FADT_FLAGS		112
#define FADT_RESET_REG		116
#define FADT_RESET_VALUE	128
#define FADT_X_DSDT		140
#define FADT_X_PM_TMR_BLK	208
#define FADT_LEN_V6		276
#define FADT_LEN_V1		116
#define FADT_TMR_VAL_EXT	(1u << 8)
#define FADT_RESET_REG_SUP	(1u << 10)

static void put_gas(uint8_t *p, size_t off, uint8_t space, uint8_t width,
		    uint64_t addr)
{
	p[off] = space;
	p[off + 1] = width;
	p[off + 2] = 0;
	p[off + 3] = 1;
	put64(p, off + 4, addr);
}

static uint64_t make_dsdt(struct env *e)
{
	uint8_t img[HDR_LEN + 8] = { 0 };

	memcpy(img + HDR_LEN, "\x10\x0b\x5f\x53\x42\x5f", 6); /* AML bytes */
	return table(e, "DSDT", 2, img, sizeof(img));
}

static uint64_t full_fadt(struct env *e)
{
	uint8_t f[FADT_LEN_V6] = { 0 };
	uint64_t dsdt = make_dsdt(e);

	put32(f, FADT_DSDT, (uint32_t)dsdt);
	put32(f, FADT_PM_TMR_BLK, 0x608);
	f[FADT_PM_TMR_LEN] = 4;
	f[FADT_CENTURY] = 0x32;
	put16(f, FADT_BOOT_ARCH, ACPI_BOOT_LEGACY_DEVICES | ACPI_BOOT_8042);
	put32(f, FADT_FLAGS, FADT_TMR_VAL_EXT | FADT_RESET_REG_SUP);
	put_gas(f, FADT_RESET_REG, ACPI_GAS_IO, 8, 0xcf9);
	f[FADT_RESET_VALUE] = 6;
	put64(f, FADT_X_DSDT, dsdt);
	put_gas(f, FADT_X_PM_TMR_BLK, ACPI_GAS_IO, 32, 0xb008);
	return table(e, "FACP", 6, f, sizeof(f));
}

#define HPET_LEN		56
#define HPET_BLOCK_ID		0x8086a201u	/* 3 comparators, 64-bit */
#define HPET_BASE		0xfed00000ull
#define HPET_MIN_TICK		0x37ee

static uint64_t full_hpet(struct env *e)
{
	uint8_t h[HPET_LEN] = { 0 };

	put32(h, 36, HPET_BLOCK_ID);
	put_gas(h, 40, ACPI_GAS_MEMORY, 64, HPET_BASE);
	h[52] = 0;
	put16(h, 53, HPET_MIN_TICK);
	return table(e, "HPET", 1, h, sizeof(h));
}

struct machine {
	uint64_t fadt, madt, hpet, xsdt, rsdt;
	uint8_t rsdp[RSDP_V2_LEN];
};

/* A complete, valid machine: RSDP v2 -> XSDT and RSDT -> FACP, APIC, HPET. */
static void build_full(struct env *e, struct machine *mc)
{
	uint8_t madt[512] = { 0 };
	uint64_t ents[3];

	mc->fadt = full_fadt(e);
	mc->madt = table(e, "APIC", 5, madt, full_madt(madt, true));
	mc->hpet = full_hpet(e);
	ents[0] = mc->fadt;
	ents[1] = mc->madt;
	ents[2] = mc->hpet;
	mc->xsdt = root(e, "XSDT", ents, 3);
	mc->rsdt = root(e, "RSDT", ents, 3);
	make_rsdp(mc->rsdp, 2, (uint32_t)mc->rsdt, mc->xsdt);
}

static int parse_new(struct env *e, struct acpi_info *info,
		     const uint8_t *rsdp)
{
	struct acpi_rsdp_src src = { .mb2_new = rsdp,
				     .mb2_new_len = RSDP_V2_LEN };

	return acpi_parse(info, &src, fake_map, e);
}

static const struct acpi_table *find_table(const struct acpi_info *info,
					   uint64_t phys)
{
	for (unsigned int i = 0; i < info->ntables; i++)
		if (info->tables[i].phys == phys)
			return &info->tables[i];
	return NULL;
}

/* The MADT of full_madt(): checks every decoded value. */
static void check_full_madt(struct ktest_ctx *ctx,
			    const struct acpi_info *info, uint64_t lapic)
{
	EXPECT_TRUE(info->madt_found);
	EXPECT_EQ(info->lapic_addr, lapic);
	EXPECT_EQ(info->madt_flags, 1);
	ASSERT_EQ(info->ncpus, 4);
	EXPECT_EQ(info->cpus_found, 4);
	EXPECT_EQ(info->cpus_disabled, 1);
	EXPECT_EQ(info->cpus[0].apic_id, 0);
	EXPECT_EQ(info->cpus[1].apic_id, 1);
	EXPECT_EQ(info->cpus[1].flags, ACPI_CPU_ENABLED);
	EXPECT_EQ(info->cpus[2].apic_id, 2);
	EXPECT_EQ(info->cpus[2].flags, ACPI_CPU_ONLINE_CAPABLE);
	EXPECT_FALSE(info->cpus[2].x2apic);
	EXPECT_EQ(info->cpus[3].apic_id, 300);
	EXPECT_EQ(info->cpus[3].acpi_uid, 4);
	EXPECT_TRUE(info->cpus[3].x2apic);
	ASSERT_EQ(info->nioapics, 1);
	EXPECT_EQ(info->ioapics[0].id, 2);
	EXPECT_EQ(info->ioapics[0].address, 0xfec00000u);
	EXPECT_EQ(info->ioapics[0].gsi_base, 0);
	ASSERT_EQ(info->noverrides, 2);
	EXPECT_EQ(info->overrides[0].source_irq, 0);
	EXPECT_EQ(info->overrides[0].gsi, 2);
	EXPECT_EQ(info->overrides[1].source_irq, 9);
	EXPECT_EQ(info->overrides[1].gsi, 9);
	EXPECT_EQ(info->overrides[1].flags, 0xd);
	ASSERT_EQ(info->nnmis, 2);
	EXPECT_EQ(info->nmis[0].acpi_uid, ACPI_UID_ALL_X2APIC);
	EXPECT_EQ(info->nmis[0].lint, 1);
	EXPECT_FALSE(info->nmis[0].x2apic);
	EXPECT_EQ(info->nmis[1].acpi_uid, 300);
	EXPECT_EQ(info->nmis[1].flags, 5);
	EXPECT_TRUE(info->nmis[1].x2apic);
}

/* ---- Tests -------------------------------------------------------------- */

static struct acpi_info info;	/* ~10 KiB: keep it off the test stack */

KTEST(acpi, full_v2_xsdt)
{
	struct env e;
	struct machine mc;
	const struct acpi_table *t;

	env_init(&e);
	build_full(&e, &mc);
	ASSERT_EQ(parse_new(&e, &info, mc.rsdp), 0);
	acpi_print(&info);

	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_MB2_NEW);
	EXPECT_EQ(info.rsdp_revision, 2);
	EXPECT_STREQ(info.rsdp_oem_id, "TESTOE");
	EXPECT_TRUE(info.use_xsdt);
	EXPECT_EQ(info.root_phys, mc.xsdt);
	EXPECT_EQ(info.problems, 0);
	/* XSDT, FACP, DSDT (reached from the FADT), APIC, HPET */
	ASSERT_EQ(info.ntables, 5);
	for (unsigned int i = 0; i < info.ntables; i++)
		EXPECT_TRUE(info.tables[i].valid);
	EXPECT_STREQ(info.tables[0].sig, "XSDT");
	EXPECT_STREQ(info.tables[1].sig, "FACP");
	EXPECT_STREQ(info.tables[2].sig, "DSDT");
	t = find_table(&info, mc.madt);
	ASSERT_TRUE(t);
	EXPECT_STREQ(t->sig, "APIC");
	EXPECT_STREQ(t->oem_id, "TESTOE");
	EXPECT_EQ(t->revision, 5);
	EXPECT_STREQ(t->status, "ok");

	check_full_madt(ctx, &info, LAPIC_OVERRIDE);
	EXPECT_TRUE(info.lapic_addr_overridden);

	EXPECT_TRUE(info.fadt_found);
	EXPECT_EQ(info.fadt_revision, 6);
	EXPECT_EQ(info.pm_timer_port, 0xb008);	/* X_PM_TMR_BLK wins */
	EXPECT_TRUE(info.pm_timer_32bit);
	EXPECT_TRUE(info.reset_supported);
	EXPECT_EQ(info.reset_reg.space_id, ACPI_GAS_IO);
	EXPECT_EQ(info.reset_reg.address, 0xcf9);
	EXPECT_EQ(info.reset_value, 6);
	EXPECT_EQ(info.century, 0x32);
	EXPECT_EQ(info.iapc_boot_arch,
		  ACPI_BOOT_LEGACY_DEVICES | ACPI_BOOT_8042);
	EXPECT_EQ(info.dsdt_phys, info.tables[2].phys);

	EXPECT_TRUE(info.hpet_found);
	EXPECT_EQ(info.hpet_base, HPET_BASE);
	EXPECT_EQ(info.hpet_comparators, 3);
	EXPECT_TRUE(info.hpet_64bit);
	EXPECT_EQ(info.hpet_min_tick, HPET_MIN_TICK);
	EXPECT_EQ(info.hpet_pci_vendor, 0x8086);
	env_free(&e);
}

KTEST(acpi, rsdt_only_v1)
{
	struct env e;
	struct machine mc;
	uint8_t rsdp[RSDP_V1_LEN + 16];
	struct acpi_rsdp_src src = { 0 };

	env_init(&e);
	build_full(&e, &mc);
	make_rsdp(rsdp, 0, (uint32_t)mc.rsdt, 0);
	src.mb2_old = rsdp;
	src.mb2_old_len = RSDP_V1_LEN;
	ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_MB2_OLD);
	EXPECT_FALSE(info.use_xsdt);
	EXPECT_EQ(info.root_phys, mc.rsdt);
	EXPECT_EQ(info.problems, 0);
	check_full_madt(ctx, &info, LAPIC_OVERRIDE);
	EXPECT_TRUE(info.fadt_found);
	EXPECT_TRUE(info.hpet_found);
	env_free(&e);
}

KTEST(acpi, new_tag_preferred_bad_new_falls_back)
{
	struct env e;
	struct machine mc;
	uint8_t old[RSDP_V2_LEN];
	struct acpi_rsdp_src src = { 0 };

	env_init(&e);
	build_full(&e, &mc);
	make_rsdp(old, 0, (uint32_t)mc.rsdt, 0);
	src.mb2_new = mc.rsdp;
	src.mb2_new_len = RSDP_V2_LEN;
	src.mb2_old = old;
	src.mb2_old_len = RSDP_V1_LEN;
	ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_MB2_NEW);
	EXPECT_TRUE(info.use_xsdt);

	mc.rsdp[8] ^= 0x55;	/* break the v1 checksum of the new copy */
	ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_MB2_OLD);
	EXPECT_FALSE(info.use_xsdt);
	EXPECT_EQ(info.problems, 1);
	EXPECT_TRUE(info.madt_found);

	/* Good v1 part, bad extended checksum: still usable via the RSDT. */
	make_rsdp(mc.rsdp, 2, (uint32_t)mc.rsdt, mc.xsdt);
	mc.rsdp[32] ^= 0x55;
	src.mb2_old = NULL;
	ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_MB2_NEW);
	EXPECT_FALSE(info.use_xsdt);
	EXPECT_TRUE(info.fadt_found);
	EXPECT_EQ(info.problems, 1);

	/* Tag 14 with the first 20 bytes of a 2.0 RSDP: RSDT, no complaint. */
	make_rsdp(old, 2, (uint32_t)mc.rsdt, mc.xsdt);
	src.mb2_new = NULL;
	src.mb2_old = old;
	src.mb2_old_len = RSDP_V1_LEN;
	ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_MB2_OLD);
	EXPECT_EQ(info.rsdp_revision, 2);
	EXPECT_FALSE(info.use_xsdt);
	EXPECT_EQ(info.problems, 0);
	env_free(&e);
}

KTEST(acpi, bios_scan)
{
	struct env e;
	struct machine mc;
	struct acpi_rsdp_src src = { .bios_scan = true };
	uint64_t phys = 0;
	const uint64_t bad = ROM_BASE + 0x100, good = ROM_BASE + 0x2340;
	const uint64_t in_ebda = EBDA_BASE + 0x40;

	env_init(&e);
	build_full(&e, &mc);

	/* Only a candidate with a broken checksum: not found. */
	memcpy(phys_ptr(&e, bad), mc.rsdp, RSDP_V2_LEN);
	phys_ptr(&e, bad)[8] ^= 1;
	EXPECT_FALSE(acpi_scan_bios(fake_map, &e, &phys));
	EXPECT_EQ(acpi_parse(&info, &src, fake_map, &e), -1);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_NONE);

	/* Misaligned copy (not on a 16-byte boundary) is not looked at. */
	memcpy(phys_ptr(&e, good + 8), mc.rsdp, RSDP_V2_LEN);
	EXPECT_FALSE(acpi_scan_bios(fake_map, &e, &phys));

	memcpy(phys_ptr(&e, good), mc.rsdp, RSDP_V2_LEN);
	ASSERT_TRUE(acpi_scan_bios(fake_map, &e, &phys));
	EXPECT_EQ(phys, good);
	ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	EXPECT_EQ(info.rsdp_source, ACPI_RSDP_BIOS_SCAN);
	EXPECT_EQ(info.rsdp_phys, good);
	EXPECT_TRUE(info.use_xsdt);
	check_full_madt(ctx, &info, LAPIC_OVERRIDE);

	/* The EBDA is searched first. */
	put16(e.low.buf, 0x40e, (uint16_t)(EBDA_BASE >> 4));
	memcpy(phys_ptr(&e, in_ebda), mc.rsdp, RSDP_V2_LEN);
	ASSERT_TRUE(acpi_scan_bios(fake_map, &e, &phys));
	EXPECT_EQ(phys, in_ebda);
	env_free(&e);
}

KTEST(acpi, bad_table_checksum_skipped)
{
	struct env e;
	struct machine mc;
	const struct acpi_table *t;

	env_init(&e);
	build_full(&e, &mc);
	phys_ptr(&e, mc.madt)[HDR_LEN + 2] ^= 0x3c;
	ASSERT_EQ(parse_new(&e, &info, mc.rsdp), 0);
	acpi_print(&info);
	t = find_table(&info, mc.madt);
	ASSERT_TRUE(t);
	EXPECT_FALSE(t->valid);
	EXPECT_STREQ(t->status, "bad checksum");
	EXPECT_STREQ(t->sig, "APIC");
	EXPECT_FALSE(info.madt_found);
	EXPECT_EQ(info.ncpus, 0);
	EXPECT_EQ(info.problems, 1);
	EXPECT_TRUE(info.fadt_found);
	EXPECT_TRUE(info.hpet_found);
	EXPECT_EQ(info.hpet_base, HPET_BASE);
	env_free(&e);
}

KTEST(acpi, truncated_and_oversized_tables)
{
	struct env e;
	struct machine mc;
	const struct acpi_table *t;

	env_init(&e);
	build_full(&e, &mc);
	/* HPET claims 20 bytes: less than its own header. */
	put32(phys_ptr(&e, mc.hpet), HDR_LENGTH_OFF, 20);
	fix_csum(phys_ptr(&e, mc.hpet), 20, HDR_CSUM_OFF);
	/* FADT claims 64 MiB. */
	put32(phys_ptr(&e, mc.fadt), HDR_LENGTH_OFF, 64u << 20);
	ASSERT_EQ(parse_new(&e, &info, mc.rsdp), 0);
	acpi_print(&info);
	t = find_table(&info, mc.hpet);
	ASSERT_TRUE(t);
	EXPECT_FALSE(t->valid);
	EXPECT_STREQ(t->status, "length below header size");
	t = find_table(&info, mc.fadt);
	ASSERT_TRUE(t);
	EXPECT_FALSE(t->valid);
	EXPECT_STREQ(t->status, "length too large");
	EXPECT_FALSE(info.hpet_found);
	EXPECT_FALSE(info.fadt_found);
	EXPECT_EQ(info.problems, 2);
	check_full_madt(ctx, &info, LAPIC_OVERRIDE);
	env_free(&e);
}

/* MADT with two CPUs, then bad_entry (len bytes), then one more CPU. */
static uint64_t madt_with_bad_entry(struct env *e, const uint8_t *bad,
				    size_t len, bool bad_is_last)
{
	uint8_t m[256] = { 0 };
	size_t n = madt_start(m, LAPIC_PHYS);

	n += ent_lapic(m + n, 0, 0, ACPI_CPU_ENABLED);
	n += ent_ioapic(m + n, 1, 0xfec00000u, 0);
	n += ent_lapic(m + n, 1, 1, ACPI_CPU_ENABLED);
	memcpy(m + n, bad, len);
	n += len;
	if (!bad_is_last)
		n += ent_lapic(m + n, 2, 2, ACPI_CPU_ENABLED);
	return table(e, "APIC", 5, m, n);
}

static void run_bad_madt(struct ktest_ctx *ctx, const uint8_t *bad,
			 size_t len, bool bad_is_last, const char *status)
{
	struct env e;
	uint8_t rsdp[RSDP_V2_LEN];
	uint64_t ents[2], madt;
	const struct acpi_table *t;

	env_init(&e);
	madt = madt_with_bad_entry(&e, bad, len, bad_is_last);
	ents[0] = madt;
	ents[1] = full_hpet(&e);
	make_rsdp(rsdp, 2, 0, root(&e, "XSDT", ents, 2));
	ASSERT_EQ(parse_new(&e, &info, rsdp), 0);
	acpi_print(&info);
	t = find_table(&info, madt);
	ASSERT_TRUE(t);
	EXPECT_TRUE(t->valid);
	EXPECT_STREQ(t->status, status);
	EXPECT_TRUE(info.madt_found);
	EXPECT_EQ(info.lapic_addr, LAPIC_PHYS);
	ASSERT_EQ(info.ncpus, 2);	/* the CPU after the bad one is lost */
	EXPECT_EQ(info.cpus[1].apic_id, 1);
	EXPECT_EQ(info.nioapics, 1);
	EXPECT_EQ(info.problems, 1);
	EXPECT_TRUE(info.hpet_found);
	env_free(&e);
}

KTEST(acpi, madt_zero_length_entry)
{
	const uint8_t bad[] = { 1, 0, 0, 0 };

	run_bad_madt(ctx, bad, sizeof(bad), false, "ok, zero-length entry");
}

KTEST(acpi, madt_entry_past_end)
{
	const uint8_t bad[] = { 9, 40, 0, 0, 7, 0, 0, 0 };

	run_bad_madt(ctx, bad, sizeof(bad), true, "ok, entry past end");
}

KTEST(acpi, madt_entry_too_short_for_type)
{
	/* An x2APIC entry needs 16 bytes; this one says 8. */
	const uint8_t bad[] = { 9, 8, 0, 0, 7, 0, 0, 0 };

	run_bad_madt(ctx, bad, sizeof(bad), false, "ok, short entry");
}

KTEST(acpi, madt_stray_byte)
{
	const uint8_t bad[] = { 0 };

	run_bad_madt(ctx, bad, sizeof(bad), true, "ok, truncated entry");
}

KTEST(acpi, unmapped_xsdt_and_entry)
{
	struct env e;
	struct machine mc;
	uint8_t rsdp[RSDP_V2_LEN];
	uint64_t ents[3];
	const struct acpi_table *t;
	uint64_t xsdt;

	env_init(&e);
	build_full(&e, &mc);

	/* XSDT unmapped: fall back to the RSDT. */
	make_rsdp(rsdp, 2, (uint32_t)mc.rsdt, UNMAPPED);
	ASSERT_EQ(parse_new(&e, &info, rsdp), 0);
	EXPECT_FALSE(info.use_xsdt);
	EXPECT_EQ(info.root_phys, mc.rsdt);
	EXPECT_STREQ(info.tables[0].status, "unmapped");
	EXPECT_FALSE(info.tables[0].valid);
	check_full_madt(ctx, &info, LAPIC_OVERRIDE);
	EXPECT_GE(info.problems, 1);
	EXPECT_GT(e.maps_refused, 0);

	/* Neither root mapped: no ACPI, but no crash either. */
	make_rsdp(rsdp, 2, (uint32_t)UNMAPPED, UNMAPPED + 0x1000);
	EXPECT_EQ(parse_new(&e, &info, rsdp), -1);

	/* One XSDT entry unmapped, one whose body runs off mapped memory. */
	ents[0] = UNMAPPED;
	ents[1] = mc.madt;
	ents[2] = HIGH_BASE + HIGH_SIZE - HDR_LEN;
	fill_header(phys_ptr(&e, ents[2]), "SSDT", HDR_LEN, 1);
	put32(phys_ptr(&e, ents[2]), HDR_LENGTH_OFF, 4096);
	xsdt = root(&e, "XSDT", ents, 3);
	make_rsdp(rsdp, 2, 0, xsdt);
	ASSERT_EQ(parse_new(&e, &info, rsdp), 0);
	EXPECT_TRUE(info.use_xsdt);
	t = find_table(&info, UNMAPPED);
	ASSERT_TRUE(t);
	EXPECT_STREQ(t->status, "unmapped");
	t = find_table(&info, ents[2]);
	ASSERT_TRUE(t);
	EXPECT_STREQ(t->status, "body unmapped");
	EXPECT_STREQ(t->sig, "SSDT");
	EXPECT_EQ(info.problems, 2);
	check_full_madt(ctx, &info, LAPIC_OVERRIDE);
	env_free(&e);
}

/* ---- Address checks: the guard with the real fwmap check -------------- */

#define GUARD_PHYS_BITS	40
#define GARBAGE_HIGH	0xdead000000000000ull	/* a broken upper half */

/* The fake machine's memory as the kernel would see it: tables in ACPI
 * memory, BIOS areas reserved, the kernel image carved out of RAM. */
static struct fwmap_entry guard_storage[32];
static struct fwmap guard_fwmap;

static void guard_init(struct acpi_guard *g, struct env *e)
{
	const struct fwmap_entry raw[] = {
		{ 0x0, 0x9fc00, FWMAP_AVAILABLE },
		{ EBDA_BASE, EBDA_SIZE, FWMAP_RESERVED },
		{ ROM_BASE, ROM_SIZE, FWMAP_RESERVED },
		{ 0x100000, TBL_BASE - 0x100000, FWMAP_AVAILABLE },
		{ TBL_BASE, TBL_SIZE, FWMAP_ACPI_RECLAIMABLE },
		{ HIGH_BASE, HIGH_SIZE, FWMAP_ACPI_NVS },
	};

	fwmap_init(&guard_fwmap, guard_storage, 32);
	fwmap_sanitize(&guard_fwmap, raw, sizeof(raw) / sizeof(raw[0]));
	fwmap_reserve(&guard_fwmap, 0, 0x100000, FWMAP_LOWMEM);
	fwmap_reserve(&guard_fwmap, KERN_BASE, KERN_SIZE, FWMAP_KERNEL);
	fwmap_reserve(&guard_fwmap, 1ull << GUARD_PHYS_BITS,
		      UINT64_MAX - (1ull << GUARD_PHYS_BITS),
		      FWMAP_BEYOND_WIDTH);
	memset(g, 0, sizeof(*g));
	g->map = &guard_fwmap;
	g->phys_bits = GUARD_PHYS_BITS;
	g->inner = fake_map;
	g->inner_arg = e;
}

static int parse_guarded(struct acpi_guard *g, struct acpi_info *inf,
			 const uint8_t *rsdp)
{
	struct acpi_rsdp_src src = { .mb2_new = rsdp,
				     .mb2_new_len = RSDP_V2_LEN };

	return acpi_parse(inf, &src, acpi_guarded_map, g);
}

/* Copy the table at phys (in the table region) to dst in fake memory. */
static void copy_table(struct env *e, uint64_t dst, uint64_t phys)
{
	uint32_t len = phys_ptr(e, phys)[HDR_LENGTH_OFF] |
		       (uint32_t)phys_ptr(e, phys)[HDR_LENGTH_OFF + 1] << 8;

	memcpy(phys_ptr(e, dst), phys_ptr(e, phys), len);
}

/*
 * XSDT entries with a garbage upper half, inside the kernel image and in
 * usable RAM: the first two cost their table only (the inner map never
 * sees them, as phys_map() would have mapped them), the third is used.
 */
KTEST(acpi, guard_refuses_bad_entry_addresses)
{
	struct env e;
	struct machine mc;
	struct acpi_guard g;
	uint8_t rsdp[RSDP_V2_LEN];
	uint64_t ents[4];

	env_init(&e);
	build_full(&e, &mc);
	guard_init(&g, &e);
	copy_table(&e, KERN_BASE, mc.madt);
	copy_table(&e, RAM_BASE, mc.hpet);
	ents[0] = mc.fadt;
	ents[1] = GARBAGE_HIGH | mc.madt;
	ents[2] = KERN_BASE;
	ents[3] = RAM_BASE;
	make_rsdp(rsdp, 2, 0, root(&e, "XSDT", ents, 4));
	ASSERT_EQ(parse_guarded(&g, &info, rsdp), 0);
	EXPECT_TRUE(info.use_xsdt);
	EXPECT_TRUE(info.fadt_found);
	EXPECT_EQ(info.pm_timer_port, 0xb008);
	EXPECT_FALSE(info.madt_found);	/* both copies refused */
	EXPECT_TRUE(info.hpet_found);	/* the one in RAM is used */
	EXPECT_EQ(info.hpet_base, HPET_BASE);
	EXPECT_EQ(g.refused, 2);
	EXPECT_EQ(g.suspicious, 2);	/* header, then the whole table */
	EXPECT_EQ(e.maps_refused, 0);	/* nothing bad reached the map */
	EXPECT_EQ(info.problems, 2);
	ASSERT_TRUE(find_table(&info, ents[1]));
	EXPECT_STREQ(find_table(&info, ents[1])->status, "unmapped");
	env_free(&e);
}

/* The RSDP's XSDT address and the FADT's X_DSDT with garbage upper
 * halves: the RSDT takes over, the DSDT is skipped, the FADT stays. */
KTEST(acpi, guard_refuses_bad_xsdt_and_x_dsdt)
{
	struct env e;
	struct machine mc;
	struct acpi_guard g;
	uint8_t rsdp[RSDP_V2_LEN];
	uint8_t *fadt;
	uint64_t ents[1];

	env_init(&e);
	build_full(&e, &mc);
	guard_init(&g, &e);
	make_rsdp(rsdp, 2, (uint32_t)mc.rsdt, GARBAGE_HIGH | mc.xsdt);
	ASSERT_EQ(parse_guarded(&g, &info, rsdp), 0);
	EXPECT_FALSE(info.use_xsdt);
	EXPECT_EQ(info.root_phys, mc.rsdt);
	check_full_madt(ctx, &info, LAPIC_OVERRIDE);
	EXPECT_EQ(g.refused, 1);
	EXPECT_EQ(e.maps_refused, 0);

	fadt = phys_ptr(&e, mc.fadt);
	put64(fadt, FADT_X_DSDT, GARBAGE_HIGH | 0x7fe0000ull);
	fix_csum(fadt, FADT_LEN_V6, HDR_CSUM_OFF);
	ents[0] = mc.fadt;
	make_rsdp(rsdp, 2, 0, root(&e, "XSDT", ents, 1));
	guard_init(&g, &e);
	ASSERT_EQ(parse_guarded(&g, &info, rsdp), 0);
	EXPECT_TRUE(info.fadt_found);
	EXPECT_EQ(info.pm_timer_port, 0xb008);
	EXPECT_EQ(g.refused, 1);
	EXPECT_EQ(e.maps_refused, 0);
	EXPECT_EQ(info.problems, 1);
	env_free(&e);
}

KTEST(acpi, short_old_fadt)
{
	struct env e;
	uint8_t img[FADT_LEN_V1 + 16] = { 0 };
	uint8_t rsdp[RSDP_V2_LEN];
	uint64_t ents[1];

	env_init(&e);
	put32(img, FADT_DSDT, (uint32_t)make_dsdt(&e));
	put32(img, FADT_PM_TMR_BLK, 0x808);
	img[FADT_PM_TMR_LEN] = 4;
	img[FADT_CENTURY] = 0x32;
	put32(img, FADT_FLAGS, FADT_TMR_VAL_EXT | FADT_RESET_REG_SUP);
	/* Past the 116-byte table: must never be read. */
	put_gas(img, FADT_RESET_REG, ACPI_GAS_IO, 8, 0xcf9);
	img[FADT_RESET_VALUE] = 6;
	fill_header(img, "FACP", FADT_LEN_V1, 1);
	ents[0] = install(&e, img, sizeof(img));
	make_rsdp(rsdp, 0, (uint32_t)root(&e, "RSDT", ents, 1), 0);
	{
		struct acpi_rsdp_src src = { .mb2_old = rsdp,
					     .mb2_old_len = RSDP_V1_LEN };

		ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	}
	acpi_print(&info);
	EXPECT_TRUE(info.fadt_found);
	EXPECT_EQ(info.fadt_length, FADT_LEN_V1);
	EXPECT_EQ(info.pm_timer_port, 0x808);
	EXPECT_TRUE(info.pm_timer_32bit);
	EXPECT_FALSE(info.reset_supported);
	EXPECT_EQ(info.reset_reg.address, 0);
	EXPECT_EQ(info.century, 0x32);
	EXPECT_EQ(info.iapc_boot_arch, 0);	/* reserved in revision 1 */
	EXPECT_NE(info.dsdt_phys, 0);
	EXPECT_FALSE(info.madt_found);
	EXPECT_EQ(info.problems, 0);

	/* A FADT that is nothing but a header and one field. */
	memset(img, 0, sizeof(img));
	put32(img, FADT_PM_TMR_BLK, 0x808);
	fill_header(img, "FACP", HDR_LEN + 4, 1);
	ents[0] = install(&e, img, HDR_LEN + 4);
	make_rsdp(rsdp, 0, (uint32_t)root(&e, "RSDT", ents, 1), 0);
	{
		struct acpi_rsdp_src src = { .mb2_old = rsdp,
					     .mb2_old_len = RSDP_V1_LEN };

		ASSERT_EQ(acpi_parse(&info, &src, fake_map, &e), 0);
	}
	EXPECT_TRUE(info.fadt_found);
	EXPECT_EQ(info.pm_timer_port, 0);
	EXPECT_EQ(info.century, 0);
	EXPECT_EQ(info.dsdt_phys, 0);
	env_free(&e);
}

#define MANY_CPUS	300

KTEST(acpi, more_cpus_than_limit)
{
	struct env e;
	static uint8_t m[MADT_HDR_LEN + MANY_CPUS * 16 + 64];
	uint8_t rsdp[RSDP_V2_LEN];
	uint64_t ents[1];
	size_t n;

	env_init(&e);
	memset(m, 0, sizeof(m));
	n = madt_start(m, LAPIC_PHYS);
	for (uint32_t i = 0; i < MANY_CPUS; i++)
		n += ent_x2apic(m + n, 1000 + i, ACPI_CPU_ENABLED, i);
	n += ent_ioapic(m + n, 7, 0xfec00000u, 0);
	ents[0] = table(&e, "APIC", 5, m, n);
	make_rsdp(rsdp, 2, 0, root(&e, "XSDT", ents, 1));
	ASSERT_EQ(parse_new(&e, &info, rsdp), 0);
	acpi_print(&info);
	EXPECT_EQ(info.ncpus, ACPI_MAX_CPUS);
	EXPECT_EQ(info.cpus_found, MANY_CPUS);
	EXPECT_EQ(info.cpus[0].apic_id, 1000);
	EXPECT_EQ(info.cpus[ACPI_MAX_CPUS - 1].apic_id,
		  1000 + ACPI_MAX_CPUS - 1);
	EXPECT_EQ(info.cpus[ACPI_MAX_CPUS - 1].acpi_uid, ACPI_MAX_CPUS - 1);
	EXPECT_EQ(info.nioapics, 1);	/* entries after the limit still read */
	EXPECT_EQ(info.problems, 1);	/* "kept the first 256" */
	env_free(&e);
}
