/*
 * The tbench-like client/server engine (see tbench.h): the server's
 * request handling, the clients' scripts, and runs over pairs of CPUs.
 */
#include "kernel/bench/bench_env.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/kprintf.h"
#include "lib/prng.h"
#include "lib/string.h"
#include "mm/kmalloc.h"
#include "workloads/corpus.h"
#include "workloads/loopback.h"
#include "workloads/ramfs.h"
#include "workloads/ramfs_pages.h"
#include "workloads/tbench.h"
#include "trace/trace.h"

/* Payload sizes of reads and writes, picked uniformly (dbench-like mix
 * of small metadata-sized and large data transfers). */
static const uint32_t tb_sizes[] = {128, 512, 1024, 4096, 4096,
				    8192, 16384, 65536};
#define TB_FILE_SPAN 262144u	/* offsets stay below 256 KiB */
#define TB_OFF_ALIGN 512u
#define TB_NAME_LEN 24
#define TB_MAX_FILES 512u
#define TB_PERCENT 100

/* Script mix, in percent: on a closed slot and on an open one. */
#define TB_CLOSED_UNLINK 20
#define TB_CLOSED_STAT 30	/* cumulative: 20..29 stat, rest open */
#define TB_OPEN_WRITE 35
#define TB_OPEN_READ 70
#define TB_OPEN_STAT 80		/* rest: close */

const struct tbench_size tbench_quick = {TBENCH_QUICK_CLIENTS,
					 TBENCH_QUICK_STEPS, 3};
const struct tbench_size tbench_full = {16, 2000, 7};

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

/* ---- Server ------------------------------------------------------------- */

static int64_t tb_perform(struct tbench_pair *pr, const struct tb_req *rq,
			  uint64_t *out_len)
{
	struct ramfs_stat st;
	int *fd = &pr->fd[rq->slot % TBENCH_SLOTS];
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
			       MIN(rq->len, TBENCH_MAX_PAYLOAD));
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
static bool tb_server_step(struct tbench_pair *pr)
{
	struct tb_req rq;
	struct tb_rep rp;
	uint64_t len;

	loopback_recv(&pr->lb.req, &rq, sizeof(rq));
	if (rq.op == TB_OP_QUIT)
		return false;
	if (rq.op == TB_OP_WRITE) {
		kassert(rq.len <= TBENCH_MAX_PAYLOAD);
		loopback_recv(&pr->lb.req, pr->sbuf, rq.len);
	}
	trace_point(tbench_request_parsed, rq.op, (uint32_t)rq.len);
	trace_point(tbench_syscall_entry, rq.op, rq.slot);
	rp.status = tb_perform(pr, &rq, &len);
	trace_point(tbench_syscall_exit, rq.op, (uint64_t)rp.status);
	rp.len = len;
	trace_point(tbench_request_handled, rq.op, (uint32_t)rp.status);
	loopback_send(&pr->lb.rep, &rp, sizeof(rp));
	if (len)
		loopback_send(&pr->lb.rep, pr->sbuf, len);
	return true;
}

static void tb_server_loop(struct tbench_pair *pr)
{
	for (unsigned i = 0; i < TBENCH_SLOTS; i++)
		pr->fd[i] = -1;
	while (tb_server_step(pr))
		;
}

/* ---- Client ------------------------------------------------------------- */

static void tb_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t rng = corpus_rng_seed(seed, len), w;
	size_t i;

	for (i = 0; i + sizeof(w) <= len; i += sizeof(w)) {
		w = prng_next(&rng);
		memcpy(buf + i, &w, sizeof(w));
	}
	w = prng_next(&rng);
	memcpy(buf + i, &w, len - i);
}

/* One request/reply exchange; folds the reply into r. */
static void tb_call(struct tbench_pair *pr, struct tbench_client_result *r,
		    struct tb_req *rq)
{
	struct tb_rep rp;

	loopback_send(&pr->lb.req, rq, sizeof(*rq));
	if (rq->op == TB_OP_WRITE)
		loopback_send(&pr->lb.req, pr->cbuf, rq->len);
	trace_point(tbench_request_sent, rq->op, rq->len);
	if (rq->op == TB_OP_QUIT)
		return;
	if (pr->alternate)
		tb_server_step(pr);
	loopback_recv(&pr->lb.rep, &rp, sizeof(rp));
	kassert(rp.len <= TBENCH_MAX_PAYLOAD);
	if (rp.len)
		loopback_recv(&pr->lb.rep, pr->cbuf, rp.len);
	trace_point(tbench_reply_received, (uint32_t)rp.status, rp.len);
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
static void tb_client(struct tbench_pair *pr, unsigned client,
		      struct tbench_client_result *r)
{
	bool open[TBENCH_SLOTS] = {0}, exists[TBENCH_SLOTS] = {0};
	uint64_t rng = corpus_rng_seed(client + 1, TBENCH_SLOTS);
	struct tb_req rq;

	memset(&rq, 0, sizeof(rq));
	r->hash = CORPUS_HASH_INIT;
	r->bytes = r->ops = 0;
	for (unsigned step = 0; step < pr->size->steps; step++) {
		unsigned slot = (unsigned)(prng_next(&rng) % TBENCH_SLOTS);
		unsigned pct = (unsigned)(prng_next(&rng) % TB_PERCENT);
		uint32_t len = tb_sizes[prng_next(&rng) %
					ARRAY_SIZE(tb_sizes)];
		uint64_t off = prng_next(&rng) %
			       (TB_FILE_SPAN - len) / TB_OFF_ALIGN * TB_OFF_ALIGN;

		trace_point(tbench_client_think, client, step);
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
	for (unsigned slot = 0; slot < TBENCH_SLOTS; slot++) {
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

/* ---- Runs --------------------------------------------------------------- */

static struct tbench_run checksum_run;

static bool tb_pair_setup(struct tbench_pair *pr, size_t ring,
			  const struct tbench_size *size, struct ramfs *fs)
{
	memset(pr, 0, sizeof(*pr));
	pr->ring_size = ring;
	pr->ring_mem = kmalloc(2 * ring);
	pr->cbuf = kmalloc(TBENCH_MAX_PAYLOAD);
	pr->sbuf = kmalloc(TBENCH_MAX_PAYLOAD);
	pr->size = size;
	pr->fs = fs;
	if (!pr->ring_mem || !pr->cbuf || !pr->sbuf)
		return false;
	loopback_init(&pr->lb, pr->ring_mem, (uint8_t *)pr->ring_mem + ring,
		      ring);
	return true;
}

static void tb_pair_teardown(struct tbench_pair *pr)
{
	kfree(pr->ring_mem);
	kfree(pr->cbuf);
	kfree(pr->sbuf);
	pr->ring_mem = pr->cbuf = pr->sbuf = NULL;
}

/* The client side of pair pr: its share of the logical clients. */
static void tb_pair_clients(struct tbench_pair *pr,
			    struct tbench_client_result *res)
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

		loopback_send(&pr->lb.req, &quit, sizeof(quit));
	}
	pr->ticks = clk->now() - t0;
}

static void tb_cpu_main(void *arg)
{
	struct tbench_run *run = arg;
	unsigned cpu = smp_this_cpu();
	struct tbench_pair *pr = &run->pair[run->role_pair[cpu]];

	smp_barrier_wait(&run->barrier);
	if (run->role_server[cpu])
		tb_server_loop(pr);
	else
		tb_pair_clients(pr, run->res);
}

static void tb_fold(struct tbench_check *out,
		    const struct tbench_client_result *res,
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
bool tbench_run_setup(struct tbench_run *run, unsigned npairs,
			 const struct tbench_size *size)
{
	unsigned cpus[MAX_CPUS], n = 0;
	bool alt = npairs == 0;
	unsigned np = alt ? 1 : npairs;

	memset(run, 0, sizeof(*run));
	run->size = size;
	run->npairs = np;
	run->fs = ramfs_new(&ramfs_page_backend, TB_MAX_FILES);
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
		struct tbench_pair *pr = &run->pair[p];
		size_t ring = alt ? TBENCH_RING_ALT : TBENCH_RING_PAIRED;

		if (!tb_pair_setup(pr, ring, size, run->fs))
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

void tbench_run_teardown(struct tbench_run *run)
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
bool tbench_run_once(struct tbench_run *run, struct tbench_check *chk)
{
	if (run->pair[0].alternate) {
		for (unsigned i = 0; i < TBENCH_SLOTS; i++)
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
bool tbench_checksum(const struct tbench_size *size, unsigned npairs,
			struct tbench_check *chk)
{
	bool ok;

	ok = tbench_run_setup(&checksum_run, npairs, size) &&
	     tbench_run_once(&checksum_run, chk);
	tbench_run_teardown(&checksum_run);
	return ok;
}
