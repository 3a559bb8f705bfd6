/*
 * Host tests for workloads/loopback.c under ThreadSanitizer: a producer
 * and a consumer pthread stream messages of varying length through rings
 * far smaller than the messages, so every copy wraps; the consumer checks
 * each byte's position. TSan checks the head/tail hand-over.
 */
// HOST_SRCS: workloads/loopback.c
// HOST_SANITIZE: thread
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "lib/ktest.h"
#include "workloads/loopback.h"

#define MSGS 3000
#define MAX_MSG 777

static uint8_t byte_at(uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 11));
}

static size_t msg_len(unsigned m)
{
	return 1 + (m * 53u) % MAX_MSG;
}

struct stream {
	struct loopback_ring ring;
	uint64_t errors, received;
};

static void *consumer(void *arg)
{
	struct stream *s = arg;
	uint8_t buf[MAX_MSG];
	uint64_t pos = 0;

	for (unsigned m = 0; m < MSGS; m++) {
		size_t n = msg_len(m);

		loopback_recv(&s->ring, buf, n);
		for (size_t i = 0; i < n; i++, pos++)
			s->errors += buf[i] != byte_at(pos);
	}
	s->received = pos;
	return NULL;
}

static uint64_t produce(struct stream *s)
{
	uint8_t buf[MAX_MSG];
	uint64_t pos = 0;

	for (unsigned m = 0; m < MSGS; m++) {
		size_t n = msg_len(m);

		for (size_t i = 0; i < n; i++)
			buf[i] = byte_at(pos++);
		loopback_send(&s->ring, buf, n);
	}
	return pos;
}

static void run_stream(struct ktest_ctx *ctx, size_t ring_size)
{
	static uint8_t mem[4096];
	struct stream s;
	pthread_t t;
	uint64_t sent;

	memset(&s, 0, sizeof(s));
	loopback_ring_init(&s.ring, mem, ring_size);
	ASSERT_EQ(pthread_create(&t, NULL, consumer, &s), 0);
	sent = produce(&s);
	pthread_join(t, NULL);
	EXPECT_EQ(s.errors, 0);
	EXPECT_EQ(s.received, sent);
	EXPECT_EQ(s.ring.bytes_in, sent);
	EXPECT_EQ(s.ring.bytes_out, sent);
	EXPECT_EQ(loopback_ring_used(&s.ring), 0);
}

KTEST(loopback, stream_tiny_ring)
{
	run_stream(ctx, 16);
}

KTEST(loopback, stream_page_ring)
{
	run_stream(ctx, 4096);
}

/* Request/reply ping-pong over a struct loopback, as tbench uses it. */
struct pingpong {
	struct loopback lb;
	uint8_t req[256], rep[256];
};

#define ROUNDS 2000

static void *server(void *arg)
{
	struct pingpong *p = arg;
	uint32_t v;

	for (;;) {
		loopback_recv(&p->lb.req, &v, sizeof(v));
		if (v == UINT32_MAX)
			return NULL;
		v = v * 3 + 1;
		loopback_send(&p->lb.rep, &v, sizeof(v));
	}
}

KTEST(loopback, request_reply)
{
	static struct pingpong p;
	uint32_t v, bad = 0, quit = UINT32_MAX;
	pthread_t t;

	loopback_init(&p.lb, p.req, p.rep, sizeof(p.req));
	ASSERT_EQ(pthread_create(&t, NULL, server, &p), 0);
	for (uint32_t i = 0; i < ROUNDS; i++) {
		loopback_send(&p.lb.req, &i, sizeof(i));
		loopback_recv(&p.lb.rep, &v, sizeof(v));
		bad += v != i * 3 + 1;
	}
	loopback_send(&p.lb.req, &quit, sizeof(quit));
	pthread_join(t, NULL);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(p.lb.req.bytes_out, (ROUNDS + 1) * sizeof(uint32_t));
}
