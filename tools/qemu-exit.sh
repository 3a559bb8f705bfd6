#!/bin/sh
# Run QEMU and turn its exit code into the kernel's status.
# The kernel writes its status N to isa-debug-exit (port 0xf4); QEMU then
# exits with (N << 1) | 1. Any even code (0 included: a triple fault with
# -no-reboot, or a QEMU error) means the kernel did not report a status.
"$@"
rc=$?
if [ $((rc & 1)) -eq 1 ]; then
	status=$((rc >> 1))
	[ "$status" -ne 0 ] && echo "kernel exited with status $status" >&2
	exit "$status"
fi
echo "QEMU exited with code $rc without a kernel status (triple fault, QEMU error or exit=halt)" >&2
exit 125
