/*
 * The trace_export experiment: run a short workload under the flight
 * recorder (every event on, buffers of memory type trace.memtype=) on
 * every CPU, then send the trace out on the serial port as CTF 1.8
 * (trace/ctf.h framing; tools/results/trace_extract.py LOG DIR rebuilds the
 * directory, babeltrace2 DIR prints it). While it runs, a panic exports
 * what the buffers hold from the panic path (after the other CPUs were
 * stopped: a record they were writing is lost with its packet);
 * trace.crash=pf (any crash= kind) provokes one once the workload ran.
 *
 * trace.export=KiB sizes the flight recorder, so it is what goes over
 * the line: at 115200 baud (8N1, base64 and framing) 1 MiB takes about
 * two and a half minutes; the run prints the estimate first.
 */
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/serial.h"
#include "arch/x86_64/tsc.h"
#include "kernel/experiment.h"
#include "kernel/options.h"
#include "kernel/crash.h"
#include "kernel/panic.h"
#include "kernel/smp_call.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "trace/ctf.h"
#include "trace/trace.h"
#include "workloads/tbench.h"

#define EXPORT_SUBBUF_SHIFT 14 /* 16 KiB packets */
#define EXPORT_MIN_SUBBUF_SHIFT 12
#define METADATA_MAX (16 * 1024)
#define SERIAL_BAUD 115200
#define BITS_PER_SERIAL_BYTE 10 /* 8N1 */
#define BASE64_NUM 4
#define BASE64_DEN 3
#define CPU_CHURN_OBJECTS 64
#define CPU_CHURN_ROUNDS 40
#define STREAM_NAME_MAX 16
#define EXPORT_KIB_MIN 64
#define EXPORT_KIB_MAX 65536
#define EXPORT_KIB_DEFAULT 256

/* The options this experiment reads from the command line. */
static char trace_memtype[OPT_STRING_MAX];
static unsigned trace_export_kib;
static enum crash_kind trace_crash;
OPTION_STRING(trace_memtype, "trace_export", "trace.memtype", trace_memtype,
	      "WB",
	      "buffer memory type: WB, WC, UC, UC- or WT, any "
	      "case");
OPTION_UINT(trace_export, "trace_export", "trace.export", trace_export_kib,
	    EXPORT_KIB_DEFAULT, EXPORT_KIB_MIN, EXPORT_KIB_MAX,
	    "flight-recorder KiB exported over serial");
OPTION_ENUM(trace_crash, "trace_export", "trace.crash", trace_crash,
	    crash_kind_names, CRASH_NONE,
	    "this crash= failure while recording (panic export)");

static void serial_sink(const char *s, size_t n)
{
	serial_write(s, n);
}

/* Flush every buffer and frame metadata plus one stream per CPU. */
static int export_all(void)
{
	unsigned ncpus = trace_nr_cpus();
	static struct ctf_file files[MAX_CPUS + 1];
	static char names[MAX_CPUS][STREAM_NAME_MAX];
	char *meta = kmalloc(METADATA_MAX);
	uint8_t *streams[MAX_CPUS] = {0};
	int rc = 0;

	if (!meta || ncpus == 0) {
		kfree(meta);
		return -1;
	}
	struct rb *rb0 = trace_cpu_buffer(0);
	files[0].name = "metadata";
	files[0].data = meta;
	files[0].bytes = ctf_metadata(meta, METADATA_MAX, rb0->cfg.uuid,
				      tsc_hz());
	for (unsigned c = 0; c < ncpus; c++) {
		struct rb *rb = trace_cpu_buffer(c);
		unsigned long recs, total = 0, packets = 0;

		rb_flush(rb);
		streams[c] = kmalloc(rb->buf_size);
		if (!streams[c]) {
			rc = -1;
			break;
		}
		while (packets < (rb->buf_size >> rb->cfg.subbuf_shift) &&
		       rb_read_packet(rb, streams[c] + packets * rb->subbuf_size,
				      &recs)) {
			packets++;
			total += recs;
		}
		ksnprintf(names[c], STREAM_NAME_MAX, "stream_%u", c);
		files[c + 1].name = names[c];
		files[c + 1].data = streams[c];
		files[c + 1].bytes = packets * rb->subbuf_size;
		kprintf("trace: cpu %u: %lu packets, %lu records exported, "
			"lost %lu (full %lu, too big %lu, nesting %lu, "
			"overwritten %lu)\n", c, packets, total,
			rb_lost_total(rb), rb->lost[RB_LOST_FULL],
			rb->lost[RB_LOST_TOO_BIG], rb->lost[RB_LOST_NESTING],
			rb->lost[RB_LOST_OVERWRITTEN]);
	}
	if (rc == 0) {
		unsigned long chunks = ctf_frame(serial_sink, files, ncpus + 1);

		kprintf("trace: exported %lu chunks over serial\n", chunks);
	}
	for (unsigned c = 0; c < ncpus; c++)
		kfree(streams[c]);
	kfree(meta);
	return rc;
}

static void export_on_panic(void)
{
	kprintf("trace: panic: exporting the flight recorder\n");
	trace_enable_all(false);
	(void)export_all();
}

/* Work for the other CPUs: kmalloc/kfree churn (traced). */
static void cpu_churn(void *arg __unused)
{
	void *p[CPU_CHURN_OBJECTS];

	for (unsigned r = 0; r < CPU_CHURN_ROUNDS; r++) {
		for (unsigned i = 0; i < CPU_CHURN_OBJECTS; i++)
			p[i] = kmalloc(16 + 8 * i);
		for (unsigned i = 0; i < CPU_CHURN_OBJECTS; i++)
			kfree(p[i]);
	}
}

static int trace_export_run(enum experiment_mode mode __unused)
{
	enum memtype type = memtype_from_name(trace_memtype);
	unsigned ncpus = percpu_count();
	uint64_t per_cpu = ((uint64_t)trace_export_kib << 10) / ncpus;
	struct trace_config cfg;
	struct tbench_check ref;
	struct cpumask all;
	unsigned shift;
	int rc;

	if (type == MEMTYPE_UNDEFINED || type == MEMTYPE_WP) {
		kprintf("trace_export: trace.memtype=%s: not a buffer memory "
			"type (WB, WC, UC, UC- or WT)\n", trace_memtype);
		return 1;
	}
	trace_default_config(&cfg);
	cfg.memtype = type;
	cfg.subbuf_shift = EXPORT_SUBBUF_SHIFT;
	while (cfg.subbuf_shift > EXPORT_MIN_SUBBUF_SHIFT &&
	       per_cpu < (2ull << cfg.subbuf_shift))
		cfg.subbuf_shift--;
	for (shift = 1; (2ull << (shift + cfg.subbuf_shift)) <= per_cpu &&
			shift < 8;
	     shift++)
		;
	cfg.nr_subbufs_shift = shift;
	uint64_t bytes = (uint64_t)ncpus << (shift + cfg.subbuf_shift);
	kprintf("trace_export: %u CPUs x %u packets of %u KiB, buffers %s; "
		"up to %lu KiB go out, about %lu s at %u baud\n", ncpus,
		1u << shift, 1u << (cfg.subbuf_shift - 10), memtype_name(type),
		(unsigned long)(bytes >> 10),
		(unsigned long)(bytes * BASE64_NUM / BASE64_DEN *
				BITS_PER_SERIAL_BYTE / SERIAL_BAUD),
		SERIAL_BAUD);
	if (trace_setup(&cfg, ncpus) != 0)
		return 1;
	trace_enable_all(true);
	trace_event_enable(TRACE_ID_trace_test, false);
	panic_notifier_register(export_on_panic);

	rc = tbench_checksum(&tbench_quick, 0, &ref) ? 0 : 1;
	cpumask_online(&all, false);
	smp_call(&all, cpu_churn, NULL, true);
	/* trace.crash=: panic now, so the panic notifier exports. */
	crash_if_asked(trace_crash);

	trace_enable_all(false);
	panic_notifier_unregister(export_on_panic);
	if (export_all() != 0) {
		kprintf("trace_export: out of memory for the export\n");
		rc = 1;
	}
	trace_teardown();
	return rc;
}

EXPERIMENT(trace_export, "trace_export",
	   "flight-record a tbench run and kmalloc churn on every CPU, then "
	   "export the trace as CTF over serial (tools/results/trace_extract.py)",
	   "000", 0, trace_export_run);
