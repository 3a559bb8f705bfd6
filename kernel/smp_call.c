/*
 * Cross-CPU calls, work slots and barriers (see smp_call.h).
 *
 * Call queue protocol, per target CPU T:
 *   sender: interrupts off; lock T's queue; append; unlock; if the queue
 *           was empty, send T a VEC_IPI_CALL (otherwise one is already on
 *           its way or T is draining and will see the entry: T re-checks
 *           under the lock before it stops).
 *   T:      in the IPI handler, EOI, then pop and run entries until the
 *           queue is empty; after each, decrement the sender's pending
 *           count (release), which the sender polls (acquire).
 * A sender waiting for a full queue or for its pending count drains its
 * own queue meanwhile, so two CPUs calling each other make progress.
 */
#include "arch/x86_64/apic.h"
#include "arch/x86_64/cpu.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "kernel/smp_call.h"
#include "lib/assert.h"
#include "lib/atomic.h"
#include "trace/tracepoint.h"
#include "lib/rcu.h"

static uint64_t calls_handled;

unsigned smp_this_cpu(void)
{
	return percpu_ready() ? this_cpu_id() : 0;
}

bool smp_cpu_online(unsigned cpu)
{
	struct percpu *p = percpu_of(cpu);

	return p && atomic_load_acquire(&p->online);
}

unsigned smp_cpus_online(void)
{
	unsigned n = 0;

	for (unsigned cpu = 0; cpu < percpu_count(); cpu++)
		n += smp_cpu_online(cpu);
	return n;
}

void cpumask_online(struct cpumask *m, bool but_self)
{
	cpumask_clear(m);
	for (unsigned cpu = 0; cpu < percpu_count(); cpu++)
		if (smp_cpu_online(cpu) && !(but_self && cpu == smp_this_cpu()))
			cpumask_set(m, cpu);
}

unsigned cpumask_weight(const struct cpumask *m)
{
	unsigned n = 0;

	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		for (uint64_t w = m->bits[i]; w; w &= w - 1)
			n++;
	return n;
}

uint64_t smp_calls_handled(void)
{
	return atomic_load_relaxed(&calls_handled);
}

/* Run every queued entry of this CPU. Interrupts must be off. */
static void drain_own_queue(void)
{
	struct percpu *self = this_cpu();
	struct smp_call_queue *q = &self->calls;

	kassert(!(read_rflags() & RFLAGS_IF));
	for (;;) {
		struct smp_call_entry e;

		spin_lock(&q->lock);
		if (q->head == q->tail) {
			spin_unlock(&q->lock);
			return;
		}
		e = q->e[q->head % SMP_CALL_QUEUE_LEN];
		q->head++;
		spin_unlock(&q->lock);

		e.fn(e.arg);
		self->ipi_count++;
		atomic_fetch_add_relaxed(&calls_handled, 1);
		if (e.pending)
			atomic_fetch_sub_release(e.pending, 1);
	}
}

static void call_ipi_handler(struct trap_frame *f __unused)
{
	bool was_idle;

	apic_eoi();
	/* A quiescent point only if the interrupted code is not reading. */
	rcu_qs_unless_reading();
	/* The calls may read: a halted CPU leaves RCU's idle state. */
	was_idle = rcu_irq_enter();
	drain_own_queue();
	rcu_irq_exit(was_idle);
}

static void wake_ipi_handler(struct trap_frame *f __unused)
{
	apic_eoi();
}

void smp_call_init(void)
{
	trap_register(VEC_IPI_CALL, call_ipi_handler);
	trap_register(VEC_IPI_WAKE, wake_ipi_handler);
}

static void enqueue(struct percpu *t, const struct smp_call_entry *e)
{
	struct smp_call_queue *q = &t->calls;
	uint64_t flags = cpu_irq_save();
	bool was_empty;

	for (;;) {
		spin_lock(&q->lock);
		if (q->tail - q->head < SMP_CALL_QUEUE_LEN)
			break;
		spin_unlock(&q->lock);
		drain_own_queue();
		cpu_relax();
	}
	was_empty = q->head == q->tail;
	q->e[q->tail % SMP_CALL_QUEUE_LEN] = *e;
	q->tail++;
	spin_unlock(&q->lock);
	if (was_empty)
		apic_send_ipi(t->apic_id, VEC_IPI_CALL);
	cpu_irq_restore(flags);
}

unsigned smp_call(const struct cpumask *mask, void (*fn)(void *), void *arg,
		  bool wait)
{
	unsigned self = smp_this_cpu(), sent = 0;
	uint32_t pending = 0;
	struct smp_call_entry e = {fn, arg, wait ? &pending : NULL};

	for (unsigned cpu = 0; cpu < percpu_count(); cpu++)
		if (cpu != self && cpumask_test(mask, cpu) &&
		    smp_cpu_online(cpu))
			sent++;
	trace_point(smp_call, sent, (uintptr_t)fn);
	/* Set the whole count first: a fast target must not see zero. */
	atomic_store_relaxed(&pending, sent);
	for (unsigned cpu = 0, n = 0; cpu < percpu_count() && n < sent;
	     cpu++) {
		if (cpu == self || !cpumask_test(mask, cpu) ||
		    !smp_cpu_online(cpu))
			continue;
		enqueue(percpu_of(cpu), &e);
		n++;
	}
	if (cpumask_test(mask, self)) {
		uint64_t flags = cpu_irq_save();

		fn(arg);
		cpu_irq_restore(flags);
	}
	while (wait && atomic_load_acquire(&pending) != 0) {
		uint64_t flags = cpu_irq_save();

		rcu_qs_unless_reading();
		drain_own_queue();
		cpu_irq_restore(flags);
		cpu_relax();
	}
	return sent + cpumask_test(mask, self);
}

bool smp_work_post(unsigned cpu, void (*fn)(void *), void *arg)
{
	struct percpu *p = percpu_of(cpu);
	struct work_slot *w;

	if (!p || cpu == smp_this_cpu() || !atomic_load_acquire(&p->online))
		return false;
	w = &p->work;
	/* One poster per slot at a time (the caller's protocol). */
	if (atomic_load_acquire(&w->done) != atomic_load_relaxed(&w->posted))
		return false;
	w->fn = fn;
	w->arg = arg;
	atomic_store_release(&w->posted, w->posted + 1);
	apic_send_ipi(p->apic_id, VEC_IPI_WAKE);
	return true;
}

void smp_work_wait(unsigned cpu)
{
	struct percpu *p = percpu_of(cpu);

	kassert(p);
	while (atomic_load_acquire(&p->work.done) !=
	       atomic_load_relaxed(&p->work.posted)) {
		rcu_qs_unless_reading();
		cpu_relax();
	}
}

unsigned smp_run_on(const struct cpumask *mask, void (*fn)(void *),
		    void *arg)
{
	unsigned self = smp_this_cpu(), n = 0;

	for (unsigned cpu = 0; cpu < percpu_count(); cpu++) {
		if (cpu == self || !cpumask_test(mask, cpu) ||
		    !smp_cpu_online(cpu))
			continue;
		/* A busy slot finishes its item: wait for it rather than
		 * leave this CPU out of a run whose barriers count it. */
		smp_work_wait(cpu);
		if (smp_work_post(cpu, fn, arg))
			n++;
	}
	if (cpumask_test(mask, self)) {
		fn(arg);
		n++;
	}
	for (unsigned cpu = 0; cpu < percpu_count(); cpu++)
		if (cpu != self && cpumask_test(mask, cpu) &&
		    smp_cpu_online(cpu))
			smp_work_wait(cpu);
	return n;
}

void smp_barrier_init(struct smp_barrier *b, unsigned n)
{
	kassert(n > 0);
	b->n = n;
	b->waiting = 0;
	b->generation = 0;
}

void smp_barrier_wait(struct smp_barrier *b)
{
	uint32_t gen = atomic_load_acquire(&b->generation);

	if (atomic_fetch_add_acq_rel(&b->waiting, 1) + 1 == b->n) {
		/* Last in: reset before releasing, so the barrier can be
		 * reused by CPUs that race ahead. */
		atomic_store_relaxed(&b->waiting, 0);
		atomic_store_release(&b->generation, gen + 1);
		return;
	}
	while (atomic_load_acquire(&b->generation) == gen) {
		rcu_qs_unless_reading();
		cpu_relax();
	}
}

/* Between work items nothing is held: a full quiescent state, and the
 * place where this CPU runs RCU callbacks. */
__attribute__((noinline)) void cpu_quiescent_hook(void)
{
	rcu_quiescent_state();
}

static void rcu_kick_noop(void *arg __unused)
{
}

void rcu_kick_cpu(unsigned cpu)
{
	struct cpumask one;

	cpumask_clear(&one);
	cpumask_set(&one, cpu);
	/* The IPI handler itself reports the quiescent state. */
	smp_call(&one, rcu_kick_noop, NULL, false);
}

void smp_work_loop(void)
{
	struct work_slot *w = &this_cpu()->work;

	rcu_idle_exit();
	for (;;) {
		uint64_t seq;

		cpu_quiescent_hook();
		cpu_cli();
		seq = atomic_load_acquire(&w->posted);
		if (seq == atomic_load_relaxed(&w->done)) {
			/* Halted, this CPU reads nothing: grace periods do
			 * not wait for it (an extended quiescent state).
			 * A wake IPI after the check ends the hlt. */
			rcu_idle_enter();
			cpu_sti_hlt();
			rcu_idle_exit();
			continue;
		}
		cpu_sti();
		w->fn(w->arg);
		atomic_store_release(&w->done, seq);
	}
}
