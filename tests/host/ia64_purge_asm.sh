#!/bin/sh
# Assemble arch/ia64/purge.S with GNU binutils for ia64 (dependency-
# violation checking on, warnings fatal) and check that the disassembly holds the
# instructions the ia64 model stands for. Prints KTAP like the host test
# programs; exit status 0 only if every check passed.
# Usage: ia64_purge_asm.sh PURGE_S OUT_DIR
src=$1
out=$2
AS=ia64-linux-gnu-as
OBJDUMP=ia64-linux-gnu-objdump
PLAN=9
n=0
failed=0

result() { # result NAME GOT WANT
	n=$((n + 1))
	if [ "$2" -ge "$3" ]; then
		echo "    ok $n $1"
	else
		echo "    # $1: found $2, expected at least $3"
		echo "    not ok $n $1"
		failed=$((failed + 1))
	fi
}
count() { grep -Ec "$1" "$out/purge.dis"; }

echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: ia64_purge_asm"
echo "    1..$PLAN"
mkdir -p "$out"
if $AS -x --fatal-warnings -o "$out/purge.o" "$src" 2>"$out/purge.as.log"; then
	result assembles_with_dependency_checks 1 1
else
	sed 's/^/    # /' "$out/purge.as.log"
	result assembles_with_dependency_checks 0 1
fi
$OBJDUMP -d "$out/purge.o" > "$out/purge.dis" 2>/dev/null || : > "$out/purge.dis"
result four_routines "$(count '^[0-9a-f]+ <ia64_(ptcga_range|ptcl_range|ptce_all|load_user_rids)>:')" 4
# ptc.ga ends its instruction group and srlz.i follows it at once.
result ptc_ga_ends_group "$(count 'ptc\.ga r32,r17;;')" 1
result srlz_i_follows_ptc_ga "$(grep -A1 'ptc\.ga' "$out/purge.dis" | grep -c 'srlz\.i')" 1
result ptc_l "$(count 'ptc\.l r32,r17')" 1
result ptc_e "$(count 'ptc\.e r32')" 1
result ptce_counted_inner_loop "$(count 'br\.cloop')" 1
result interrupts_off_during_ptce "$(count 'rsm 0x4000')" 1
result region_registers_0_to_4 "$(count 'mov rr\[r[0-9]+\]=r3[2-6]')" 5
if [ "$failed" -eq 0 ] && [ "$n" -eq "$PLAN" ]; then
	echo "ok 1 ia64_purge_asm"
	exit 0
fi
echo "not ok 1 ia64_purge_asm"
exit 1
