#!/bin/sh
# Write the hybrid BIOS+UEFI boot image to a USB stick (make usb DEV=...).
# Usage: tools/image/usb-write.sh DEV ISO
#   e.g. tools/image/usb-write.sh /dev/sdb build/kernel.iso
#
# dd destroys whatever is on DEV, so this refuses anything that does not
# look like a whole, unused, removable disk: an empty DEV, a non-block
# device, a partition, a disk with a mounted or swapped-on partition or a
# device-mapper/RAID holder, a non-removable disk (FORCE=1 overrides only
# that check, loudly), or a disk smaller than the image. It then shows
# the model and size and wants "yes" typed on the terminal.
set -eu

SECTOR_BYTES=512        # /sys/block/*/size counts 512-byte sectors
MIB=1048576
DD_BLOCK=4M

die() {
	echo "usb-write: $*" >&2
	exit 1
}

dev=${1:-}
iso=${2:-}
[ -n "$dev" ] || die "no device given (usage: make usb DEV=/dev/sdX)"
[ -n "$iso" ] || die "no image given (usage: usb-write.sh DEV ISO)"
[ -f "$iso" ] || die "image $iso not found (make iso)"
[ -e "$dev" ] || die "$dev does not exist"
[ -b "$dev" ] || die "$dev is not a block device"

# /dev/disk/by-id/... names are symlinks: work on the kernel's name.
real=$(readlink -f "$dev")
name=$(basename "$real")
sys=/sys/class/block/$name
[ -d "$sys" ] || die "$dev ($real): no $sys, cannot check it"
if [ -e "$sys/partition" ]; then
	parent=$(basename "$(readlink -f "$sys/..")")
	die "$dev is a partition; give the whole disk (/dev/$parent)"
fi

# The disk itself and each of its partitions (sysfs lists them as
# sub-directories that have a "partition" file).
parts=$name
for p in "$sys"/*/partition; do
	[ -e "$p" ] && parts="$parts $(basename "$(dirname "$p")")"
done

# Is a mounted or swap source (a path under /dev) one of ours?
is_ours() {
	src=$(readlink -f "$1" 2>/dev/null) || return 1
	for q in $parts; do
		[ "$src" = "/dev/$q" ] && return 0
	done
	return 1
}
while read -r src mnt _; do
	case $src in /dev/*) is_ours "$src" &&
		die "$src is mounted on $mnt; unmount every partition of $dev first" ;;
	esac
done < /proc/mounts
if [ -r /proc/swaps ]; then
	while read -r src _; do
		case $src in /dev/*) is_ours "$src" &&
			die "$src is in use as swap (swapoff $src)" ;;
		esac
	done < /proc/swaps
fi
for q in $parts; do
	for h in /sys/class/block/"$q"/holders/*; do
		[ -e "$h" ] &&
			die "/dev/$q is held by $(basename "$h") (LVM, dm-crypt or RAID)"
	done
done

model=$(cat "/sys/block/$name/device/vendor" "/sys/block/$name/device/model" \
	2>/dev/null | tr -s ' \n' '  ' | sed 's/ *$//') || true
[ -n "$model" ] || model="(unknown model)"
sectors=$(cat "/sys/block/$name/size")
bytes=$((sectors * SECTOR_BYTES))
iso_bytes=$(wc -c < "$iso")
[ "$bytes" -gt 0 ] || die "$dev has size 0 (no medium inserted?)"
[ "$iso_bytes" -le "$bytes" ] ||
	die "$iso ($((iso_bytes / MIB)) MiB) does not fit on $dev" \
		"($((bytes / MIB)) MiB)"

removable=$(cat "/sys/block/$name/removable" 2>/dev/null || echo 0)
if [ "$removable" != 1 ]; then
	if [ "${FORCE:-}" != 1 ]; then
		die "$dev [$model] is not a removable disk; if you are sure, FORCE=1"
	fi
	echo "************************************************************" >&2
	echo "WARNING: FORCE=1: $dev [$model] is NOT removable." >&2
	echo "WARNING: it may be an internal disk; all its data will be lost." >&2
	echo "************************************************************" >&2
fi

echo "image:  $iso ($((iso_bytes / MIB)) MiB)"
echo "device: $dev -> $real"
echo "model:  $model"
echo "size:   $((bytes / MIB)) MiB ($bytes bytes)"
echo "Everything on $dev will be overwritten."
( : < /dev/tty ) 2>/dev/null || die "no terminal to confirm on; nothing written"
printf 'Type "yes" to write: ' > /dev/tty
read -r answer < /dev/tty || answer=
[ "$answer" = yes ] || die "not confirmed; nothing written"

dd if="$iso" of="$real" bs=$DD_BLOCK conv=fsync status=progress
sync
echo "usb-write: wrote $iso to $dev"
