/*
 * Kernel command-line options: the kernel's own table, the experiments'
 * declared options (OPTION_* in kernel/options.h), typed parsing, clear
 * messages. Portable (no hardware access), so it is also tested on the
 * host.
 *
 * The kernel's own options:
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
 *
 * Declared by the experiments that read them (`run=list` shows them):
 * trace.memtype=, trace.export=, trace.crash= (experiments/trace_export.c),
 * pcache.latency= (experiments/pagecache_splice.c).
 */
#include <stddef.h>
#include "kernel/options.h"
#include "lib/cmdline.h"
#include "lib/kprintf.h"
#include "lib/string.h"

struct kernel_options kopt;

static const char *const exit_names[] = {"qemu", "halt", "reboot", NULL};
/* Indexed by enum experiment_mode. */
static const char *const runmode_names[] = {"quick", "full", NULL};
const char *const crash_kind_names[] = {"none",   "pf",	"ud",
					"gp",	  "assert", "triple",
					"hang",	  "stack",  NULL};

/* The experiments' options (none in a host program that declares none). */
extern const struct option_desc __start_experiment_options[]
	__attribute__((weak));
extern const struct option_desc __stop_experiment_options[]
	__attribute__((weak));

/* One of the kernel's own options, a field of kopt. */
#define KOPT(name, type, field, choices, min, max, help)                   \
	{name, type, &kopt.field, choices, min, max, help, NULL, 0, NULL}

static const struct option_desc options[] = {
	KOPT("console", OPT_CONSOLES, consoles, NULL, 0, 0,
	 "consoles to use: serial,vga,fb"),
	KOPT("exit", OPT_ENUM, exit, exit_names, 0, 0,
	 "at the end: qemu (debug-exit port), halt or reboot"),
	KOPT("ktest", OPT_STRING, ktest, NULL, 0, 0,
	 "in-kernel test suites: all, none or SUITE[,SUITE]"),
	KOPT("run", OPT_STRING, run, NULL, 0, 0,
	 "experiments: default, all, none, list or NAME[,NAME]"),
	KOPT("maxcpus", OPT_UINT, maxcpus, NULL, 1, MAX_CPUS,
	 "use at most this many CPUs"),
	KOPT("nosmp", OPT_FLAG, nosmp, NULL, 0, 0,
	 "boot CPU only (same as maxcpus=1)"),
	KOPT("loglevel", OPT_UINT, loglevel, NULL, 0, 7,
	 "0 quiet .. 7 debug"),
	KOPT("crash", OPT_ENUM, crash, crash_kind_names, 0, 0,
	 "deliberate failure, for testing the panic path"),
	KOPT("poison", OPT_FLAG, poison, NULL, 0, 0,
	 "fill freed pages with a pattern"),
	KOPT("icount", OPT_FLAG, icount, NULL, 0, 0,
	 "QEMU -icount: TSC ticks count instructions (make ICOUNT=1)"),
	KOPT("cachemodel", OPT_STRING, cachemodel, NULL, 0, 0,
	 "QEMU runs the cache-model plugin with this profile (make MODEL=)"),
	KOPT("cachemodel.caches", OPT_STRING, cachemodel_caches, NULL, 0, 0,
	 "the profile's caches, l1d:BYTES:WAYS,llc:BYTES:WAYS (make MODEL=)"),
	KOPT("shell", OPT_FLAG, shell, NULL, 0, 0,
	 "interactive shell after tests and runs (serial and keyboard)"),
	KOPT("runmode", OPT_ENUM, runmode, runmode_names, 0, 0,
	 "experiment size: quick (tests, make run) or full (make bench)"),
	KOPT("cpuhole", OPT_UINT, cpuhole, NULL, 1, MAX_CPUS - 1,
	 "test: do not start the AP that would get this CPU number, as if "
	 "it did not answer (online CPU numbers then have a gap)"),
	KOPT("nopcid", OPT_FLAG, nopcid, NULL, 0, 0,
	 "do not tag TLB entries with PCIDs"),
	KOPT("tlb.ceiling", OPT_UINT, tlb_ceiling, NULL, 1, OPT_TLB_CEILING_MAX,
	 "range flushes up to this many pages go page by page (default 33)"),
	KOPT("profile", OPT_UINT, profile, NULL, 0, 1,
	 "1: sample every experiment with the LAPIC timer, report the top "
	 "functions"),
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
	for (const struct option_desc *o = __start_experiment_options;
	     o < __stop_experiment_options; o++) {
		if (o->type == OPT_STRING)
			strlcpy(o->field, o->def_string, OPT_STRING_MAX);
		else if (o->type == OPT_ENUM)
			*(int *)o->field = (int)o->def;
		else if (o->type == OPT_FLAG)
			*(bool *)o->field = false;
		else
			*(unsigned *)o->field = o->def;
	}
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
	void *field = o->field;
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

/* The option t names, from the kernel's table or an experiment's. */
static const struct option_desc *find(const struct cmdline_token *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (cmdline_eq(t->key, t->key_len, options[i].name))
			return &options[i];
	for (const struct option_desc *o = __start_experiment_options;
	     o < __stop_experiment_options; o++)
		if (cmdline_eq(t->key, t->key_len, o->name))
			return o;
	return NULL;
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
		o = find(&t);
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
	if (kopt.cpuhole)
		kprintf(" cpuhole=%u", kopt.cpuhole);
	for (const struct option_desc *o = __start_experiment_options;
	     o < __stop_experiment_options; o++) {
		if (o->type == OPT_UINT && *(unsigned *)o->field != o->def)
			kprintf(" %s=%u", o->name, *(unsigned *)o->field);
		else if (o->type == OPT_ENUM &&
			 *(int *)o->field != (int)o->def)
			kprintf(" %s=%s", o->name,
				o->choices[*(int *)o->field]);
		else if (o->type == OPT_STRING &&
			 strcmp(o->field, o->def_string) != 0)
			kprintf(" %s=%s", o->name, (const char *)o->field);
	}
	kprintf("\n");
}

void options_list_experiment_options(void)
{
	kprintf("experiment options (on the command line, NAME=VALUE):\n");
	for (const struct option_desc *o = __start_experiment_options;
	     o < __stop_experiment_options; o++) {
		kprintf("  %-14s %s=", o->owner, o->name);
		if (o->type == OPT_UINT)
			kprintf("%u..%u", o->min, o->max);
		else if (o->type == OPT_ENUM)
			for (unsigned i = 0; o->choices[i]; i++)
				kprintf("%s%s", i ? "|" : "", o->choices[i]);
		else
			kprintf("STRING");
		kprintf(": %s\n", o->help);
	}
}
