// The ia64 instruction sequences the model in this directory stands for:
// Linux/ia64's range purge with ptc.ga (ia64_global_tlb_purge), the
// local range purge with ptc.l (flush_tlb_range on a space only this CPU
// has), the ptc.e loop that empties this CPU's translation cache
// (local_flush_tlb_all) and the region-register load of a space's IDs
// (reload_context). Reference code: assembled and disassembled by
// `make test` with GNU binutils for ia64, never run.
//
// Written with explicit bundles ({ .mii ... }) and stops (;;), checked
// with `as -x` (dependency-violation checking). Rules followed:
//  - ptc.g/ptc.ga must be the last instruction of an instruction group;
//  - srlz.i stands alone in its group, so the next group's fetch sees
//    the purge;
//  - a stop separates a register write from its readers (br.cloop and a
//    compare feeding a branch are the architecture's exceptions).
// Calling convention: arguments in in0..in4 (r32..), scratch r16-r23.

	.text
	.explicit

// The pieces the routines share, one macro each (the same bundles in
// every routine that uses them).

// The return, a bundle of its own.
	.macro RETURN
{ .mib
	nop.m 0
	nop.i 0
	br.ret.sptk.many b0 ;;
}
	.endm

// srlz.i alone in its group, then the return: the end of a routine that
// changed this CPU's translations without a serialization of its own.
	.macro SERIALIZE_RETURN
{ .mmi
	srlz.i ;;
	nop.m 0
	nop.i 0
}
	RETURN
	.endm

// Back to target while p6 is set: the loop's branch, a bundle of its own.
	.macro LOOP_IF_P6 target
{ .mib
	nop.m 0
	nop.i 0
(p6)	br.cond.dptk.few \target ;;
}
	.endm

// The set-up of a range purge (start in0, end in1, nbits in2): r17 the
// purge's size operand (nbits in bits 7:2), r18 the bytes per purge.
	.macro RANGE_PURGE_SETUP
{ .mii
	alloc r16 = ar.pfs, 3, 0, 0, 0
	shl r17 = in2, 2
	mov r18 = 1 ;;
}
{ .mii
	nop.m 0
	shl r18 = r18, in2 ;;
	nop.i 0
}
	.endm

// void ia64_ptcga_range(u64 start, u64 end, u64 nbits)
// Purge [start, end) from every CPU's TLB, 2^nbits bytes per ptc.ga,
// under the region IDs now in this CPU's region registers.
	.align 32
	.global ia64_ptcga_range
	.proc ia64_ptcga_range
ia64_ptcga_range:
	RANGE_PURGE_SETUP
.Lptcga_next:
{ .mmi
	ptc.ga in0, r17 ;;		// broadcast purge; ends its group
	srlz.i				// alone in its group
	nop.i 0 ;;
}
{ .mii
	add in0 = in0, r18
	nop.i 0 ;;
	cmp.ltu p6, p0 = in0, in1
}
	LOOP_IF_P6 .Lptcga_next
	RETURN
	.endp ia64_ptcga_range

// void ia64_ptcl_range(u64 start, u64 end, u64 nbits)
// The same purge on this CPU only. The loop differs on purpose: ptc.l
// need not end its instruction group, so the add shares its bundle, and
// one srlz.i after the loop serves every purge, where each ptc.ga ends
// its group and is serialized at once.
	.align 32
	.global ia64_ptcl_range
	.proc ia64_ptcl_range
ia64_ptcl_range:
	RANGE_PURGE_SETUP
.Lptcl_next:
{ .mii
	ptc.l in0, r17
	add in0 = in0, r18 ;;		// reads of in0 above see the old value
	cmp.ltu p6, p0 = in0, in1
}
	LOOP_IF_P6 .Lptcl_next
	SERIALIZE_RETURN
	.endp ia64_ptcl_range

// void ia64_ptce_all(u64 base, u64 count0, u64 count1, u64 stride0,
//                    u64 stride1)
// Empty this CPU's translation cache: the nested ptc.e loop over what
// PAL_PTCE_INFO returned, interrupts off, then srlz.i.
	.align 32
	.global ia64_ptce_all
	.proc ia64_ptce_all
ia64_ptce_all:
{ .mii
	alloc r16 = ar.pfs, 5, 0, 0, 0
	mov r17 = ar.lc			// ar.lc is preserved across calls
	adds r19 = -1, in2 ;;		// inner trips - 1, for br.cloop
}
{ .mmi
	mov r20 = psr ;;		// save PSR (its i bit)
	rsm psr.i			// interrupts off
	nop.i 0 ;;
}
.Lptce_outer:
{ .mii
	nop.m 0
	mov ar.lc = r19 ;;
	nop.i 0
}
.Lptce_inner:
{ .mmb
	ptc.e in0
	add in0 = in0, in4
	br.cloop.sptk.few .Lptce_inner ;;
}
{ .mii
	add in0 = in0, in3
	adds in1 = -1, in1 ;;
	cmp.ne p6, p0 = r0, in1
}
	LOOP_IF_P6 .Lptce_outer
{ .mmi
	srlz.i ;;
	nop.m 0
	tbit.nz p6, p0 = r20, 14 ;;	// PSR.i is bit 14
}
{ .mmi
(p6)	ssm psr.i			// interrupts back on if they were
	nop.m 0
	mov ar.lc = r17 ;;
}
	RETURN
	.endp ia64_ptce_all

// void ia64_load_user_rids(u64 rr0, u64 rr1, u64 rr2, u64 rr3, u64 rr4)
// Load region registers 0-4 (value: rid << 8 | page_shift << 2 | ve),
// as activate_context() does before and after a purge of another
// space in the new ia64_global_tlb_purge().
	.align 32
	.global ia64_load_user_rids
	.proc ia64_load_user_rids
ia64_load_user_rids:
{ .mii
	alloc r16 = ar.pfs, 5, 0, 0, 0
	dep.z r17 = 1, 61, 3		// an address in region 1
	dep.z r18 = 2, 61, 3 ;;		// ... region 2
}
{ .mii
	mov rr[r0] = in0		// region 0
	dep.z r19 = 3, 61, 3
	dep.z r20 = 4, 61, 3 ;;
}
{ .mmi
	mov rr[r17] = in1 ;;
	mov rr[r18] = in2
	nop.i 0 ;;
}
{ .mmi
	mov rr[r19] = in3 ;;
	mov rr[r20] = in4
	nop.i 0 ;;
}
	SERIALIZE_RETURN
	.endp ia64_load_user_rids
