"""The boot image: mkiso.sh builds it (gensyms.sh writes the kernel's
symbol table into it), qemu.py boots it (the one QEMU launcher, reading
the firmware's paths from paths.mk), usb-write.sh writes it to a USB
stick. The bottom of tools/: imports no other group."""
