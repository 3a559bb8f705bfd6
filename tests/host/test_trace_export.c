/*
 * Property test of the CTF export (under ASan and UBSan): random record
 * streams go through the packet code the kernel uses (trace/ring_buffer.c:
 * reserve, write, commit, sub-buffer switch, flush, the reader; the
 * metadata of trace/ctf.c) and come back through
 * tools/results/trace_extract.py --decode, which reads packets by
 * babeltrace2's rules. One description of the reading side, the
 * extractor's, is tested against the encoder.
 *
 * Each trial draws a geometry (4 to 16 KiB sub-buffers, 2 to 8 of them,
 * discard or overwrite mode, page array or list) and a stream: the
 * kernel's events and extra ones with random layouts (u8 to u64 fields,
 * so every tail of 0 to 7 padding bytes occurs; ids past 31, so the
 * extended header; payloads of several pages and larger than a
 * sub-buffer), clock steps that force the extended header, writers
 * nesting between reserve and commit up to past RB_MAX_NESTING, the fast
 * path where it applies, and a reader taking packets at a random rate
 * (so discard mode loses records and overwrite mode overwrites them).
 * The decoded stream must list exactly the records of each packet read,
 * in order, with their timestamps and field values, and each packet's
 * content_size must end at its last record's last field. The extractor's
 * other half, the serial framing, is tested against the kernel's framer
 * (trace/ctf.c, ctf_frame()): framed files come back byte for byte, and
 * a damaged chunk or packet is refused with a message.
 *
 * Runs from the repository root (make test does), where it finds
 * tools/results/trace_extract.py.
 */
// HOST_SRCS: trace/ring_buffer.c trace/packet.c trace/ctf.c lib/string.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "tests/host/rb_test_util.h"
#include "trace/ctf.h"
#include "trace/ring_buffer.h"
#include "trace/tracepoint.h"

#define EXTRACTOR "tools/results/trace_extract.py"
#define EXTRACTOR_MODULE "tools.results.trace_extract" /* from the root */
#define NR_EVENTS 40 /* the kernel's, then extra ones up to id 39 */
#define MAX_FIELDS 700
#define BIG_EVENT_A (TRACE_EVENT_NR + 1) /* 300 u64: spans pages */
#define BIG_EVENT_B (TRACE_EVENT_NR + 2) /* 700 u64: > 4 KiB */
/* Eight events of 1 to 8 u8 fields: every tail, in both header forms. */
#define BYTES_EVENT (TRACE_EVENT_NR + 3)
#define META_ROOM (256 * 1024)
#define TRIALS 36 /* every geometry once: 3 x 3 x 2 x 2 */
#define OFFSET_LAPS 2      /* write about this many buffers per trial */
#define MAX_ATTEMPTS 6000  /* reserves per trial, lost ones included */
#define NEST_DEPTH_MAX (RB_MAX_NESTING + 1) /* one past the limit */
#define LINE_MAX_CHARS (MAX_FIELDS * 24 + 128)
#define TEST_CLOCK_HZ 1000000000ull
#define COMMIT_STRIDE 8 /* one counter per 64-byte line */
#define PAD_BYTE 0xa5
#define RNG_SEED 0x9e3779b97f4a7c15ull
#define PATH_ROOM 96 /* between fields: a misaligned read shows */

struct layout {
	unsigned nfields;
	uint8_t size[MAX_FIELDS];
	unsigned off[MAX_FIELDS];
	unsigned align;     /* largest field */
	unsigned described; /* payload bytes up to the last field's end */
};

static struct layout events[NR_EVENTS];
static uint64_t rng;
static uint64_t clk;
static uint8_t trace_uuid[RB_UUID_SIZE];

/* What the trials covered, summed: each case must have happened. */
static struct {
	unsigned long lost[RB_LOST_NR];
	unsigned long extended, fast, nested, page_crossing, packets;
	unsigned tails_last; /* bit t: a packet's last record had tail t */
} seen;

#define NAME_(name, fields) #name,
#define NO_FIELD_(type, field)
static const char *const kernel_names[TRACE_EVENT_NR] = {
	TRACE_EVENTS(NAME_, NO_FIELD_)};

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static uint64_t test_clock(void)
{
	return clk;
}

/* CTF layout: each field naturally aligned, the payload to its largest. */
static void lay_out(struct layout *l)
{
	unsigned pos = 0;

	l->align = 1;
	for (unsigned f = 0; f < l->nfields; f++) {
		pos = ALIGN_UP(pos, l->size[f]);
		l->off[f] = pos;
		pos += l->size[f];
		l->align = MAX(l->align, (unsigned)l->size[f]);
	}
	l->described = pos;
}

/* The kernel's events, from the same list as trace/tracepoint.h. */
#define SIZE_FIELD_(type, field) sizeof(type),
#define COUNT_FIELD_(type, field) +1
#define KERNEL_EV_(name, fields)                                            \
	{                                                                   \
		static const uint8_t s[] = {fields};                        \
		struct layout *l = &events[TRACE_ID_##name];                \
		l->nfields = sizeof(s);                                     \
		memcpy(l->size, s, sizeof(s));                              \
		lay_out(l);                                                 \
		if (l->described != TRACE_PAYLOAD_SIZE(name))               \
			return #name;                                       \
	}

/* Returns NULL, or an event whose record size disagrees with CTF's. */
static const char *kernel_layouts(void)
{
	TRACE_EVENTS(KERNEL_EV_, SIZE_FIELD_)
	return NULL;
}

static void extra_layouts(void)
{
	static const uint8_t sizes[] = {1, 2, 4, 8};

	for (unsigned id = TRACE_EVENT_NR; id < NR_EVENTS; id++) {
		struct layout *l = &events[id];

		bool bytes = id >= BYTES_EVENT && id < BYTES_EVENT + 8;

		l->nfields = id == BIG_EVENT_A ? 300 :
			     id == BIG_EVENT_B ? MAX_FIELDS :
			     bytes	       ? 1 + id - BYTES_EVENT :
						 1 + below(6);
		for (unsigned f = 0; f < l->nfields; f++)
			l->size[f] = id == BIG_EVENT_A || id == BIG_EVENT_B ? 8 :
				     bytes ? 1 :
					     sizes[below(4)];
		lay_out(l);
	}
}

/* The metadata: trace/ctf.c's, then the extra events in its format. */
static size_t metadata(char *buf, const uint8_t *uuid)
{
	size_t len = ctf_metadata(buf, META_ROOM, uuid, TEST_CLOCK_HZ);

	for (unsigned id = TRACE_EVENT_NR; len && id < NR_EVENTS; id++) {
		len += (size_t)snprintf(buf + len, META_ROOM - len,
					"event {\n\tname = \"extra_%u\";\n"
					"\tid = %u;\n\tstream_id = 0;\n"
					"\tfields := struct {\n", id, id);
		for (unsigned f = 0; f < events[id].nfields; f++)
			len += (size_t)snprintf(buf + len, META_ROOM - len,
						"\t\tuint%u_t f%u;\n",
						events[id].size[f] * 8, f);
		len += (size_t)snprintf(buf + len, META_ROOM - len,
					"\t};\n};\n\n");
	}
	return len < META_ROOM ? len : 0;
}

/* A record the writer committed, as the decoder must print it. */
struct rec {
	unsigned long begin; /* offset of its header */
	uint64_t tsc;
	uint32_t id;
	bool extended;
	uint8_t *payload;
};

/* A packet the reader took. */
struct pkt {
	uint64_t seq, content_bits, discarded;
	unsigned long records;
};

struct trial {
	struct rbt t;
	struct rec *recs;
	unsigned long nrecs, cap;
	struct pkt *pkts;
	unsigned long npkts;
	uint8_t *copy; /* one sub-buffer */
	FILE *stream;
	unsigned long attempts;
	unsigned read_every; /* the reader runs after this many writes */
};

static void keep(struct trial *tr, const struct rb_ctx *ctx,
		 const uint8_t *payload, unsigned len)
{
	struct rec *r;

	if (tr->nrecs == tr->cap) {
		tr->cap = tr->cap ? 2 * tr->cap : 1024;
		tr->recs = realloc(tr->recs, tr->cap * sizeof(*tr->recs));
	}
	r = &tr->recs[tr->nrecs++];
	r->begin = ctx->begin;
	r->tsc = ctx->tsc;
	r->id = ctx->id;
	r->extended = ctx->extended;
	r->payload = malloc(len ? len : 1);
	memcpy(r->payload, payload, len);
}

/* Random field values, PAD_BYTE between them. */
static void fill_payload(const struct layout *l, uint8_t *p)
{
	memset(p, PAD_BYTE, l->described);
	for (unsigned f = 0; f < l->nfields; f++) {
		uint64_t v = rnd();

		memcpy(p + l->off[f], &v, l->size[f]);
	}
}

static uint32_t pick_event(void)
{
	unsigned r = below(1000);

	if (r < 4)
		return r < 2 ? BIG_EVENT_A : BIG_EVENT_B;
	if (r < 600)
		return below(TRACE_EVENT_NR);
	return TRACE_EVENT_NR + below(NR_EVENTS - TRACE_EVENT_NR);
}

static void advance_clock(void)
{
	unsigned r = below(100);

	if (r < 2)
		clk += (1ull << RB_COMPACT_TS_BITS) + rnd() % 1000;
	else if (r < 3)
		clk += (1ull << RB_COMPACT_TS_BITS) - 1 - below(4);
	else
		clk += 1 + below(5000);
}

/*
 * One writer: sized as trace/trace.c's trace_emit_slow() sizes records;
 * between reserve and commit another writer may nest (an interrupt).
 */
static void emit(struct trial *tr, unsigned depth)
{
	static uint8_t bufs[NEST_DEPTH_MAX + 1][MAX_FIELDS * 8];
	uint8_t *payload = bufs[depth];
	uint32_t id = pick_event();
	const struct layout *l = &events[id];
	uint32_t at = ALIGN_UP((uint32_t)RB_COMPACT_HEADER_SIZE, l->align);
	struct rb_ctx ctx = {.id = id};

	ctx.size_compact = ALIGN_UP(at + l->described, RB_RECORD_ALIGN);
	ctx.tail_compact = ctx.size_compact - (at + l->described);
	ctx.size_extended = ALIGN_UP(RB_EXTENDED_HEADER_SIZE + l->described,
				     RB_RECORD_ALIGN);
	ctx.tail_extended = ctx.size_extended -
			    (RB_EXTENDED_HEADER_SIZE + l->described);
	fill_payload(l, payload);
	advance_clock();
	tr->attempts++;
	if (depth == 0 && l->described % 4 == 0 &&
	    l->described <= RB_FAST_MAX_PAYLOAD && below(2)) {
		unsigned long o = tr->t.rb.offset;

		if (rb_emit_fast(&tr->t.rb, id, payload, at, l->described,
				 ctx.size_compact, test_clock)) {
			ctx.begin = o & ~RB_OFFSET_TAIL_MASK;
			ctx.tsc = clk;
			ctx.extended = false;
			keep(tr, &ctx, payload, l->described);
			seen.fast++;
			return;
		}
	}
	if (rb_reserve(&tr->t.rb, &ctx))
		return; /* lost, and counted */
	if (depth < NEST_DEPTH_MAX && below(10) == 0) {
		seen.nested++;
		emit(tr, depth + 1);
	}
	seen.extended += ctx.extended;
	seen.page_crossing += (ctx.begin >> RB_PAGE_SHIFT) !=
			      ((ctx.begin + ctx.size - 1) >> RB_PAGE_SHIFT);
	ctx.cursor = ctx.begin +
		     (ctx.extended ? RB_EXTENDED_HEADER_SIZE : at);
	rb_write(&tr->t.rb, &ctx, payload, l->described);
	rb_commit(&tr->t.rb, &ctx);
	keep(tr, &ctx, payload, l->described);
}

static void read_packets(struct trial *tr)
{
	unsigned long records;

	while (rb_read_packet(&tr->t.rb, tr->copy, &records)) {
		const struct rb_packet_header *h = (const void *)tr->copy;
		struct pkt *p;

		tr->pkts = realloc(tr->pkts, (tr->npkts + 1) * sizeof(*p));
		p = &tr->pkts[tr->npkts++];
		p->seq = h->packet_seq_num;
		p->content_bits = h->content_size;
		p->discarded = h->events_discarded;
		p->records = records;
		fwrite(tr->copy, 1, tr->t.rb.subbuf_size, tr->stream);
	}
}

static int by_begin(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The decoder's line for record r of stream. */
static void rec_line(char *out, size_t room, const char *stream,
		     const struct rec *r)
{
	const struct layout *l = &events[r->id];
	const char *name = r->id < TRACE_EVENT_NR ? kernel_names[r->id] : NULL;
	char extra[16];
	size_t n;

	if (!name) {
		snprintf(extra, sizeof(extra), "extra_%u", r->id);
		name = extra;
	}
	n = (size_t)snprintf(out, room, "event %s %llu %s", stream,
			     (unsigned long long)r->tsc, name);
	for (unsigned f = 0; f < l->nfields && n < room; f++) {
		uint64_t v = 0;

		memcpy(&v, r->payload + l->off[f], l->size[f]);
		n += (size_t)snprintf(out + n, room - n, " %llu",
				      (unsigned long long)v);
	}
}

/*
 * Check the extractor's lines for trial n (read from f) against what the
 * trial wrote. Returns NULL when they agree, else why not.
 */
static const char *compare(struct ktest_ctx *ctx, struct trial *tr,
			   unsigned n, FILE *f)
{
	static char want[LINE_MAX_CHARS], got[LINE_MAX_CHARS];
	unsigned long shift = tr->t.rb.cfg.subbuf_shift, r = 0;
	const char *bad = NULL;
	char stream[32];

	snprintf(stream, sizeof(stream), "stream_%u", n);
	qsort(tr->recs, tr->nrecs, sizeof(*tr->recs), by_begin);
	for (unsigned long p = 0; p < tr->npkts && !bad; p++) {
		const struct pkt *k = &tr->pkts[p];
		unsigned long first, in = 0, content = RB_PACKET_HEADER_SIZE;

		while (r < tr->nrecs && (tr->recs[r].begin >> shift) < k->seq)
			r++;
		first = r;
		while (r + in < tr->nrecs &&
		       (tr->recs[r + in].begin >> shift) == k->seq)
			in++;
		if (in) {
			const struct rec *last = &tr->recs[r + in - 1];

			content = (last->begin & tr->t.rb.subbuf_mask) +
				  (last->extended ?
					   RB_EXTENDED_HEADER_SIZE :
					   ALIGN_UP((unsigned)RB_COMPACT_HEADER_SIZE,
						    events[last->id].align)) +
				  events[last->id].described;
			seen.tails_last |= 1u << (ALIGN_UP(content,
							   RB_RECORD_ALIGN) -
						  content);
		}
		seen.packets++;
		EXPECT_EQ(k->records, in);
		EXPECT_EQ(k->content_bits, (uint64_t)content * 8);
		snprintf(want, sizeof(want), "packet %s %llu %llu %llu", stream,
			 (unsigned long long)k->seq,
			 (unsigned long long)content * 8,
			 (unsigned long long)k->discarded);
		for (unsigned long i = 0; i <= in && !bad; i++) {
			if (i > 0)
				rec_line(want, sizeof(want), stream,
					 &tr->recs[first + i - 1]);
			if (!fgets(got, sizeof(got), f)) {
				got[0] = '\0';
				bad = "the extractor's output ends early";
			} else {
				got[strcspn(got, "\n")] = '\0';
				if (strcmp(got, want) != 0)
					bad = "the extractor's output differs";
			}
		}
		r += in;
	}
	if (bad) {
		ktest_diag("want: %.200s", want);
		ktest_diag("got:  %.200s", got);
	}
	return bad;
}

static void trial_free(struct trial *tr)
{
	for (unsigned long i = 0; i < tr->nrecs; i++)
		free(tr->recs[i].payload);
	free(tr->recs);
	free(tr->pkts);
	free(tr->copy);
	rbt_free(&tr->t);
}

static const char *trial_geometry(const struct trial *tr)
{
	static char s[96];
	const struct rb_config *c = &tr->t.rb.cfg;

	snprintf(s, sizeof(s), "%lu KiB x %u sub-buffers, %s, %s, read "
		 "every %u", tr->t.rb.subbuf_size >> 10,
		 1u << c->nr_subbufs_shift,
		 c->mode == RB_DISCARD ? "discard" : "overwrite",
		 c->page_index == RB_PAGES_LIST ? "list" : "array",
		 tr->read_every);
	return s;
}

/* Trial n: write dir/stream_n; a failed count is reported through ctx. */
static void run_trial(struct ktest_ctx *ctx, struct trial *tr, unsigned n,
		      const char *dir)
{
	struct rb_config c = {
		.subbuf_shift = RB_PAGE_SHIFT + n % 3,
		.nr_subbufs_shift = 1 + (n / 3) % 3,
		.mode = (n / 9) % 2 ? RB_OVERWRITE : RB_DISCARD,
		.page_index = (n / 18) % 2 ? RB_PAGES_LIST : RB_PAGES_ARRAY,
		.clock = test_clock,
	};
	static const unsigned read_every[] = {1, 7, 60, 400};
	char path[PATH_ROOM];
	unsigned long read = 0;

	memcpy(c.uuid, trace_uuid, RB_UUID_SIZE);
	tr->read_every = read_every[below(4)];
	ASSERT_EQ(rbt_init(&tr->t, &c, COMMIT_STRIDE), 0);
	tr->copy = malloc(tr->t.rb.subbuf_size);
	snprintf(path, sizeof(path), "%s/stream_%u", dir, n);
	tr->stream = fopen(path, "wb");
	ASSERT_TRUE(tr->stream != NULL);
	for (unsigned long i = 0;
	     tr->t.rb.offset < OFFSET_LAPS * tr->t.rb.buf_size &&
	     tr->attempts < MAX_ATTEMPTS;
	     i++) {
		emit(tr, 0);
		if (i % tr->read_every == 0)
			read_packets(tr);
	}
	rb_flush(&tr->t.rb);
	read_packets(tr);
	fclose(tr->stream);

	/* Every reserve is read back or counted lost (invariant 9). */
	for (unsigned long p = 0; p < tr->npkts; p++)
		read += tr->pkts[p].records;
	EXPECT_EQ(read + rb_lost_total(&tr->t.rb), tr->attempts);
	EXPECT_GT(tr->npkts, 0);
	if (tr->npkts)
		EXPECT_EQ(tr->pkts[tr->npkts - 1].discarded,
			  rb_lost_total(&tr->t.rb));
	for (unsigned cause = 0; cause < RB_LOST_NR; cause++)
		seen.lost[cause] += tr->t.rb.lost[cause];
	if (ctx->failed)
		ktest_diag("trial %u (%s): counts differ", n,
			   trial_geometry(tr));
}

/* Write dir/metadata; false if it did not fit. */
static bool write_metadata(const char *dir)
{
	char *meta = malloc(META_ROOM);
	char path[PATH_ROOM];
	size_t len = metadata(meta, trace_uuid);
	FILE *f;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	f = fopen(path, "w");
	if (f && len)
		fwrite(meta, 1, len, f);
	if (f)
		fclose(f);
	free(meta);
	return f && len;
}

/* Remove dir and the files the trials wrote there. */
static void remove_dir(const char *dir, unsigned trials)
{
	char path[PATH_ROOM];

	for (unsigned n = 0; n < trials; n++) {
		snprintf(path, sizeof(path), "%s/stream_%u", dir, n);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/metadata", dir);
	unlink(path);
	rmdir(dir);
}

KTEST(trace_export, kernel_events_records_are_their_ctf_layout)
{
	const char *bad = kernel_layouts();

	if (bad)
		ktest_diag("%s: TRACE_PAYLOAD_SIZE differs from the CTF layout",
			   bad);
	EXPECT_TRUE(bad == NULL);
}

KTEST(trace_export, random_streams_decode_as_written)
{
	static struct trial trials[TRIALS];
	static const char *const cause[RB_LOST_NR] = {
		"full", "too big", "nesting", "overwritten"};
	char dir[] = P_tmpdir "/trace_export_XXXXXX";
	char cmd[sizeof(dir) + 64];
	unsigned ran = 0;
	const char *bad = NULL;
	FILE *f;

	ASSERT_TRUE(access(EXTRACTOR, R_OK) == 0);
	ASSERT_TRUE(kernel_layouts() == NULL);
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	memset(&seen, 0, sizeof(seen)); /* this test's cases alone */
	rng = RNG_SEED;
	extra_layouts();
	for (unsigned i = 0; i < RB_UUID_SIZE; i++)
		trace_uuid[i] = (uint8_t)rnd();
	for (; ran < TRIALS && !ctx->failed; ran++) {
		rng = RNG_SEED * (ran + 2);
		clk = 1000;
		run_trial(ctx, &trials[ran], ran, dir);
	}
	ASSERT_TRUE(write_metadata(dir));
	/* One extractor run decodes every trial's stream, in order. */
	snprintf(cmd, sizeof(cmd), "python3 -m %s --decode %s 2>&1",
		 EXTRACTOR_MODULE, dir);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	for (unsigned n = 0; n < ran && !bad; n++) {
		bad = compare(ctx, &trials[n], n, f);
		if (bad || ctx->failed)
			ktest_diag("trial %u (%s): %s", n,
				   trial_geometry(&trials[n]),
				   bad ? bad : "counts differ");
	}
	if (!bad) {
		char extra[LINE_MAX_CHARS];

		if (fgets(extra, sizeof(extra), f))
			bad = "the extractor prints more than was written";
	}
	if (pclose(f) != 0 && !bad)
		bad = "the extractor failed";
	EXPECT_TRUE(bad == NULL);
	for (unsigned n = 0; n < ran; n++)
		trial_free(&trials[n]);
	if (bad || ctx->failed)
		ktest_diag("%s: files kept in %s", bad ? bad : "failed", dir);
	else
		remove_dir(dir, ran);
	ktest_diag("%lu packets; extended %lu, fast %lu, nested %lu, "
		   "crossing a page %lu; lost: full %lu, too big %lu, "
		   "nesting %lu, overwritten %lu; last-record tails 0x%x",
		   seen.packets, seen.extended, seen.fast, seen.nested,
		   seen.page_crossing, seen.lost[RB_LOST_FULL],
		   seen.lost[RB_LOST_TOO_BIG], seen.lost[RB_LOST_NESTING],
		   seen.lost[RB_LOST_OVERWRITTEN], seen.tails_last);
	if (ctx->failed)
		return;
	/* The property covered every case it is about. */
	for (unsigned c = 0; c < RB_LOST_NR; c++) {
		if (seen.lost[c] == 0)
			ktest_diag("no record lost as %s", cause[c]);
		EXPECT_GT(seen.lost[c], 0);
	}
	EXPECT_GT(seen.extended, 0);
	EXPECT_GT(seen.fast, 0);
	EXPECT_GT(seen.nested, 0);
	EXPECT_GT(seen.page_crossing, 0);
	EXPECT_EQ(seen.tails_last, 0xffu);
}

/* Where ctf_frame() writes the framed log (frame_sink()). */
static FILE *frame_log;

/* ctf_frame()'s writer: each line, then a console line between. */
static void frame_sink(const char *s, size_t n)
{
	fwrite(s, 1, n, frame_log);
	fputs("trace: console output between the framed lines\n", frame_log);
}

/* Contents of the file at path (*len bytes, malloc'd), NULL if unread. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		rewind(f);
		b = malloc((size_t)n + 1);
		*len = fread(b, 1, (size_t)n, f);
	}
	if (f)
		fclose(f);
	return b;
}

/* Run the extractor with args; its output in out. Returns its status. */
static int extract(const char *args, char *out, size_t room)
{
	char cmd[4 * PATH_ROOM];
	size_t len = 0;
	FILE *f;
	int status;

	snprintf(cmd, sizeof(cmd), "python3 %s %s 2>&1", EXTRACTOR, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	len = fread(out, 1, room - 1, f);
	out[len] = '\0';
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Is file name in dir byte for byte want[0..len)? */
static bool same_file(const char *dir, const char *name, const void *want,
		      size_t len)
{
	char path[PATH_ROOM];
	size_t got_len = 0;
	uint8_t *got;
	bool same;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	got = slurp(path, &got_len);
	same = got && got_len == len && memcmp(got, want, len) == 0;
	free(got);
	return same;
}

/*
 * The other half of the extractor against the encoder: files framed by
 * ctf_frame() (the kernel's serial framing) between console lines come
 * back byte for byte; a damaged chunk and a packet whose content_size
 * passes its end are refused with a message and status 1.
 */
KTEST(trace_export, framed_log_extracts_byte_for_byte)
{
	static struct trial tr;
	char dir[] = P_tmpdir "/trace_frame_XXXXXX";
	char path[PATH_ROOM], args[3 * PATH_ROOM], out[LINE_MAX_CHARS];
	char *meta = malloc(META_ROOM), *chunk;
	size_t meta_len, stream_len = 0, log_len = 0;
	uint8_t *stream, *log;
	struct rb_packet_header h;

	ASSERT_TRUE(meta != NULL);
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	rng = RNG_SEED;
	extra_layouts();
	clk = 1000;
	run_trial(ctx, &tr, 0, dir); /* writes dir/stream_0 */
	meta_len = metadata(meta, trace_uuid);
	snprintf(path, sizeof(path), "%s/stream_0", dir);
	stream = slurp(path, &stream_len);
	ASSERT_TRUE(stream != NULL && stream_len >= sizeof(h) && meta_len);
	struct ctf_file files[] = {{"metadata", meta, meta_len},
				   {"stream_0", stream, stream_len}};

	/* Framed, extracted: the same bytes. */
	snprintf(path, sizeof(path), "%s/log", dir);
	frame_log = fopen(path, "w");
	ASSERT_TRUE(frame_log != NULL);
	EXPECT_GT(ctf_frame(frame_sink, files, 2), 2);
	fclose(frame_log);
	snprintf(args, sizeof(args), "%s %s/out", path, dir);
	EXPECT_EQ(extract(args, out, sizeof(out)), 0);
	snprintf(path, sizeof(path), "%s/out", dir);
	EXPECT_TRUE(same_file(path, "metadata", meta, meta_len));
	EXPECT_TRUE(same_file(path, "stream_0", stream, stream_len));

	/* One base64 character changed in the first chunk: refused. */
	snprintf(path, sizeof(path), "%s/log", dir);
	log = slurp(path, &log_len);
	ASSERT_TRUE(log != NULL);
	log[log_len] = '\0';
	chunk = strstr((char *)log, "@@TRACE-CHUNK");
	ASSERT_TRUE(chunk != NULL);
	chunk = strchr(chunk, '\n') - 2; /* inside the base64, not '=' */
	*chunk = *chunk == 'A' ? 'B' : 'A';
	frame_log = fopen(path, "w");
	ASSERT_TRUE(frame_log != NULL);
	fwrite(log, 1, log_len, frame_log);
	fclose(frame_log);
	free(log);
	EXPECT_EQ(extract(args, out, sizeof(out)), 1);
	EXPECT_TRUE(strstr(out, "damaged trace") != NULL);

	/* The first packet's content_size past its end: refused. */
	memcpy(&h, stream, sizeof(h));
	h.content_size = h.packet_size + 8;
	memcpy(stream, &h, sizeof(h));
	snprintf(path, sizeof(path), "%s/out/stream_0", dir);
	frame_log = fopen(path, "wb");
	ASSERT_TRUE(frame_log != NULL);
	fwrite(stream, 1, stream_len, frame_log);
	fclose(frame_log);
	snprintf(args, sizeof(args), "--decode %s/out", dir);
	EXPECT_EQ(extract(args, out, sizeof(out)), 1);
	EXPECT_TRUE(strstr(out, "content_size") != NULL);
	if (ctx->failed)
		ktest_diag("extractor said: %s; files kept in %s", out, dir);
	else {
		const char *const names[] = {"out/metadata", "out/stream_0",
					     "out", "log", "stream_0"};

		for (unsigned i = 0; i < 5; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			if (remove(path))
				ktest_diag("could not remove %s", path);
		}
		rmdir(dir);
	}
	trial_free(&tr);
	free(stream);
	free(meta);
}
