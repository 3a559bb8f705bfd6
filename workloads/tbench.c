/*
 * tbench-like workload (issue 5; seeds 000 and 004, where LTTng's
 * tracing overhead is quoted as tbench MB/s with tracing off and on).
 *
 * tbench is dbench's network half: each client sends the file-system
 * requests of a fixed load script over a TCP socket to a server process,
 * which performs them and sends the results back. Here:
 *
 *   client CPU                 loopback (loopback.h)            server CPU
 *   script step -> request  --[req ring: header+payload]-->  ramfs op
 *   hash reply  <- reply    <--[rep ring: header+payload]--  result
 *
 * Requests are dbench's kinds (open/create, read, write, stat, close,
 * unlink) on a few files per client, with payload sizes from a fixed
 * table. Pairs are (client, server) on two different CPUs; with one CPU
 * the client and the server run alternately on it (one request, then its
 * handling, then the reply), which measures the same work without
 * overlap and is reported as the variant "alternating".
 *
 * Determinism: a fixed set of logical clients, each with its own script
 * (a pure function of its number) and its own files, is spread over the
 * pairs; the checksum (payload bytes and a hash of every reply) is
 * folded per client in client order, so it depends neither on the CPU
 * count nor on timing. Every repetition is checked against a reference
 * run (alternating, on the boot CPU), and quick mode also against a
 * recorded constant: a fast-but-wrong change fails the experiment.
 */
#include "kernel/bench_env.h"
#include "kernel/experiment.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "mm/page_alloc.h"
#include "workloads/corpus.h"
#include "workloads/loopback.h"
#include "workloads/ramfs.h"
#include "workloads/tracepoint.h"

/* Payload sizes of reads and writes, picked uniformly (dbench-like mix
 * of small metadata-sized and large data transfers). */
static const uint32_t tb_sizes[] = {128, 512, 1024, 4096, 4096,
				    8192, 16384, 65536};
#define TB_MAX_PAYLOAD 65536u
#define TB_SLOTS 4		/* files per client */
#define TB_FILE_SPAN 262144u	/* offsets stay below 256 KiB */
#define TB_OFF_ALIGN 512u
#define TB_NAME_LEN 24
/* Ring bytes per direction: a socket-buffer-sized ring for pairs (large
 * payloads stream through in pieces); alternating needs a whole message
 * to fit, since nobody drains the ring while the client sends. */
#define TB_RING_PAIRED 16384u
#define TB_RING_ALT 131072u
#define TB_MAX_FILES 512u
#define TB_PERCENT 100

/* Script mix, in percent: on a closed slot and on an open one. */
#define TB_CLOSED_UNLINK 20
#define TB_CLOSED_STAT 30	/* cumulative: 20..29 stat, rest open */
#define TB_OPEN_WRITE 35
#define TB_OPEN_READ 70
#define TB_OPEN_STAT 80		/* rest: close */

struct tb_size {
	unsigned clients;
	unsigned steps;		/* script steps per client */
	unsigned reps;
};

static const struct tb_size tb_quick = {4, 300, 3};
static const struct tb_size tb_full = {16, 2000, 7};

/* What the quick script must produce (recorded from a reference run;
 * change it only together with the script). */
#define TB_QUICK_EXPECT_HASH 0xd68f41d52277700cull
#define TB_QUICK_EXPECT_BYTES 6601728ull

enum tb_op {
	TB_OP_OPEN = 1,
	TB_OP_CLOSE,
	TB_OP_READ,
	TB_OP_WRITE,
	TB_OP_STAT,
	TB_OP_UNLINK,
	TB_OP_QUIT,
};

struct tb_req {
	uint32_t op;
	uint32_t len;		/* WRITE: payload bytes that follow */
	uint64_t off;
	uint32_t slot;
	uint32_t pad;
	char name[TB_NAME_LEN];
};

struct tb_rep {
	int64_t status;
	uint64_t len;		/* READ: payload bytes that follow */
};

/* One client/server connection and what its client measured. */
struct tb_pair {
	struct loopback lb;
	void *ring_mem;
	size_t ring_size;
	bool alternate;		/* server runs inline on the client's CPU */
	unsigned index, npairs;
	unsigned client_cpu, server_cpu;
	uint8_t *cbuf, *sbuf;	/* client's and server's payload buffers */
	int fd[TB_SLOTS];	/* server side: slot -> ramfs handle */
	struct ramfs *fs;
	const struct tb_size *size;
	/* Results of the last run. */
	uint64_t ops, bytes, ticks;
	bool failed;
};

/* Per logical client: folded in client order into the run's checksum. */
struct tb_client_result {
	uint64_t hash, bytes, ops;
};

struct tb_check {
	uint64_t hash, bytes, ops;
};

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

static int64_t tb_perform(struct tb_pair *pr, const struct tb_req *rq,
			  uint64_t *out_len)
{
	struct ramfs_stat st;
	int *fd = &pr->fd[rq->slot % TB_SLOTS];
	long n;
	int h;

	*out_len = 0;
	switch (rq->op) {
	case TB_OP_OPEN:
		h = ramfs_open(pr->fs, rq->name, RAMFS_O_CREAT);
		if (h < 0)
			return h;
		*fd = h;
		return 0; /* the handle itself depends on timing */
	case TB_OP_CLOSE:
		h = ramfs_close(pr->fs, *fd);
		*fd = -1;
		return h;
	case TB_OP_WRITE:
		return ramfs_write(pr->fs, *fd, rq->off, pr->sbuf, rq->len);
	case TB_OP_READ:
		n = ramfs_read(pr->fs, *fd, rq->off, pr->sbuf,
			       MIN(rq->len, TB_MAX_PAYLOAD));
		if (n > 0)
			*out_len = (uint64_t)n;
		return n;
	case TB_OP_STAT:
		h = ramfs_stat(pr->fs, rq->name, &st);
		return h < 0 ? h : (int64_t)st.size;
	case TB_OP_UNLINK:
		return ramfs_unlink(pr->fs, rq->name);
	default:
		return -RAMFS_EINVAL;
	}
}

/* Receive one request, perform it, reply. Returns false on QUIT. */
static bool tb_server_step(struct tb_pair *pr)
{
	struct tb_req rq;
	struct tb_rep rp;
	uint64_t len;

	lb_recv(&pr->lb.req, &rq, sizeof(rq));
	if (rq.op == TB_OP_QUIT)
		return false;
	if (rq.op == TB_OP_WRITE) {
		kassert(rq.len <= TB_MAX_PAYLOAD);
		lb_recv(&pr->lb.req, pr->sbuf, rq.len);
	}
	rp.status = tb_perform(pr, &rq, &len);
	rp.len = len;
	TRACEPOINT(tbench_request_handled, rq.op, rp.status);
	lb_send(&pr->lb.rep, &rp, sizeof(rp));
	if (len)
		lb_send(&pr->lb.rep, pr->sbuf, len);
	return true;
}

static void tb_server_loop(struct tb_pair *pr)
{
	for (unsigned i = 0; i < TB_SLOTS; i++)
		pr->fd[i] = -1;
	while (tb_server_step(pr))
		;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

static void tb_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t rng = corpus_rng_seed(seed, len), w;
	size_t i;

	for (i = 0; i + sizeof(w) <= len; i += sizeof(w)) {
		w = corpus_rng_next(&rng);
		memcpy(buf + i, &w, sizeof(w));
	}
	w = corpus_rng_next(&rng);
	memcpy(buf + i, &w, len - i);
}

/* One request/reply exchange; folds the reply into r. */
static void tb_call(struct tb_pair *pr, struct tb_client_result *r,
		    struct tb_req *rq)
{
	struct tb_rep rp;

	lb_send(&pr->lb.req, rq, sizeof(*rq));
	if (rq->op == TB_OP_WRITE)
		lb_send(&pr->lb.req, pr->cbuf, rq->len);
	TRACEPOINT(tbench_request_sent, rq->op, rq->len);
	if (rq->op == TB_OP_QUIT)
		return;
	if (pr->alternate)
		tb_server_step(pr);
	lb_recv(&pr->lb.rep, &rp, sizeof(rp));
	kassert(rp.len <= TB_MAX_PAYLOAD);
	if (rp.len)
		lb_recv(&pr->lb.rep, pr->cbuf, rp.len);
	TRACEPOINT(tbench_reply_received, rp.status, rp.len);
	r->hash = corpus_hash_u64(r->hash, rq->op);
	r->hash = corpus_hash_u64(r->hash, (uint64_t)rp.status);
	if (rp.len)
		r->hash = corpus_hash64(r->hash, pr->cbuf, rp.len);
	r->bytes += (rq->op == TB_OP_WRITE ? rq->len : 0) + rp.len;
	r->ops++;
}

static void tb_name(struct tb_req *rq, unsigned client, unsigned slot)
{
	ksnprintf(rq->name, sizeof(rq->name), "c%u/f%u", client, slot);
}

/*
 * Logical client 'client' runs its script over pr: steps requests whose
 * kind depends on the slot's state, then closes and unlinks what is left
 * so that every run starts from an empty store.
 */
static void tb_client(struct tb_pair *pr, unsigned client,
		      struct tb_client_result *r)
{
	bool open[TB_SLOTS] = {0}, exists[TB_SLOTS] = {0};
	uint64_t rng = corpus_rng_seed(client + 1, TB_SLOTS);
	struct tb_req rq;

	memset(&rq, 0, sizeof(rq));
	r->hash = CORPUS_HASH_INIT;
	r->bytes = r->ops = 0;
	for (unsigned step = 0; step < pr->size->steps; step++) {
		unsigned slot = (unsigned)(corpus_rng_next(&rng) % TB_SLOTS);
		unsigned pct = (unsigned)(corpus_rng_next(&rng) % TB_PERCENT);
		uint32_t len = tb_sizes[corpus_rng_next(&rng) %
					ARRAY_SIZE(tb_sizes)];
		uint64_t off = corpus_rng_next(&rng) %
			       (TB_FILE_SPAN - len) / TB_OFF_ALIGN * TB_OFF_ALIGN;

		rq.slot = slot;
		rq.off = off;
		rq.len = 0;
		tb_name(&rq, client, slot);
		if (!open[slot]) {
			if (exists[slot] && pct < TB_CLOSED_UNLINK) {
				rq.op = TB_OP_UNLINK;
				exists[slot] = false;
			} else if (pct < TB_CLOSED_STAT) {
				rq.op = TB_OP_STAT;
			} else {
				rq.op = TB_OP_OPEN;
				open[slot] = exists[slot] = true;
			}
		} else if (pct < TB_OPEN_WRITE) {
			rq.op = TB_OP_WRITE;
			rq.len = len;
			tb_fill(pr->cbuf, len,
				(uint64_t)client << 32 | step);
		} else if (pct < TB_OPEN_READ) {
			rq.op = TB_OP_READ;
			rq.len = len;
		} else if (pct < TB_OPEN_STAT) {
			rq.op = TB_OP_STAT;
		} else {
			rq.op = TB_OP_CLOSE;
			open[slot] = false;
		}
		tb_call(pr, r, &rq);
	}
	for (unsigned slot = 0; slot < TB_SLOTS; slot++) {
		rq.slot = slot;
		tb_name(&rq, client, slot);
		rq.len = 0;
		if (open[slot]) {
			rq.op = TB_OP_CLOSE;
			tb_call(pr, r, &rq);
		}
		if (exists[slot]) {
			rq.op = TB_OP_UNLINK;
			tb_call(pr, r, &rq);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Runs                                                                */
/* ------------------------------------------------------------------ */

static void *tb_alloc_pages(unsigned order)
{
	return page_alloc(order);
}

static void tb_free_pages(void *p, unsigned order)
{
	page_free(p, order);
}

static const struct kmalloc_backend tb_kmalloc_backend = {
	tb_alloc_pages, tb_free_pages,
};

static const struct ramfs_backend tb_ramfs_backend = {
	tb_alloc_pages, tb_free_pages, true,
};

/* kmalloc may not be initialised at boot yet: do it on first use
 * (boot CPU, before any worker runs). */
static void tb_kmalloc_ready(void)
{
	if (!kmalloc_initialized())
		kmalloc_init(&tb_kmalloc_backend);
}

struct tb_run {
	struct tb_pair pair[MAX_CPUS / 2];
	unsigned npairs;
	unsigned role_pair[MAX_CPUS];	/* pair index of each CPU */
	bool role_server[MAX_CPUS];
	struct cpumask mask;
	struct smp_barrier barrier;
	const struct tb_size *size;
	struct tb_client_result *res;	/* one per logical client */
	struct ramfs *fs;
};

static struct tb_run tb_run;

static bool tb_pair_setup(struct tb_pair *pr, size_t ring,
			  const struct tb_size *size, struct ramfs *fs)
{
	memset(pr, 0, sizeof(*pr));
	pr->ring_size = ring;
	pr->ring_mem = kmalloc(2 * ring);
	pr->cbuf = kmalloc(TB_MAX_PAYLOAD);
	pr->sbuf = kmalloc(TB_MAX_PAYLOAD);
	pr->size = size;
	pr->fs = fs;
	if (!pr->ring_mem || !pr->cbuf || !pr->sbuf)
		return false;
	loopback_init(&pr->lb, pr->ring_mem, (uint8_t *)pr->ring_mem + ring,
		      ring);
	return true;
}

static void tb_pair_teardown(struct tb_pair *pr)
{
	kfree(pr->ring_mem);
	kfree(pr->cbuf);
	kfree(pr->sbuf);
	pr->ring_mem = pr->cbuf = pr->sbuf = NULL;
}

/* The client side of pair pr: its share of the logical clients. */
static void tb_pair_clients(struct tb_pair *pr, struct tb_client_result *res)
{
	const struct bench_clock *clk = bench_kernel_clock();
	uint64_t t0 = clk->now();

	pr->ops = pr->bytes = 0;
	for (unsigned c = pr->index; c < pr->size->clients; c += pr->npairs) {
		tb_client(pr, c, &res[c]);
		pr->ops += res[c].ops;
		pr->bytes += res[c].bytes;
	}
	if (!pr->alternate) {
		struct tb_req quit = {.op = TB_OP_QUIT};

		lb_send(&pr->lb.req, &quit, sizeof(quit));
	}
	pr->ticks = clk->now() - t0;
}

static void tb_cpu_main(void *arg)
{
	struct tb_run *run = arg;
	unsigned cpu = smp_this_cpu();
	struct tb_pair *pr = &run->pair[run->role_pair[cpu]];

	smp_barrier_wait(&run->barrier);
	if (run->role_server[cpu])
		tb_server_loop(pr);
	else
		tb_pair_clients(pr, run->res);
}

static void tb_fold(struct tb_check *out, const struct tb_client_result *res,
		    unsigned clients)
{
	out->hash = CORPUS_HASH_INIT;
	out->bytes = out->ops = 0;
	for (unsigned c = 0; c < clients; c++) {
		out->hash = corpus_hash_u64(out->hash, res[c].hash);
		out->bytes += res[c].bytes;
		out->ops += res[c].ops;
	}
}

/*
 * Set up run for npairs pairs (0: alternating on this CPU). Takes the
 * first 2*npairs online CPUs: pair p is (client cpus[2p], server
 * cpus[2p+1]). Returns false without memory or CPUs.
 */
static bool tb_run_setup(struct tb_run *run, unsigned npairs,
			 const struct tb_size *size)
{
	unsigned cpus[MAX_CPUS], n = 0;
	bool alt = npairs == 0;
	unsigned np = alt ? 1 : npairs;

	memset(run, 0, sizeof(*run));
	run->size = size;
	run->npairs = np;
	run->fs = ramfs_new(&tb_ramfs_backend, TB_MAX_FILES);
	run->res = kzalloc(size->clients * sizeof(*run->res));
	if (!run->fs || !run->res)
		return false;
	for (unsigned c = 0; c < MAX_CPUS && n < 2 * np; c++)
		if (smp_cpu_online(c))
			cpus[n++] = c;
	if (!alt && n < 2 * np)
		return false;
	cpumask_clear(&run->mask);
	for (unsigned p = 0; p < np; p++) {
		struct tb_pair *pr = &run->pair[p];

		if (!tb_pair_setup(pr, alt ? TB_RING_ALT : TB_RING_PAIRED,
				   size, run->fs))
			return false;
		pr->alternate = alt;
		pr->index = p;
		pr->npairs = np;
		if (alt)
			continue;
		pr->client_cpu = cpus[2 * p];
		pr->server_cpu = cpus[2 * p + 1];
		run->role_pair[pr->client_cpu] = p;
		run->role_pair[pr->server_cpu] = p;
		run->role_server[pr->server_cpu] = true;
		cpumask_set(&run->mask, pr->client_cpu);
		cpumask_set(&run->mask, pr->server_cpu);
	}
	smp_barrier_init(&run->barrier, 2 * np);
	return true;
}

static void tb_run_teardown(struct tb_run *run)
{
	for (unsigned p = 0; p < run->npairs; p++)
		tb_pair_teardown(&run->pair[p]);
	kfree(run->res);
	run->res = NULL;
	ramfs_destroy(run->fs);
	run->fs = NULL;
}

/* One repetition; fills *chk. Returns false if the store is not empty
 * afterwards (a script or ramfs bug). */
static bool tb_run_once(struct tb_run *run, struct tb_check *chk)
{
	if (run->pair[0].alternate) {
		for (unsigned i = 0; i < TB_SLOTS; i++)
			run->pair[0].fd[i] = -1;
		tb_pair_clients(&run->pair[0], run->res);
	} else {
		smp_run_on(&run->mask, tb_cpu_main, run);
	}
	tb_fold(chk, run->res, run->size->clients);
	return ramfs_file_count(run->fs) == 0 &&
	       ramfs_pages_held(run->fs) == 0;
}

/* Checksum of one run of the script with npairs pairs (0: alternating). */
static bool tb_checksum(const struct tb_size *size, unsigned npairs,
			struct tb_check *chk)
{
	bool ok;

	tb_kmalloc_ready();
	ok = tb_run_setup(&tb_run, npairs, size) && tb_run_once(&tb_run, chk);
	tb_run_teardown(&tb_run);
	return ok;
}

uint64_t tbench_quick_checksum(unsigned npairs, uint64_t *bytes);
/* For tests: the quick script's checksum with npairs pairs (0: one CPU,
 * alternating); *bytes gets the payload bytes moved. 0 on failure. */
uint64_t tbench_quick_checksum(unsigned npairs, uint64_t *bytes)
{
	struct tb_check chk = {0};

	if (!tb_checksum(&tb_quick, npairs, &chk))
		return 0;
	*bytes = chk.bytes;
	return chk.hash;
}

/* ------------------------------------------------------------------ */
/* The experiment                                                      */
/* ------------------------------------------------------------------ */

#define TB_MAX_FIGS 64
#define MB 1000000ull

static void tb_rates(struct stats *mbs, struct stats *ops,
		     const uint64_t *ticks, unsigned reps, uint64_t bytes,
		     uint64_t nops)
{
	const struct bench_clock *clk = bench_kernel_clock();
	uint64_t v[BENCH_MAX_REPS], w[BENCH_MAX_REPS];

	for (unsigned i = 0; i < reps; i++) {
		v[i] = bench_rate_scaled(bytes, ticks[i], clk->hz) / MB;
		w[i] = bench_rate_scaled(nops, ticks[i], clk->hz);
	}
	stats_compute(mbs, v, reps, v);
	stats_compute(ops, w, reps, w);
}

static char tb_variant_names[TB_MAX_FIGS][BENCH_FIELD_MAX];

/* Measure one variant; appends its figures. Returns 0 or 1 (failure). */
static int tb_variant(unsigned npairs, const struct tb_size *size,
		      const struct tb_check *ref, struct bench_figure *figs,
		      size_t *nfig)
{
	static uint64_t pt[MAX_CPUS / 2][BENCH_MAX_REPS];
	static uint64_t pbytes[MAX_CPUS / 2], pops[MAX_CPUS / 2];
	uint64_t wall[BENCH_MAX_REPS];
	unsigned np = npairs ? npairs : 1, cpus = npairs ? 2 * npairs : 1;
	char *vname = tb_variant_names[*nfig];
	struct stats mbs, ops;
	int rc = 0;

	kassert(size->reps <= BENCH_MAX_REPS);
	if (npairs)
		ksnprintf(vname, BENCH_FIELD_MAX, "pairs=%u", npairs);
	else
		ksnprintf(vname, BENCH_FIELD_MAX, "alternating");
	if (!tb_run_setup(&tb_run, npairs, size)) {
		kprintf("tbench: %s: cannot set up (memory or CPUs)\n", vname);
		tb_run_teardown(&tb_run);
		return 1;
	}
	for (unsigned r = 0; r < size->reps; r++) {
		struct tb_check chk;

		if (!tb_run_once(&tb_run, &chk)) {
			kprintf("tbench: %s: files left behind\n", vname);
			rc = 1;
		}
		if (chk.hash != ref->hash || chk.bytes != ref->bytes) {
			kprintf("tbench: %s rep %u: checksum %#lx bytes %lu, "
				"reference %#lx bytes %lu\n", vname, r,
				(unsigned long)chk.hash,
				(unsigned long)chk.bytes,
				(unsigned long)ref->hash,
				(unsigned long)ref->bytes);
			rc = 1;
		}
		wall[r] = 0;
		for (unsigned p = 0; p < np; p++) {
			pt[p][r] = tb_run.pair[p].ticks;
			pbytes[p] = tb_run.pair[p].bytes;
			pops[p] = tb_run.pair[p].ops;
			wall[r] = MAX(wall[r], pt[p][r]);
		}
	}
	tb_run_teardown(&tb_run);
	if (rc)
		return rc;

	tb_rates(&mbs, &ops, wall, size->reps, ref->bytes, ref->ops);
	bench_figure_init(&figs[*nfig], "tbench", vname, "throughput", "MB/s",
			  BENCH_SCALE_DIGITS, &mbs);
	figs[*nfig].cpus = cpus;
	figs[*nfig].clients = size->clients;
	(*nfig)++;
	bench_figure_init(&figs[*nfig], "tbench", vname, "ops", "ops/s",
			  BENCH_SCALE_DIGITS, &ops);
	figs[*nfig].cpus = cpus;
	figs[*nfig].clients = size->clients;
	(*nfig)++;
	for (unsigned p = 0; npairs > 1 && p < np && *nfig < TB_MAX_FIGS;
	     p++) {
		char *pname = tb_variant_names[*nfig];

		ksnprintf(pname, BENCH_FIELD_MAX, "pairs=%u/pair%u", npairs,
			  p);
		tb_rates(&mbs, &ops, pt[p], size->reps, pbytes[p], pops[p]);
		bench_figure_init(&figs[*nfig], "tbench", pname, "throughput",
				  "MB/s", BENCH_SCALE_DIGITS, &mbs);
		figs[*nfig].cpus = 2;
		(*nfig)++;
	}
	return 0;
}

/* Client/server pairs in quick mode; full mode uses every CPU. */
#define TB_QUICK_MAX_PAIRS 1

/* Shell settings: run tbench clients=N steps=N reps=N. */
#define TB_MAX_CLIENTS 64
#define TB_MAX_STEPS 100000
static const struct experiment_param tb_params[] = {
	{"clients", 1, TB_MAX_CLIENTS, "logical clients (quick 4, full 16)"},
	{"steps", 1, TB_MAX_STEPS,
	 "script steps per client (quick 300, full 2000)"},
	{"reps", 1, BENCH_MAX_REPS, "repetitions (quick 3, full 7)"},
};

static int tbench_run(enum experiment_mode mode)
{
	struct tb_size custom = mode == EXPERIMENT_FULL ? tb_full : tb_quick;
	const struct tb_size *size = &custom;
	static struct bench_figure figs[TB_MAX_FIGS];
	unsigned cpus = smp_cpus_online(), maxpairs = cpus / 2;
	uint64_t free_before = page_alloc_free_pages(), t0, t1;
	struct tb_check ref;
	size_t nfig = 0;
	int rc = 0;

	uint64_t v;

	if (experiment_param("clients", &v))
		custom.clients = (unsigned)v;
	if (experiment_param("steps", &v))
		custom.steps = (unsigned)v;
	if (experiment_param("reps", &v))
		custom.reps = (unsigned)v;
	bench_env_report();
	tb_kmalloc_ready();
	if (mode == EXPERIMENT_QUICK && maxpairs > TB_QUICK_MAX_PAIRS) {
		/* Spinning pairs need a host core each to make progress;
		 * quick runs stay within what a 2-core host can carry. */
		kprintf("tbench: quick mode caps pairs at %u (runmode=full "
			"uses %u)\n", TB_QUICK_MAX_PAIRS, maxpairs);
		maxpairs = TB_QUICK_MAX_PAIRS;
	}
	kprintf("tbench: %u logical clients x %u requests, %u repetitions, "
		"%u CPUs online; payload sizes 128 B..64 KiB; ring %u B per "
		"direction\n", size->clients, size->steps, size->reps, cpus,
		TB_RING_PAIRED);
	t0 = bench_kernel_clock()->now();
	if (!tb_checksum(size, 0, &ref)) {
		kprintf("tbench: the reference run failed\n");
		return 1;
	}
	t1 = bench_kernel_clock()->now();
	kprintf("tbench: reference (alternating, this CPU): %lu requests, "
		"%lu payload bytes, checksum %#lx, %lu ms\n",
		(unsigned long)ref.ops, (unsigned long)ref.bytes,
		(unsigned long)ref.hash,
		(unsigned long)stats_muldiv(t1 - t0, 1000,
					    bench_kernel_clock()->hz));
	if (mode == EXPERIMENT_QUICK && !experiment_params_given() &&
	    (ref.hash != TB_QUICK_EXPECT_HASH ||
	     ref.bytes != TB_QUICK_EXPECT_BYTES)) {
		kprintf("tbench: quick checksum %#lx bytes %lu, expected "
			"%#llx bytes %llu\n", (unsigned long)ref.hash,
			(unsigned long)ref.bytes, TB_QUICK_EXPECT_HASH,
			TB_QUICK_EXPECT_BYTES);
		rc = 1;
	}
	if (maxpairs == 0) {
		kprintf("tbench: one CPU: client and server cannot run at "
			"once, so they alternate on it (variant "
			"\"alternating\")\n");
		rc |= tb_variant(0, size, &ref, figs, &nfig);
	} else {
		/* Full mode: 1, 2, 4, ... pairs and all the CPUs' worth;
		 * quick mode: only the latter. */
		unsigned np = mode == EXPERIMENT_FULL ? 1 : maxpairs;

		for (; !rc; np = MIN(2 * np, maxpairs)) {
			rc |= tb_variant(np, size, &ref, figs, &nfig);
			if (np == maxpairs)
				break;
		}
	}
	if (page_alloc_free_pages() != free_before) {
		/* kmalloc keeps slabs cached: report, do not fail. */
		kprintf("tbench: note: %ld pages fewer free than before "
			"(kmalloc slab caches)\n",
			(long)(free_before - page_alloc_free_pages()));
	}
	if (rc) {
		kprintf("tbench: FAILED\n");
		return rc;
	}
	bench_report("tbench-like (client/server pairs over loopback, "
		     "ramfs)", figs, nfig);
	return 0;
}

EXPERIMENT_PARAMS(tbench, "tbench",
	   "client/server pairs exchange dbench-style file requests over an "
	   "in-kernel loopback; MB/s and ops/s",
	   "000,004", 30, tbench_run, tb_params);
