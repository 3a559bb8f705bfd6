# Build, run and test the kernel.
#
#   make            build/kernel.elf and build/kernel.iso (BIOS + UEFI hybrid)
#   make run        boot under SeaBIOS in QEMU, serial on this terminal
#                   without its @@ lines (RAW=1 shows them); every line
#                   in build/last-run.log
#   make run-uefi   the same under OVMF
#   make test       host unit tests + every boot in tests/boot.cfg, as TAP
#   make debug      QEMU paused with its gdb stub; gdb -x build/gdbinit
#   make bench      the full experiment set; log, CSV, JSON, charts and a
#                   report in build/results/
#   make bench-seeds MODEL=<profile>   the seed table's experiments on 4
#                   CPUs, modelled column included
#   make fuzz       each libFuzzer harness for FUZZ_SECONDS (default 60)
#   make usb DEV=/dev/sdX   write the image to a USB stick
#   make labs       regenerate the quoted output of docs/labs/ (one boot)
#   make diagrams   draw docs/diagrams/*.svg from their Graphviz sources
#   make grade LAB=<name>   score your code for a coding lab (labs/)
#
# Variables: SMP= MEM= KCMDLINE= CPU= MACHINE= GRUB_TIMEOUT= ICOUNT=1 V=1
#            RAW=1 (run, run-uefi: the @@ lines on the terminal too)
#            PLUGINS= (TCG plugins for run, run-uefi, debug, bench)
#            MODEL=<profile> (the cache-model plugin) MODEL_SYNC= MODEL_ORDER=
#            MODEL_SERIAL= TCG_THREAD=
#            (make model-cost MODEL=<profile>: plain, callbacks-only and
#            modelled boots, timed)
#            (make model-sensitivity [MODEL=] [SWEEP_PARAMS=] [SWEEP_SMP=]:
#            the seed conclusions over each assumed parameter's range)
#            JOBS= (parallel boots and host tests of make test)
#            ACCEL=tcg|kvm (run, run-uefi, debug, bench; default: KVM with
#            -cpu host when /dev/kvm is usable, else TCG; make test: TCG)

BUILD        ?= build
SMP          ?= 2
MEM          ?= 512M
CPU          ?= max
MACHINE      ?= pc
KCMDLINE     ?= run=default
GRUB_TIMEOUT ?= 1
ICOUNT       ?=
JOBS         ?= 2
PLUGINS      ?=
# tools/runner/testrun.py reads JOBS from its environment.
export JOBS

# OVMF_CODE, OVMF_VARS and FONT_PSF: files of Debian packages we read.
include tools/image/paths.mk

ifeq ($(V),1)
Q :=
else
Q := @
endif

CC      := gcc
LD      := ld
NASM    := nasm
OBJCOPY := objcopy
NM      := nm
HOSTCC  := gcc

# --------------------------------------------------------------------------
# Packages. Checked on every run (cheap); installed from Debian's archive
# with apt-get (as root, else through sudo) with one line saying why.
# Each entry: command-or-file:package:why
# --------------------------------------------------------------------------
DEPS := \
	gcc:gcc:compiler \
	nasm:nasm:assembler-for-boot/ \
	ld:binutils:linker \
	xorriso:xorriso:ISO-image-for-grub-mkrescue \
	mformat:mtools:EFI-partition-for-grub-mkrescue \
	grub-mkrescue:grub-common:building-the-boot-image \
	/usr/lib/grub/i386-pc/multiboot2.mod:grub-pc-bin:BIOS-boot-support \
	/usr/lib/grub/x86_64-efi/multiboot2.mod:grub-efi-amd64-bin:UEFI-boot-support \
	qemu-system-x86_64:qemu-system-x86:running-the-kernel \
	$(OVMF_CODE):ovmf:UEFI-firmware-for-QEMU \
	$(FONT_PSF):console-setup-linux:framebuffer-console-font \
	python3:python3:test-runner-and-results-tools \
	prove:perl:TAP-summary \
	spin:spin:checking-the-trace-buffer-Promela-model \
	babeltrace2:babeltrace2:reading-the-exported-CTF-trace-in-make-test

.PHONY: deps deps-bench deps-fuzz
# $(call install_missing,LIST): install the packages of LIST's missing entries.
define install_missing
	@missing=""; \
	for d in $(1); do \
		what=$${d%%:*}; rest=$${d#*:}; pkg=$${rest%%:*}; why=$${rest#*:}; \
		case $$what in /*) [ -e $$what ] && continue ;; \
		               *) command -v $$what >/dev/null 2>&1 && continue ;; esac; \
		echo "make: installing Debian package '$$pkg' (needed for $$(echo $$why | tr '-' ' '))"; \
		missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null || \
		{ echo "make: could not install:$$missing" >&2; exit 1; }; \
	fi
endef

deps:
	$(call install_missing,$(DEPS))

# The libFuzzer harnesses of tests/fuzz/ (make fuzz, make test): clang
# and its runtimes (libFuzzer, ASan, UBSan) in the version Debian 12 has.
FUZZ_CC   := clang-14
FUZZ_RT   := /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
FUZZ_DEPS := \
	clang-14:clang-14:building-the-fuzzing-harnesses \
	$(FUZZ_RT):libclang-rt-14-dev:the-libFuzzer-and-sanitizer-runtimes-of-clang-14
deps-fuzz:
	$(call install_missing,$(FUZZ_DEPS))

# Only make bench draws charts.
BENCH_DEPS := gnuplot:gnuplot-nox:the-charts-of-make-bench
deps-bench:
	$(call install_missing,$(BENCH_DEPS))

# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------
KSRC_DIRS := boot arch/x86_64 arch/ia64 kernel kernel/bench kernel/shell lib mm trace workloads experiments tests/kernel
# KEXCLUDE: sources to leave out (e.g. work in progress), space separated.
KCSRCS    := $(filter-out $(KEXCLUDE),$(foreach d,$(KSRC_DIRS),$(wildcard $(d)/*.c)))
KASRCS    := $(filter-out $(KEXCLUDE),$(foreach d,$(KSRC_DIRS),$(wildcard $(d)/*.asm)))
KOBJS     := $(patsubst %.c,$(BUILD)/k/%.o,$(KCSRCS)) \
             $(patsubst %.asm,$(BUILD)/k/%.o,$(KASRCS)) \
             $(BUILD)/k/font.o $(BUILD)/k/version.o

GIT_HASH  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
KVERSION  := 0.1

KCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding \
	-fno-stack-protector -fno-pic -fno-pie -mno-red-zone -mcmodel=kernel \
	-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fstack-clash-protection \
	-mno-mmx -mno-sse -mno-sse2 -mno-80387 -fno-asynchronous-unwind-tables \
	-fno-builtin -I. -Iarch/x86_64/include -MMD -MP \
	-DKERNEL
# Files named *_simd.c may use SSE2 (the copy experiments); the code that
# calls them must have enabled the FPU/SSE state first (arch/x86_64/fpu.c).
KCFLAGS_SIMD := $(filter-out -mno-sse -mno-sse2 -mno-80387 -mno-mmx,$(KCFLAGS)) -msse -msse2

KLDFLAGS := -nostdlib -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments -T linker.ld

$(BUILD)/k/%_simd.o: %_simd.c
	@mkdir -p $(dir $@)
	@echo "  CC(sse) $<"
	$(Q)$(CC) $(KCFLAGS_SIMD) -c $< -o $@

$(BUILD)/k/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@

$(BUILD)/k/%.o: %.asm
	@mkdir -p $(dir $@)
	@echo "  NASM    $<"
	$(Q)$(NASM) -f elf64 -g -F dwarf -I. -MD $(@:.o=.d) -MP -o $@ $<

# The version and git hash, rewritten only when they change, so a new
# commit relinks the kernel but does not recompile it.
$(BUILD)/k/version.c: FORCE
	@mkdir -p $(dir $@)
	@printf '/* Generated by the Makefile. */\nconst char kernel_version[] = "%s";\nconst char kernel_git_hash[] = "%s";\n' \
		'$(KVERSION)' '$(GIT_HASH)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/k/version.o: $(BUILD)/k/version.c
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@

# The framebuffer console's bitmap font comes from Debian's console fonts
# (FONT_PSF, tools/image/paths.mk).
$(BUILD)/font.psf: | deps
	@mkdir -p $(dir $@)
	$(Q)gzip -dc $(FONT_PSF) > $@
$(BUILD)/k/font.o: $(BUILD)/font.psf
	@mkdir -p $(dir $@)
	@echo "  FONT    $(FONT_PSF)"
	$(Q)printf 'section .rodata\nglobal font_psf_start, font_psf_end\nfont_psf_start:\nincbin "%s"\nfont_psf_end:\nsection .note.GNU-stack noalloc noexec nowrite progbits\n' $< > $(BUILD)/k/font.asm
	$(Q)$(NASM) -f elf64 -o $@ $(BUILD)/k/font.asm

# Three links embed the symbol table (see tools/image/gensyms.sh): the table's
# size only depends on the names, so pass 3 has pass 2's layout and the
# table generated from pass 2 is exact. We check that it is.
$(BUILD)/kernel.elf: $(KOBJS) linker.ld tools/image/gensyms.sh
	@echo "  LD      $@ (3 passes, embedded symbols)"
	$(Q)sh tools/image/gensyms.sh < /dev/null > $(BUILD)/ksyms0.S
	$(Q)$(CC) -c $(BUILD)/ksyms0.S -o $(BUILD)/ksyms0.o
	$(Q)$(LD) $(KLDFLAGS) -o $(BUILD)/kernel.pass1.elf $(KOBJS) $(BUILD)/ksyms0.o
	$(Q)$(NM) -n --defined-only $(BUILD)/kernel.pass1.elf | sh tools/image/gensyms.sh > $(BUILD)/ksyms1.S
	$(Q)$(CC) -c $(BUILD)/ksyms1.S -o $(BUILD)/ksyms1.o
	$(Q)$(LD) $(KLDFLAGS) -o $(BUILD)/kernel.pass2.elf $(KOBJS) $(BUILD)/ksyms1.o
	$(Q)$(NM) -n --defined-only $(BUILD)/kernel.pass2.elf | sh tools/image/gensyms.sh > $(BUILD)/ksyms2.S
	$(Q)$(CC) -c $(BUILD)/ksyms2.S -o $(BUILD)/ksyms2.o
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(BUILD)/ksyms2.o
	$(Q)$(NM) -n --defined-only $@ | sh tools/image/gensyms.sh > $(BUILD)/ksyms3.S
	$(Q)cmp -s $(BUILD)/ksyms2.S $(BUILD)/ksyms3.S || { echo "embedded symbol table did not converge" >&2; exit 1; }
	$(Q)grub-file --is-x86-multiboot2 $@ || { echo "$@ is not multiboot2" >&2; exit 1; }

# $(call shell_quote,TEXT): TEXT as one single-quoted word of sh, so a
# command line's quotes, semicolons and pipes reach mkiso.sh (and GRUB,
# and the kernel) as typed, never the shell as commands. The kernel
# command lines are taken with $(value ...): a $ in them stays a $.
shell_quote = '$(subst ','\'',$(1))'
KCMDLINE_FULL = $(value KCMDLINE)$(if $(ICOUNT), icount)$(MODEL_KCMD)

ISO := $(BUILD)/kernel.iso
$(ISO): $(BUILD)/kernel.elf tools/image/mkiso.sh FORCE
	$(Q)sh tools/image/mkiso.sh $(BUILD)/kernel.elf $@ $(call shell_quote,$(KCMDLINE_FULL)) $(GRUB_TIMEOUT)

.PHONY: all iso kernel FORCE
all: iso
kernel: deps $(BUILD)/kernel.elf
iso: deps $(ISO)
.DEFAULT_GOAL := all

# --------------------------------------------------------------------------
# The cache-model QEMU plugin (cachemodel/, docs/cachemodel.md): host code,
# loaded into QEMU with -plugin. MODEL=<profile> on make run / make bench
# turns it on; the profiles are in cachemodel/profiles.txt.
# --------------------------------------------------------------------------
MODEL        ?=
MODEL_SO     := $(BUILD)/cachemodel/cachemodel.so
# The engine (cachemodel/model_internal.h lists its parts); the host tests
# name the same files in their HOST_SRCS lines.
MODEL_ENGINE_SRCS := cachemodel/model_create.c cachemodel/model_access.c \
	cachemodel/model_level.c \
	cachemodel/model_memtype.c cachemodel/model_time.c \
	cachemodel/model_coherence.c cachemodel/model_prefetch.c \
	cachemodel/model_buffers.c cachemodel/model_readout.c
MODEL_SRCS   := cachemodel/plugin.c cachemodel/plugin_counters.c \
	cachemodel/plugin_doorbell.c $(MODEL_ENGINE_SRCS) cachemodel/profile.c \
	cachemodel/pace.c cachemodel/locked.c \
	cachemodel/x86_insn.c
# -O3, not -O2: the same figures (a one-CPU icount boot's model output is
# byte-identical) in about 7 % less CPU time (docs/cachemodel.md, "How
# the plugin keeps its cost down").
MODEL_CFLAGS := -std=gnu11 -O3 -g -Wall -Wextra -Werror -I. -fPIC \
	-fvisibility=hidden -pthread -flto
# The Makefile too: a change of MODEL_CFLAGS rebuilds the plugin.
$(MODEL_SO): $(MODEL_SRCS) $(wildcard cachemodel/*.h) Makefile
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(MODEL_CFLAGS) -shared -o $@ $(MODEL_SRCS)
.PHONY: cachemodel model-check
cachemodel: $(MODEL_SO)

# With MODEL=<profile>: QEMU loads the plugin, the kernel is told the
# profile (cachemodel=), the model's lines go to MODEL_OUT. TCG_THREAD=
# single|multi picks QEMU's TCG threading; with several CPUs the plugin
# paces them by modelled time, MODEL_SYNC=<cycles> sets the quantum (0:
# unpaced; docs/cachemodel.md, "Several CPUs: pacing by modelled time");
# MODEL_ORDER=1 also orders contended locked operations by modelled time
# (the same section, "The page cache on four CPUs"); MODEL_SERIAL=1 runs
# one CPU at a time for the whole run, the turn passing by modelled clock
# (docs/cachemodel.md, "Serial pacing"; experiments that need it ask for
# it themselves); ICOUNT=1 implies single, which cannot be paced.
comma        := ,
MODEL_OUT    ?= $(BUILD)/model.jsonl
MODEL_SYNC   ?=
MODEL_ORDER  ?=
MODEL_SERIAL ?=
MODEL_PLUGIN  = $(if $(MODEL),--plugin $(MODEL_SO)$(comma)profile=$(MODEL)$(comma)profiles=cachemodel/profiles.txt$(comma)out=$(MODEL_OUT)$(if $(MODEL_SYNC),$(comma)sync=$(MODEL_SYNC))$(if $(MODEL_ORDER),$(comma)order=$(MODEL_ORDER))$(if $(MODEL_SERIAL),$(comma)serial=$(MODEL_SERIAL)))
# The kernel learns the profile's name and cache geometry from the one
# home of both, cachemodel/profiles.txt (tools/model/model.py kcmdline).
MODEL_KCMD    = $(if $(MODEL), $(shell python3 -m tools.model.model kcmdline $(MODEL)))
MODEL_DEP     = $(if $(MODEL),model-check)
TCG_QEMU      = $(if $(TCG_THREAD),-- -accel tcg$(comma)thread=$(TCG_THREAD))
model-check: $(MODEL_SO)
	$(Q)grep -q '^\[$(MODEL)\]' cachemodel/profiles.txt || { \
		echo "MODEL=$(MODEL): no such profile; cachemodel/profiles.txt has:" \
			$$(sed -n 's/^\[\(.*\)\]/\1/p' cachemodel/profiles.txt) >&2; exit 1; }
	@mkdir -p $(dir $(MODEL_OUT))
	@echo "model: profile $(MODEL); the plugin writes its @@MODEL lines to $(MODEL_OUT)"

# What the model costs: make run's boot plain and under the model, timed.
.PHONY: model-cost
model-cost: deps $(BUILD)/kernel.elf $(MODEL_DEP)
	$(Q)test -n "$(MODEL)" || { echo "model-cost: say MODEL=<profile>" >&2; exit 1; }
	$(Q)python3 -m tools.model.model_cost --profile $(MODEL) --smp $(SMP) --cmdline $(call shell_quote,$(value KCMDLINE)) $(if $(MODEL_SYNC),--sync $(MODEL_SYNC))

# The model against published figures (tools/model/model_validate.py,
# cachemodel/validation_data.json); its short form is a host test.
MODEL_VALIDATE := $(BUILD)/host/model_validate
$(MODEL_VALIDATE): tests/host/model_validate.c $(MODEL_ENGINE_SRCS) cachemodel/profile.c $(wildcard cachemodel/*.h) lib/prng.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) -std=gnu11 -O2 -Wall -Wextra -Werror -I. -o $@ $(filter %.c,$^)
.PHONY: model-validate
model-validate: $(MODEL_VALIDATE)
	$(Q)python3 -m tools.model.model_validate --binary $(MODEL_VALIDATE)

# Which seed conclusions each assumed parameter of a profile decides
# (tools/runner/model_sensitivity.py, docs/cachemodel.md "Sensitivity"): the
# low end, default and high end of its plausible range, one boot each.
# MODEL= (default xeon5400-2008), SWEEP_PARAMS=key,key (default every
# assumed key; none: the default point only), SWEEP_SMP= (default 1,
# deterministic under -icount; more vCPUs are paced), SWEEP_FULL=1 (the
# experiments' full mode, every CPU), SWEEP_TBENCH= and SWEEP_KBUILD=
# (the experiments' shell settings, e.g. "clients=2 steps=100 reps=3";
# none: not run).
SWEEP_PARAMS ?=
SWEEP_SMP    ?= 1
SWEEP_FULL   ?=
SWEEP_TBENCH ?=
SWEEP_KBUILD ?=
.PHONY: model-sensitivity
model-sensitivity: deps $(BUILD)/kernel.elf $(MODEL_SO)
	$(Q)python3 -m tools.runner.model_sensitivity --profile $(or $(MODEL),xeon5400-2008) \
		--smp $(SWEEP_SMP) $(if $(SWEEP_PARAMS),--params $(SWEEP_PARAMS)) \
		$(if $(SWEEP_FULL),--full) \
		$(if $(SWEEP_TBENCH),--tbench $(call shell_quote,$(SWEEP_TBENCH))) \
		$(if $(SWEEP_KBUILD),--kbuild $(call shell_quote,$(SWEEP_KBUILD)))

# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------
# tools/image/qemu.py builds every QEMU command line and turns QEMU's exit code
# back into the kernel's status (make fails on a status other than 0).
# PLUGINS: space-separated FILE[,name=value...] TCG plugins.
# ACCEL: tcg or kvm; empty lets the launcher choose (docs/real-hardware.md).
ACCEL ?=
QEMU_LAUNCH = python3 -m tools.image.qemu --smp $(SMP) --mem $(MEM) --cpu $(CPU) \
	$(if $(ICOUNT),--icount 0) $(foreach p,$(PLUGINS),--plugin $(p)) \
	$(MODEL_PLUGIN) $(if $(ACCEL),--accel $(ACCEL))
GDB_PORT := 1234

# make run and run-uefi write the whole serial output to RUN_LOG (the
# file the tools read) and show it here without its @@ lines; RAW=1
# shows those too (docs/output.md, "The console and the log").
RUN_LOG ?= $(BUILD)/last-run.log
RAW     ?=
RUN_CONSOLE = --log $(RUN_LOG) $(if $(RAW),--raw)

.PHONY: run run-uefi debug
# With MODEL=, the modelled figures of the run follow as a table headed
# MODELLED (tools/results/model_table.py).
# With a model, its table is printed even when the guest exits with an
# error (the regions it closed are still figures); make then fails with
# the guest's status.
run: iso $(MODEL_DEP)
	$(Q)status=0; $(QEMU_LAUNCH) --machine $(MACHINE) $(RUN_CONSOLE) $(ISO) $(TCG_QEMU) || status=$$?; \
	$(if $(MODEL),python3 -m tools.results.model_table $(RUN_LOG) $(MODEL_OUT) || { [ $$status -ne 0 ] || status=1; };) \
	exit $$status

run-uefi: iso
	$(Q)$(QEMU_LAUNCH) --machine q35 --firmware uefi --vars $(BUILD)/OVMF_VARS.fd $(RUN_CONSOLE) $(ISO)

debug: iso
	$(Q)printf 'file %s\ntarget remote localhost:%s\n' $(BUILD)/kernel.elf $(GDB_PORT) > $(BUILD)/gdbinit
	@echo "QEMU is paused with its gdb stub on :$(GDB_PORT); in another terminal: gdb -x $(BUILD)/gdbinit"
	$(Q)$(QEMU_LAUNCH) --machine $(MACHINE) --gdb $(GDB_PORT) --paused --raw-exit $(ISO)

.PHONY: bench
# The full experiment set, then CSV, JSON, charts and a Markdown report in
# build/results/. BENCH_CMDLINE picks other experiments or sizes.
BENCH_CMDLINE ?= run=all runmode=full
BENCH_TIMEOUT ?= 3600
bench: MODEL_OUT = $(BUILD)/results/model.jsonl
bench: deps deps-bench $(BUILD)/kernel.elf $(MODEL_DEP)
	@mkdir -p $(BUILD)/results
	$(Q)sh tools/image/mkiso.sh $(BUILD)/kernel.elf $(BUILD)/bench.iso $(call shell_quote,$(value BENCH_CMDLINE)$(if $(ICOUNT), icount)$(MODEL_KCMD)) 0
	@echo "bench: booting QEMU ($(SMP) CPUs, $(MEM)); the log goes to $(BUILD)/results/run.log"
	$(Q)$(QEMU_LAUNCH) --machine $(MACHINE) --timeout $(BENCH_TIMEOUT) \
		--serial file:$(BUILD)/results/run.log $(BUILD)/bench.iso $(TCG_QEMU)
	$(Q)python3 -m tools.results.results $(BUILD)/results/run.log --csv $(BUILD)/results/results.csv --json $(BUILD)/results/results.json \
		$(if $(MODEL),--model $(MODEL_OUT))
	$(Q)python3 -m tools.results.report $(BUILD)/results/results.json -o $(BUILD)/results/report.md --charts $(BUILD)/results/charts \
		$(if $(and $(MODEL),$(wildcard $(BUILD)/cost/cost.json)),--cost $(BUILD)/cost/cost.json)
	@echo "bench: report in $(BUILD)/results/report.md"

.PHONY: bench-seeds
# The experiments of "Seeds side by side" in one bench run, on 4 CPUs (the
# page cache's 4 clients, tlb_purge's job CPUs); with MODEL=<profile> the
# table's modelled column too (docs/output.md, "The seed table"). Three
# repetitions of each traced variant (trace.reps=3): the table gives their
# spread. The page cache goes first: under a model, the experiments that
# pace their CPUs concurrently leave the allocator in a state that follows
# the host, and the page cache's lockstep points are sensitive to where
# its memory lands (docs/cachemodel.md, "Serial pacing").
SEEDS_CMDLINE := run=pagecache_splice,tlb_purge,tbench,kbuild,copy trace.reps=3
SEEDS_SMP ?= 4
bench-seeds:
	$(Q)$(MAKE) --no-print-directory bench SMP=$(SEEDS_SMP) \
		BENCH_CMDLINE="$(SEEDS_CMDLINE)"

# --------------------------------------------------------------------------
# Diagrams: Graphviz sources in docs/diagrams/*.dot, each drawn as an SVG
# beside it. The SVGs are committed, because the docs link them and must
# read without a build; `make diagrams` redraws those older than their
# source (tests/tools/test_diagrams.py checks that none is stale).
# --------------------------------------------------------------------------
DIAGRAM_DEPS := dot:graphviz:drawing-the-diagrams-of-docs/diagrams
DIAGRAM_SVGS := $(patsubst %.dot,%.svg,$(wildcard docs/diagrams/*.dot))
.PHONY: diagrams deps-diagrams
deps-diagrams:
	$(call install_missing,$(DIAGRAM_DEPS))
docs/diagrams/%.svg: docs/diagrams/%.dot | deps-diagrams
	@echo "  DOT     $@"
	$(Q)dot -Tsvg $< -o $@.tmp && mv $@.tmp $@
diagrams: $(DIAGRAM_SVGS)

.PHONY: bench-host
# ns per trace event on this host, ours beside LTTng-UST (tools/bench_host/bench_host.sh).
BENCH_HOST_DEPS := \
	/usr/include/x86_64-linux-gnu/lttng/tracepoint.h:liblttng-ust-dev:comparing-with-LTTng-UST \
	lttng-sessiond:lttng-tools:comparing-with-LTTng-UST
bench-host:
	$(call install_missing,$(BENCH_HOST_DEPS))
	$(Q)BUILD=$(BUILD) sh tools/bench_host/bench_host.sh

.PHONY: usb
usb: iso
	$(Q)sh tools/image/usb-write.sh "$(DEV)" $(ISO)

# --------------------------------------------------------------------------
# Host builds of the portable code, under sanitizers. Each test program
# tests/host/test_*.c names the sources it needs on a line
#   // HOST_SRCS: lib/kprintf.c mm/buddy.c
# and may ask for ThreadSanitizer instead of ASan+UBSan with
#   // HOST_SANITIZE: thread
# --------------------------------------------------------------------------
HOST_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -DHOST_BUILD \
	-fno-omit-frame-pointer -pthread
HOST_SAN_DEFAULT := -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_SAN_THREAD  := -fsanitize=thread
HOST_TESTS := $(patsubst tests/host/%.c,$(BUILD)/host/%,$(wildcard tests/host/test_*.c))
# A program's dependency file keeps only the headers: its sources are the
# rule's own prerequisites, and a source renamed since the last build must
# not linger in the list (a -MM pass names them; -MP covers headers only).
DEPS_HEADERS_ONLY := sed 's/[^ :]*\.c\b//g'

# $(call host_srcs,test_x): the sources of host test program test_x;
# $(call host_san,test_x): its sanitizer flags.
host_srcs = tests/host/$(1).c tests/host/host_shim.c lib/ktest.c lib/kprintf.c $(shell sed -n 's|^// HOST_SRCS:||p' tests/host/$(1).c)
host_san = $(if $(shell grep -l '^// HOST_SANITIZE: thread' tests/host/$(1).c),$(HOST_SAN_THREAD),$(HOST_SAN_DEFAULT))

define host_test_rule
$(BUILD)/host/$(1): $(call host_srcs,$(1))
	@mkdir -p $$(dir $$@)
	@echo "  HOSTCC  $$@"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -MM -MP -MT $$@ $$(filter %.c,$$^) | $(DEPS_HEADERS_ONLY) > $$@.hdeps
	$(Q)$(HOSTCC) $(HOST_CFLAGS) $(call host_san,$(1)) \
		-o $$@ $$(filter %.c,$$^)
endef
$(foreach t,$(HOST_TESTS),$(eval $(call host_test_rule,$(notdir $(t)))))

# The layer rule (docs/layers.md) as one more host test: the program runs
# tools/checks/check_layers.py's self-test and its check of the tree, as KTAP.
# `make check-layers` prints the offending includes directly.
HOST_TESTS += $(BUILD)/host/test_layers
$(BUILD)/host/test_layers: tools/checks/check_layers.py tests/tools/test_check_layers.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)printf '#!/bin/sh\ncd "%s" && exec python3 -m tools.checks.check_layers --ktap .\n' \
		"$(CURDIR)" > $@ && chmod +x $@

# The docs' own checks as one more host test: tools/checks/doc_figures.py's and
# tools/labs/labs.py's self-tests, then every provenance line of docs/ and
# docs/labs/ (docs/README.md, "Figures in the docs"), as KTAP.
HOST_TESTS += $(BUILD)/host/test_docs
$(BUILD)/host/test_docs: tools/checks/doc_figures.py tools/labs/labs.py tests/tools/test_doc_figures.py tests/tools/test_labs.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)printf '#!/bin/sh\ncd "%s" && exec python3 -m tools.checks.doc_figures --ktap .\n' \
		"$(CURDIR)" > $@ && chmod +x $@

# The coding labs (labs/, docs/labs/README.md). make grade LAB=<name>
# builds a lab's host tests with the student's file (labs/<name>/) in
# place of the kernel's code and scores each check (tools/labs/grade.py).
# One host test per lab proves its grader can fail and can pass: the
# skeleton as committed scores 0, the kernel's own code full marks.
GRADE_LABS := $(patsubst labs/%/,%,$(wildcard labs/*/))
.PHONY: grade grade-build
grade:
	$(Q)python3 -m tools.labs.grade $(if $(LAB),$(LAB),--list)

# tools/labs/grade.py's compiler: host test program GRADE_PROG built like the
# one of make test, with GRADE_FILE in place of the source GRADE_REPLACES,
# into GRADE_OUT. The other sources' objects are kept in GRADE_OBJDIR
# (one per lab: the gradings of a lab share them, parallel labs do not).
# A skeleton leaves the helpers it will call unused.
ifneq ($(GRADE_PROG),)
GRADE_SAN  := $(call host_san,$(GRADE_PROG))
GRADE_OBJS := $(patsubst %.c,$(GRADE_OBJDIR)/%.o,$(filter-out $(GRADE_REPLACES),$(call host_srcs,$(GRADE_PROG))))
$(GRADE_OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(HOSTCC) $(HOST_CFLAGS) $(GRADE_SAN) -MMD -MP -c $< -o $@
grade-build: $(GRADE_OBJS)
	@mkdir -p $(dir $(GRADE_OUT))
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -Wno-unused-function $(GRADE_SAN) -o $(GRADE_OUT) $(GRADE_FILE) $(GRADE_OBJS)
-include $(GRADE_OBJS:.o=.d)
endif

HOST_TESTS += $(patsubst %,$(BUILD)/host/test_grade_%,$(GRADE_LABS))
$(BUILD)/host/test_grade_%: tools/labs/grade.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)printf '#!/bin/sh\ncd "%s" && exec python3 -m tools.labs.grade --selftest --ktap %s\n' \
		"$(CURDIR)" "$*" > $@ && chmod +x $@

HOST_TESTS += $(BUILD)/host/test_model_validate
$(BUILD)/host/test_model_validate: $(MODEL_VALIDATE) tools/model/model_validate.py cachemodel/validation_data.json cachemodel/profiles.txt
	@echo "  GEN     $@"
	$(Q)printf '#!/bin/sh\ncd "%s" && exec python3 -m tools.model.model_validate --ktap --binary "%s"\n' \
		"$(CURDIR)" "$(abspath $(MODEL_VALIDATE))" > $@ && chmod +x $@

.PHONY: check-layers
check-layers:
	$(Q)python3 -m tools.checks.check_layers

# test_psf reads the font the kernel embeds (build/font.psf): without it
# its test of the real font would only report a skip.
.PHONY: host-tests
host-tests: $(HOST_TESTS) $(BUILD)/font.psf

# The ia64 purge reference code (arch/ia64/purge.S) is assembled and its
# disassembly checked as one more host test; only that needs GNU binutils
# for ia64. The test program is a generated wrapper around the script.
TEST_DEPS := ia64-linux-gnu-as:binutils-ia64-linux-gnu:assembling-the-ia64-purge-reference-code
IA64_ASM_TEST := $(BUILD)/host/test_ia64_purge_asm
.PHONY: deps-test
deps-test:
	$(call install_missing,$(TEST_DEPS))
$(IA64_ASM_TEST): tests/host/ia64_purge_asm.sh arch/ia64/purge.S | deps-test
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)printf '#!/bin/sh\nexec sh %s %s %s\n' $(abspath tests/host/ia64_purge_asm.sh) \
		$(abspath arch/ia64/purge.S) $(abspath $(BUILD)/host/ia64) > $@
	$(Q)chmod +x $@
host-tests: $(IA64_ASM_TEST)
# Host benchmark of the page cache variants (optimised, no sanitizers):
#   make host-bench [THREADS=n]
HOST_BENCH_CFLAGS := $(filter-out -O1,$(HOST_CFLAGS)) -O2 -DHOST_SHIM_OWN_MAIN
$(BUILD)/host/bench_pagecache: tests/host/bench_pagecache.c tests/host/host_shim.c lib/kprintf.c $(shell sed -n 's|^// HOST_SRCS:||p' tests/host/bench_pagecache.c) $(wildcard lib/*.h mm/*.h tests/host/*.h)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(HOST_BENCH_CFLAGS) -o $@ $(filter %.c,$^)
.PHONY: host-bench
host-bench: $(BUILD)/host/bench_pagecache
	$(Q)$(BUILD)/host/bench_pagecache $(or $(THREADS),2)

# --------------------------------------------------------------------------
# libFuzzer harnesses of the parsers of untrusted input (docs/testing.md).
# Each tests/fuzz/fuzz_*.c names its sources with // HOST_SRCS: like a
# host test and is built with clang under ASan and UBSan. tools/runner/fuzz.py
# runs them: make fuzz for FUZZ_SECONDS each, make test for a few seconds
# each plus a replay of the checked-in corpus.
# --------------------------------------------------------------------------
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -Wall -Wextra -Werror -I. -DHOST_BUILD \
	-DHOST_SHIM_FUZZER -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZERS      := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60

define fuzz_rule
$(BUILD)/fuzz/$(1): tests/fuzz/$(1).c tests/host/host_shim.c lib/kprintf.c $(shell sed -n 's|^// HOST_SRCS:||p' tests/fuzz/$(1).c) | deps-fuzz
	@mkdir -p $$(dir $$@)
	@echo "  FUZZCC  $$@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MM -MP -MT $$@ $$(filter %.c,$$^) | $(DEPS_HEADERS_ONLY) > $$@.hdeps
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $$@ $$(filter %.c,$$^)
endef
$(foreach f,$(FUZZERS),$(eval $(call fuzz_rule,$(notdir $(f)))))

.PHONY: fuzzers fuzz
fuzzers: $(FUZZERS)
fuzz: fuzzers
	$(Q)python3 -m tools.runner.fuzz --seconds $(FUZZ_SECONDS)

# --------------------------------------------------------------------------
# Tests: one TAP line per host program and per boot of tests/boot.cfg.
# --------------------------------------------------------------------------
.PHONY: test test-boot test-host
test: deps host-tests fuzzers $(BUILD)/kernel.elf $(MODEL_SO)
	$(Q)prove -v tests/all.t

test-host: deps host-tests fuzzers
	$(Q)python3 -m tools.runner.testrun --host-only

test-boot: deps $(BUILD)/kernel.elf $(MODEL_SO)
	$(Q)python3 -m tools.runner.testrun --boot-only $(if $(G),-g $(G))

.PHONY: labs
# Regenerate the quoted output of docs/labs/ from one scripted boot.
labs: deps $(BUILD)/kernel.elf $(MODEL_SO)
	$(Q)python3 -m tools.labs.labs --refresh

.PHONY: clean
clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/k -name '*.d' 2>/dev/null)
# Host programs and fuzzers: one dependency file each (PROGRAM.hdeps: every
# header their sources include), written by a preprocessor pass (-MM:
# gcc's -MMD keeps only the last source's list when one command compiles
# several sources).
-include $(wildcard $(BUILD)/host/*.hdeps $(BUILD)/fuzz/*.hdeps)
