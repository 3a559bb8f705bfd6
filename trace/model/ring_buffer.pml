/*
 * Promela model of trace/ring_buffer.c, checked with spin (make test runs
 * tools/checks/spin_check.sh): one CPU's buffer, a thread writer and an
 * interrupt handler that can nest anywhere inside it (a writer on the
 * same CPU), and a reader on another CPU. Build with -DDISCARD for
 * discard mode, else overwrite mode (reader spare swap).
 *
 * Each statement is atomic, as one instruction is: the CPU-local CAS and
 * xadd are single statements; the reader's and the claim's locked CAS
 * too. The thread writer runs only while no interrupt is in progress
 * ("provided"), which is what nesting on one CPU means; the reader runs
 * in parallel with both.
 *
 * Writers first try the fast path (rb_emit_fast()): the record goes
 * through the write window win points at, if it fits before the
 * window's end, with one CAS on the offset; the window's fields are read
 * one per statement after the CAS, as the C code may. Otherwise the
 * general path reserves it and, when win does not cover it, publishes
 * the window of its page (rb_window_publish(): end 0, the fields, then
 * end, one statement each, so a nesting interrupt sees any prefix).
 *
 * Sizes are in units: a sub-buffer holds a 1-unit header, then 2-unit
 * records. By default a sub-buffer is one 6-unit page (two records, so
 * five records lap the two slots: claims, overwrite and reader swaps
 * happen); -DPAGES makes it two 7-unit pages after a 3-unit header, so
 * the thread's third record opens page 1 and both interrupt records fit
 * behind it (a window published while an interrupt nests), at the cost
 * of no lap. Windows start with fields that point nowhere (as memory
 * through a zero base would), so a fast write through a half-published
 * window is caught. Each record's units carry its tag, written one unit per
 * statement, so a reader that copies a half-written record sees two
 * different tags (torn). Ghost bitmasks follow every record: held[P] (in
 * physical sub-buffer P), delivered, lost_over (counted overwritten),
 * lost_full. Checked: no record both delivered and lost, none torn or
 * read twice, the records count of a packet equals what is in it, and
 * at the end delivered + lost == emitted, as sets and as counts.
 *
 * Deliberate bugs, each of which the check must catch (make test runs
 * them and expects a failure): -DPAGES -DBUG_WINDOW_ORDER publishes a
 * window's end before its fields (no invalidation first);
 * -DBUG_FAST_NO_DELIVER leaves out the fast path's delivery test (a fast
 * commit that completes a sub-buffer after a nested writer closed it),
 * caught by the end check that every complete lap was delivered.
 */
#define N      2            /* slots (sub-buffers) */
#define NPHYS  3            /* physical sub-buffers: N + the spare */
#ifdef PAGES
#define SB     14           /* units per sub-buffer: two pages */
#define PG     7            /* units per page */
#define HDR    3
#else
#define SB     6            /* units per sub-buffer: one page */
#define PG     SB
#define HDR    1
#endif
#define RSZ    2
#define BUF    (N * SB)
#define PPS    (SB / PG)    /* pages per sub-buffer */
#define NW     (N * PPS)    /* windows: one per slot and page */
#define NEVER  255          /* lap tag of a slot never written */
#define ALL    62           /* tags 1..5 */

byte offset;                /* free-running write offset */
byte commit[N];             /* bytes committed per slot, all laps */
byte wsb_id[N];             /* slot word: physical id, NOREF, lap */
bool wsb_noref[N];
byte wsb_lap[N];
byte records[NPHYS];        /* records held by a physical sub-buffer */
byte held[NPHYS];           /* ghost: which ones (bit per tag) */
byte mem[NPHYS * SB];       /* a tag per unit; 0 = header/never */
byte content[NPHYS];        /* content size written by the close */
byte consumed;
byte spare = N;
byte nr_lost_full, nr_lost_over, nr_read;
byte delivered, lost_over, lost_full; /* ghost sets */
bool in_irq, irq_done, writer_done;
/* Write windows (struct rb_window), all 0 at first; win = 0 (end 0). */
byte wend[NW];              /* o + RSZ <= end fits; 0 covers nothing */
short wbase[NW];            /* record at offset o: mem[base + o] */
byte wcs[NW];               /* commit counter's slot */
byte wcend[NW];             /* commit value that completes the lap */
byte wrec[NW];              /* records[] index (physical) */
byte win;

/* CAS on the slot word (a locked cmpxchg; one statement). */
inline wsb_cas(s, oid, onr, olap, nid, nnr, nlap, ok)
{
	atomic {
		if
		:: wsb_id[s] == oid && wsb_noref[s] == onr && wsb_lap[s] == olap ->
			wsb_id[s] = nid; wsb_noref[s] = nnr; wsb_lap[s] = nlap;
			ok = 1
		:: else -> ok = 0
		fi
	}
}

/* rb_claim(): the first writer of a lap in a slot. */
inline claim(s, lap, phys)
{
	atomic { cid = wsb_id[s]; cnr = wsb_noref[s]; clap = wsb_lap[s] };
	do
	:: clap == lap -> phys = cid; break
	:: else ->
		h = records[cid]; hset = held[cid];
		wsb_cas(s, cid, cnr, clap, cid, 0, lap, ok);
		if
		:: ok ->
			atomic {
				records[cid] = records[cid] - h;
				held[cid] = held[cid] ^ hset;
				assert((lost_over & hset) == 0);
				assert((delivered & hset) == 0);
				lost_over = lost_over | hset
			};
			nr_lost_over = nr_lost_over + h;
			phys = cid; break
		:: else ->
			atomic { cid = wsb_id[s]; cnr = wsb_noref[s];
				 clap = wsb_lap[s] }
		fi
	od
}

/* Add n units to slot s's commit count; deliver when lap is complete. */
inline commit_add(s, lap, phys, n)
{
	atomic { cold = commit[s]; commit[s] = cold + n };
	if
	:: cold + n == (lap + 1) * SB ->
		wsb_cas(s, phys, 0, lap, phys, 1, lap, ok) /* may fail: inv. 6 */
	:: else
	fi
}

/* End the packet whose content ends at o (not a boundary). */
inline close(o)
{
	cs = (o / SB) % N;
	cphys = wsb_id[cs];
	content[cphys] = o % SB;
	commit_add(cs, o / BUF, cphys, SB - o % SB)
}

/* Start the packet at boundary st: claim, header, commit the header. */
inline open(st)
{
	claim((st / SB) % N, st / BUF, ophys);
	mem[ophys * SB] = 0;
	commit_add((st / SB) % N, st / BUF, ophys, HDR)
}

/* rb_window_publish(): the window of begin's page, then win. */
inline publish(begin, phys)
{
	pw = ((begin / SB) % N) * PPS + (begin % SB) / PG;
	pf = begin - begin % PG;
	pe = pf + PG;
	if :: pe % SB == 0 -> pe = pe - 1 :: else fi;
	if
	:: wend[pw] != pe ->
#ifdef BUG_WINDOW_ORDER
		wend[pw] = pe;
#else
		wend[pw] = 0;
#endif
		wbase[pw] = phys * SB + pf % SB - pf;
		wcs[pw] = (begin / SB) % N;
		wcend[pw] = (begin / BUF + 1) * SB;
		wrec[pw] = phys;
		wend[pw] = pe
	:: else
	fi;
	win = pw
}

/* The general path: rb_reserve(), write, rb_commit(). */
inline emit_general(tag)
{
	do
	:: o = offset; off = o % SB;
		if
		:: off != 0 && off + RSZ < SB ->
			atomic { if :: offset == o -> offset = o + RSZ; ok = 1
				 :: else -> ok = 0 fi };
			if :: ok -> begin = o; break :: else fi
		:: else ->
			if :: off != 0 -> st = o - off + SB :: else -> st = o fi;
			if
			:: commit[(st / SB) % N] != (st / BUF) * SB ->
				lost = 1; break
#ifdef DISCARD
			:: st - consumed >= BUF -> lost = 1; break
#endif
			:: else ->
				atomic { if :: offset == o -> offset = st + HDR + RSZ; ok = 1
					 :: else -> ok = 0 fi };
				if
				:: ok ->
					if :: off != 0 -> close(o) :: else fi;
					open(st);
					begin = st + HDR; break
				:: else
				fi
			fi
		fi
	od;
	if
	:: lost ->
		atomic { assert((delivered & (1 << tag)) == 0);
			 lost_full = lost_full | (1 << tag) };
		nr_lost_full++
	:: else ->
		/* rb_reserved(): claim if this slot's lap is not ours yet */
		atomic { rs = (begin / SB) % N; rlap = begin / BUF;
			 rid = wsb_id[rs]; rl = wsb_lap[rs] };
		if :: rl != rlap -> claim(rs, rlap, rid) :: else fi;
		if :: wend[win] <= begin -> publish(begin, rid) :: else fi;
		mem[rid * SB + begin % SB] = tag;
		mem[rid * SB + begin % SB + 1] = tag;
		atomic { records[rid]++; held[rid] = held[rid] | (1 << tag) };
		commit_add(rs, rlap, rid, RSZ)
	fi
}

/* One record: the fast path, else reserve, write, count, commit. */
inline emit(tag)
{
	lost = 0;
	/* rb_emit_fast() */
	o = offset;
	w = win;
	if
	:: o + RSZ <= wend[w] ->
		atomic { if :: offset == o -> offset = o + RSZ; ok = 1
			 :: else -> ok = 0 fi }
	:: else -> ok = 0
	fi;
	if
	:: ok ->
		b = wbase[w];
		rp = wrec[w];
		assert(b + o >= rp * SB && b + o + RSZ <= rp * SB + SB);
		mem[b + o] = tag;
		mem[b + o + 1] = tag;
		atomic { records[rp]++; held[rp] = held[rp] | (1 << tag) };
		rs = wcs[w];
		ce = wcend[w];
		atomic { cold = commit[rs]; commit[rs] = cold + RSZ };
#ifndef BUG_FAST_NO_DELIVER
		if
		:: cold + RSZ == ce ->
			wsb_cas((o / SB) % N, rp, 0, o / BUF, rp, 1, o / BUF, ok)
		:: else
		fi
#endif
	:: else -> emit_general(tag)
	fi
}

proctype thread_writer() provided (!in_irq)
{
	byte o, off, st, begin, cs, cphys, ophys, cold, rs, rlap, rid, rl;
	byte cid, clap, h, hset, w, rp, ce, pw, pf, pe;
	short b;
	bool cnr, ok, lost;

	emit(1); emit(2); emit(3);
	irq_done;              /* the interrupt may still come until here */
	/* rb_flush() */
	do
	:: o = offset; off = o % SB;
		if
		:: off == 0 -> break
		:: else ->
			atomic { if :: offset == o -> offset = o - off + SB; ok = 1
				 :: else -> ok = 0 fi };
			if :: ok -> close(o); break :: else fi
		fi
	od;
	writer_done = 1
}

proctype irq()
{
	byte o, off, st, begin, cs, cphys, ophys, cold, rs, rlap, rid, rl;
	byte cid, clap, h, hset, w, rp, ce, pw, pf, pe;
	short b;
	bool cnr, ok, lost;

	in_irq = 1;
	emit(4); emit(5);
	in_irq = 0;
	irq_done = 1
}

/* Copy out and check the packet in physical sub-buffer p. */
inline read_packet(p)
{
	u = HDR; n = 0; seen = 0;
	do
	:: u < content[p] ->
		t1 = mem[p * SB + u]; t2 = mem[p * SB + u + 1];
		assert(t1 == t2 && t1 != 0);               /* not torn */
		assert((delivered & (1 << t1)) == 0);      /* not read twice */
		assert((lost_over & (1 << t1)) == 0);      /* not also lost */
		seen = seen | (1 << t1);
		n++; u = u + RSZ
	:: else -> break
	od;
	assert(n == records[p] && seen == held[p]);
	atomic { delivered = delivered | seen; records[p] = 0; held[p] = 0 };
	nr_read = nr_read + n
}

proctype reader()
{
	byte c, s, lap, wid, wl, o, oldest, u, n, t1, t2, seen, p;
	bool wnr, ok, fin;

	do
	:: fin = writer_done;
		c = consumed; s = (c / SB) % N; lap = c / BUF;
#ifdef DISCARD
		if
		:: commit[s] == (lap + 1) * SB ->
			p = wsb_id[s];
			read_packet(p);
			consumed = c + SB
		:: else -> if :: fin -> break :: else fi
		fi
#else
		atomic { wid = wsb_id[s]; wnr = wsb_noref[s]; wl = wsb_lap[s] };
		if
		:: wl != NEVER && wl > lap ->      /* overwritten: skip on */
			o = offset; oldest = o - o % SB;
			if :: o % SB != 0 -> oldest = oldest + SB :: else fi;
			if
			:: o > BUF && oldest - BUF > c -> consumed = oldest - BUF
			:: else -> consumed = c + SB
			fi
		:: wl == lap && wnr ->
			wsb_cas(s, wid, 1, lap, spare, 1, lap, ok);
			if
			:: ok -> spare = wid; read_packet(wid); consumed = c + SB
			:: else
			fi
		:: else -> if :: fin -> break :: else fi
		fi
#endif
	od;
	/* Everything emitted is delivered or counted lost, exactly. */
	assert((delivered & lost_over) == 0 && (delivered & lost_full) == 0);
	assert((delivered | lost_over | lost_full) == ALL);
	assert(nr_read + nr_lost_over + nr_lost_full == 5);
	/* Every complete lap was delivered (unless the next claimed it). */
	s = 0;
	do
	:: s < N ->
		assert(wsb_lap[s] == NEVER ||
		       commit[s] != (wsb_lap[s] + 1) * SB || wsb_noref[s]);
		s++
	:: else -> break
	od
}

/* rb_init(): slot i holds physical i, never written; then start. */
init
{
	byte w;

	atomic {
		wsb_id[0] = 0; wsb_noref[0] = 1; wsb_lap[0] = NEVER;
		wsb_id[1] = 1; wsb_noref[1] = 1; wsb_lap[1] = NEVER;
		do
		:: w < NW -> wbase[w] = -BUF; wrec[w] = NPHYS; w++
		:: else -> break
		od;
		run thread_writer(); run irq(); run reader()
	}
}
