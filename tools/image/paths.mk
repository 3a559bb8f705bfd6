# Files of Debian packages that the build and the QEMU launcher read: their
# one home. Make syntax; tools/image/qemu.py reads the same lines
# ("NAME := path").
OVMF_CODE := /usr/share/OVMF/OVMF_CODE_4M.fd
OVMF_VARS := /usr/share/OVMF/OVMF_VARS_4M.fd
FONT_PSF  := /usr/share/consolefonts/Lat15-Terminus16.psf.gz
