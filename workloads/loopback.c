/*
 * loopback: SPSC byte rings with copy-in/copy-out (see loopback.h).
 */
#include "workloads/loopback.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "lib/string.h"
#include "trace/tracepoint.h"

void loopback_ring_init(struct loopback_ring *r, void *buf, size_t size)
{
	kassert(buf && size >= 2 && (size & (size - 1)) == 0);
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->size = size;
}

void loopback_init(struct loopback *lb, void *req_buf, void *rep_buf,
		   size_t size)
{
	loopback_ring_init(&lb->req, req_buf, size);
	loopback_ring_init(&lb->rep, rep_buf, size);
}

size_t loopback_ring_used(const struct loopback_ring *r)
{
	return (size_t)(atomic_load_acquire(&r->head) -
			atomic_load_acquire(&r->tail));
}

size_t loopback_ring_free(const struct loopback_ring *r)
{
	return r->size - loopback_ring_used(r);
}

size_t loopback_ring_write_some(struct loopback_ring *r, const void *src,
				size_t len)
{
	uint64_t head = atomic_load_relaxed(&r->head); /* ours */
	uint64_t tail = atomic_load_acquire(&r->tail);
	size_t room = r->size - (size_t)(head - tail);
	size_t n = MIN(len, room), at = head & (r->size - 1);
	size_t first = MIN(n, r->size - at);

	kassert(head - tail <= r->size);
	/* Two pieces when the copy wraps past the end of the buffer. */
	memcpy(r->buf + at, src, first);
	memcpy(r->buf, (const uint8_t *)src + first, n - first);
	atomic_store_release(&r->head, head + n);
	r->bytes_in += n;
	return n;
}

size_t loopback_ring_read_some(struct loopback_ring *r, void *dst, size_t len)
{
	uint64_t tail = atomic_load_relaxed(&r->tail); /* ours */
	uint64_t head = atomic_load_acquire(&r->head);
	size_t avail = (size_t)(head - tail);
	size_t n = MIN(len, avail), at = tail & (r->size - 1);
	size_t first = MIN(n, r->size - at);

	kassert(head - tail <= r->size);
	memcpy(dst, r->buf + at, first);
	memcpy((uint8_t *)dst + first, r->buf, n - first);
	atomic_store_release(&r->tail, tail + n);
	r->bytes_out += n;
	return n;
}

void loopback_send(struct loopback_ring *r, const void *src, size_t len)
{
	const uint8_t *p = src;

	trace_point(net_send, (uintptr_t)r, len);
	while (len) {
		size_t n = loopback_ring_write_some(r, p, len);

		if (!n) {
			r->full_spins++;
			cpu_relax();
			continue;
		}
		trace_point(net_enqueue, (uintptr_t)r, (uint32_t)n);
		p += n;
		len -= n;
	}
}

void loopback_recv(struct loopback_ring *r, void *dst, size_t len)
{
	uint8_t *p = dst;
	uint32_t spins = 0; /* empty polls since the last data */

	trace_point(net_receive, (uintptr_t)r, len);
	while (len) {
		size_t n = loopback_ring_read_some(r, p, len);

		if (!n) {
			r->empty_spins++;
			spins++;
			cpu_relax();
			continue;
		}
		if (spins) {
			trace_point(net_wakeup, (uintptr_t)r, spins);
			spins = 0;
		}
		trace_point(net_dequeue, (uintptr_t)r, (uint32_t)n);
		p += n;
		len -= n;
	}
}
