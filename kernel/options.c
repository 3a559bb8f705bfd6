/*
 * Kernel command-line options: one table, typed parsing, clear messages.
 * Portable (no hardware access), so it is also tested on the host.
 *
 *   option     type    values                         default
 *   console=   list    serial,vga,fb                  all found
 *   exit=      enum    qemu|halt|reboot               qemu
 *   ktest=     string  all|none|SUITE[,SUITE]         none
 *   run=       string  default|all|none|list|NAME,..  default
 *   maxcpus=   number  1..256                         256
 *   nosmp      flag                                   off
 *   loglevel=  number  0..7 (5: summaries, 6: full report, 7: debug)  6
 *   crash=     enum    none|pf|ud|gp|assert|triple|hang|stack   none
 *   trace.memtype= string WB|WC|UC|UC-|WT, any case (trace_export)  WB
 *   trace.export= number 64..65536 KiB exported by trace_export  256
 *   trace.crash= enum  as crash=, inside trace_export   none
 *   poison     flag    poison freed pages             off
 *   runmode=   enum    quick|full                     quick
 *   icount     flag    QEMU runs with -icount (set by make ICOUNT=1)
 *   cpuhole=   number  1..255: leave that CPU number unstarted (tests)  0
 *   cachemodel= string  the cache-model plugin's profile (make MODEL=)  ""
 *   cachemodel.caches= string  its cache geometry (lib/cache_geometry.h)  ""
 *   nopcid     flag    do not use PCIDs                 off
 *   tlb.ceiling= number 1..4096 pages flushed one by one  33
 *   shell      flag    the interactive shell after the runs  off
 *   profile=   number  1: profile every experiment         0
 *   pcache.latency= number 0..10000 us per page read (pagecache_splice) 0
 */
#include <stddef.h>
#include "kernel/options.h"
#include "lib/cmdline.h"
#include "lib/kprintf.h"
#include "lib/string.h"

struct kernel_options kopt;

enum opt_type { OPT_FLAG, OPT_UINT, OPT_ENUM, OPT_STRING, OPT_CONSOLES };

struct option_desc {
	const char *name;
	enum opt_type type;
	size_t offset;
	const char *const *choices; /* OPT_ENUM: index is the value */
	unsigned min, max; /* OPT_UINT */
	const char *help;
};

static const char *const exit_names[] = {"qemu", "halt", "reboot", NULL};
/* Indexed by enum experiment_mode. */
static const char *const runmode_names[] = {"quick", "full", NULL};
static const char *const crash_names[] = {"none",   "pf",	  "ud",
					  "gp",	    "assert", "triple",
					  "hang",   "stack",  NULL};

#define OFF(field) offsetof(struct kernel_options, field)

static const struct option_desc options[] = {
	{"console", OPT_CONSOLES, OFF(consoles), NULL, 0, 0,
	 "consoles to use: serial,vga,fb"},
	{"exit", OPT_ENUM, OFF(exit), exit_names, 0, 0,
	 "at the end: qemu (debug-exit port), halt or reboot"},
	{"ktest", OPT_STRING, OFF(ktest), NULL, 0, 0,
	 "in-kernel test suites: all, none or SUITE[,SUITE]"},
	{"run", OPT_STRING, OFF(run), NULL, 0, 0,
	 "experiments: default, all, none, list or NAME[,NAME]"},
	{"maxcpus", OPT_UINT, OFF(maxcpus), NULL, 1, MAX_CPUS,
	 "use at most this many CPUs"},
	{"nosmp", OPT_FLAG, OFF(nosmp), NULL, 0, 0,
	 "boot CPU only (same as maxcpus=1)"},
	{"loglevel", OPT_UINT, OFF(loglevel), NULL, 0, 7,
	 "0 quiet .. 7 debug"},
	{"crash", OPT_ENUM, OFF(crash), crash_names, 0, 0,
	 "deliberate failure, for testing the panic path"},
	{"poison", OPT_FLAG, OFF(poison), NULL, 0, 0,
	 "fill freed pages with a pattern"},
	{"icount", OPT_FLAG, OFF(icount), NULL, 0, 0,
	 "QEMU -icount: TSC ticks count instructions (make ICOUNT=1)"},
	{"cachemodel", OPT_STRING, OFF(cachemodel), NULL, 0, 0,
	 "QEMU runs the cache-model plugin with this profile (make MODEL=)"},
	{"cachemodel.caches", OPT_STRING, OFF(cachemodel_caches), NULL, 0, 0,
	 "the profile's caches, l1d:BYTES:WAYS,llc:BYTES:WAYS (make MODEL=)"},
	{"shell", OPT_FLAG, OFF(shell), NULL, 0, 0,
	 "interactive shell after tests and runs (serial and keyboard)"},
	{"runmode", OPT_ENUM, OFF(runmode), runmode_names, 0, 0,
	 "experiment size: quick (tests, make run) or full (make bench)"},
	{"cpuhole", OPT_UINT, OFF(cpuhole), NULL, 1, MAX_CPUS - 1,
	 "test: do not start the AP that would get this CPU number, as if "
	 "it did not answer (online CPU numbers then have a gap)"},
	{"trace.memtype", OPT_STRING, OFF(trace_memtype), NULL, 0, 0,
	 "trace_export buffer memory type: WB, WC, UC, UC- or WT, any case"},
	{"trace.export", OPT_UINT, OFF(trace_export_kib), NULL, 64, 65536,
	 "trace_export: flight-recorder KiB exported over serial"},
	{"trace.crash", OPT_ENUM, OFF(trace_crash), crash_names, 0, 0,
	 "trace_export: this crash= failure while recording (panic export)"},
	{"nopcid", OPT_FLAG, OFF(nopcid), NULL, 0, 0,
	 "do not tag TLB entries with PCIDs"},
	{"tlb.ceiling", OPT_UINT, OFF(tlb_ceiling), NULL, 1, OPT_TLB_CEILING_MAX,
	 "range flushes up to this many pages go page by page (default 33)"},
	{"profile", OPT_UINT, OFF(profile), NULL, 0, 1,
	 "1: sample every experiment with the LAPIC timer, report the top "
	 "functions"},
	{"pcache.latency", OPT_UINT, OFF(pcache_latency_us), NULL, 0,
	 OPT_PCACHE_LATENCY_MAX_US,
	 "pagecache_splice: simulated device latency per page read (us)"},
};

static void set_defaults(void)
{
	memset(&kopt, 0, sizeof(kopt));
	kopt.consoles = CONSOLE_ALL;
	kopt.exit = EXIT_QEMU;
	strlcpy(kopt.ktest, "none", sizeof(kopt.ktest));
	strlcpy(kopt.run, "default", sizeof(kopt.run));
	kopt.maxcpus = MAX_CPUS;
	kopt.loglevel = 6;
	kopt.crash = CRASH_NONE;
	strlcpy(kopt.trace_memtype, "WB", sizeof(kopt.trace_memtype));
	kopt.trace_export_kib = 256;
	kopt.trace_crash = CRASH_NONE;
}

static void report(const struct cmdline_token *t, const char *fmt,
		   const char *what)
{
	kprintf("cmdline: option '%.*s': ", (int)t->key_len, t->key);
	kprintf(fmt, what);
	kprintf("; ignored\n");
	kopt.errors++;
}

static void apply(const struct option_desc *o, const struct cmdline_token *t)
{
	void *field = (char *)&kopt + o->offset;
	unsigned long long v;

	if (o->type == OPT_FLAG) {
		if (t->value)
			return report(t, "%s", "is a flag and takes no value");
		*(bool *)field = true;
		return;
	}
	if (!t->value || t->value_len == 0)
		return report(t, "%s", "needs a value");
	switch (o->type) {
	case OPT_UINT:
		if (!cmdline_parse_u64(t->value, t->value_len, &v) ||
		    v < o->min || v > o->max) {
			kprintf("cmdline: option '%s' wants a number %u..%u, "
				"got '%.*s'; ignored\n", o->name, o->min,
				o->max, (int)t->value_len, t->value);
			kopt.errors++;
			return;
		}
		*(unsigned *)field = (unsigned)v;
		return;
	case OPT_ENUM:
		for (unsigned i = 0; o->choices[i]; i++) {
			if (cmdline_eq(t->value, t->value_len, o->choices[i])) {
				*(int *)field = (int)i;
				return;
			}
		}
		kprintf("cmdline: option '%s' does not know '%.*s' (one of:",
			o->name, (int)t->value_len, t->value);
		for (unsigned i = 0; o->choices[i]; i++)
			kprintf(" %s", o->choices[i]);
		kprintf("); ignored\n");
		kopt.errors++;
		return;
	case OPT_STRING:
		if (t->value_len >= OPT_STRING_MAX)
			return report(t, "%s", "value too long");
		memcpy(field, t->value, t->value_len);
		((char *)field)[t->value_len] = '\0';
		return;
	case OPT_CONSOLES: {
		const char *list = t->value, *end = t->value + t->value_len;
		const char *e;
		size_t len;
		unsigned mask = 0;

		while ((e = cmdline_list_next(&list, end, &len))) {
			if (cmdline_eq(e, len, "serial"))
				mask |= CONSOLE_SERIAL;
			else if (cmdline_eq(e, len, "vga"))
				mask |= CONSOLE_VGA;
			else if (cmdline_eq(e, len, "fb"))
				mask |= CONSOLE_FB;
			else {
				kprintf("cmdline: option 'console': unknown "
					"console '%.*s' (serial, vga, fb); "
					"ignored\n", (int)len, e);
				kopt.errors++;
			}
		}
		if (mask)
			*(unsigned *)field = mask;
		return;
	}
	case OPT_FLAG:
		break;
	}
}

unsigned options_parse(const char *line)
{
	struct cmdline_iter it;
	struct cmdline_token t;
	enum cmdline_status st;

	set_defaults();
	cmdline_iter_init(&it, line);
	while ((st = cmdline_next(&it, &t)) != CMDLINE_END) {
		const struct option_desc *o = NULL;

		if (st == CMDLINE_ERROR) {
			kprintf("cmdline: malformed option '%.*s' (%s); "
				"ignored\n", (int)it.error_len, it.error_at,
				it.error);
			kopt.errors++;
			continue;
		}
		for (size_t i = 0; i < sizeof(options) / sizeof(options[0]);
		     i++)
			if (cmdline_eq(t.key, t.key_len, options[i].name))
				o = &options[i];
		if (!o) {
			kprintf("cmdline: unknown option '%.*s'; ignored\n",
				(int)t.key_len, t.key);
			kopt.errors++;
			continue;
		}
		apply(o, &t);
	}
	if (kopt.nosmp)
		kopt.maxcpus = 1;
	return kopt.errors;
}

void options_print(void)
{
	kprintf("options: console=%s%s%s exit=%s ktest=%s run=%s maxcpus=%u "
		"loglevel=%u runmode=%s%s%s%s%s",
		kopt.consoles & CONSOLE_SERIAL ? "serial," : "",
		kopt.consoles & CONSOLE_VGA ? "vga," : "",
		kopt.consoles & CONSOLE_FB ? "fb" : "", exit_names[kopt.exit],
		kopt.ktest, kopt.run, kopt.maxcpus, kopt.loglevel,
		runmode_names[kopt.runmode], kopt.nosmp ? " nosmp" : "",
		kopt.poison ? " poison" : "", kopt.icount ? " icount" : "",
		kopt.nopcid ? " nopcid" : "");
	if (kopt.tlb_ceiling)
		kprintf(" tlb.ceiling=%u", kopt.tlb_ceiling);
	if (kopt.profile)
		kprintf(" profile=%u", kopt.profile);
	if (kopt.pcache_latency_us)
		kprintf(" pcache.latency=%u", kopt.pcache_latency_us);
	if (kopt.cpuhole)
		kprintf(" cpuhole=%u", kopt.cpuhole);
	kprintf("\n");
}
