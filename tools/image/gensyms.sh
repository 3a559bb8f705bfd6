#!/bin/sh
# Turn `nm -n --defined-only kernel.elf` on stdin into an assembly file
# with the kernel's function symbols, sorted by address, for the panic
# report's backtrace (kernel/ksyms.c). Fixed-size entries: the table's size
# depends only on the names, which is what lets the three-pass link in the
# Makefile converge.
#
#   ksyms_count: .quad N
#   ksyms_addrs: .quad addr ... (N, ascending)
#   ksyms_name_offsets: .long off ... (N, into ksyms_names)
#   ksyms_names: .asciz "name" ...
awk '
BEGIN { n = 0 }
NF == 3 && $1 ~ /^[0-9a-f]+$/ && $2 ~ /^[tT]$/ && $3 !~ /^(\.|__text_|isr_stub_[0-9])/ {
	addr[n] = $1; name[n] = $3; n++
}
END {
	print "\t.section .ksyms, \"a\""
	print "\t.balign 8"
	print "\t.globl ksyms_count, ksyms_addrs, ksyms_name_offsets, ksyms_names"
	print "ksyms_count:\n\t.quad " n + 0
	print "ksyms_addrs:"
	for (i = 0; i < n; i++) print "\t.quad 0x" addr[i]
	print "ksyms_name_offsets:"
	off = 0
	for (i = 0; i < n; i++) { print "\t.long " off; off += length(name[i]) + 1 }
	print "ksyms_names:"
	for (i = 0; i < n; i++) print "\t.asciz \"" name[i] "\""
	print "\t.section .note.GNU-stack, \"\", @progbits"
}'
