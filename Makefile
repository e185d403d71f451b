# libsockaudit: an LD_PRELOAD library that audits socket calls.
# make            build libsockaudit.so and the sockaudit launcher
# make test       install missing Debian packages, build, run every test
# make demo       install missing Debian packages, build, replay the studies
# make bench      overhead side by side (plain, shim, strace)
# make install    PREFIX=/usr/local DESTDIR= (LIBDIR, PKGLIBDIR, BINDIR ...)
# make deb        a Debian package in build/deb/ (dpkg-buildpackage, lintian)
# SANITIZE=address,undefined or SANITIZE=thread builds everything with sanitizers.

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
# The libraries live in a private directory, as Debian's preload tools do
# (libfaketime, libeatmydata): nothing links them, ldconfig need not see them.
PKGLIBDIR ?= $(LIBDIR)/sockaudit
DOCDIR  ?= $(PREFIX)/share/doc/sockaudit
BINDIR  ?= $(PREFIX)/bin
INCDIR  ?= $(PREFIX)/include
PKGDIR  ?= $(LIBDIR)/pkgconfig
MANDIR  ?= $(PREFIX)/share/man
CC      ?= cc
CFLAGS  ?= -O2 -g
BUILD   ?= build
# Where the library and the launcher go: the tree's top, or a build of
# another architecture's own folder (mk/arm64.mk: build/arm64/).
OUTDIR  ?=
PKG_CONFIG ?= pkg-config

VERSION := 0.1.0
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
JANSSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS   := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson)
# The shim links jansson's static archive when libjansson-dev ships one (Debian
# does): the host maps no extra library (a fork-per-connection child pays no
# relocation faults for it), and --exclude-libs keeps every json_ symbol hidden,
# so a host that uses its own jansson never binds to ours or we to its.
comma := ,
empty :=
space := $(empty) $(empty)
JANSSON_STATIC := $(wildcard $(shell $(PKG_CONFIG) --variable=libdir jansson 2>/dev/null)/libjansson.a)
SHIM_JANSSON   := $(if $(JANSSON_STATIC),$(JANSSON_STATIC) -Wl$(comma)--exclude-libs$(comma)libjansson.a,$(JANSSON_LIBS))
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
endif
SA_CFLAGS  := -std=gnu11 -fPIC -D_GNU_SOURCE -DSOCKAUDIT_VERSION_STR=\"$(VERSION)\" -Iinclude -Icommon $(WARN) $(JANSSON_CFLAGS) $(SAN_FLAGS) $(CPPFLAGS) $(CFLAGS)
# cmocka fixes every test's signature (void **state), used or not.
UNIT_CFLAGS := $(SA_CFLAGS) -Wno-unused-parameter
SA_LDFLAGS := $(SAN_FLAGS) $(LDFLAGS)
# -ffunction-sections: shim/sa_fork_text.ld gathers, by name, the functions
# a forked child runs.
SHIM_CFLAGS := -fvisibility=hidden -ffunction-sections $(if $(JANSSON_STATIC),-DSA_JANSSON_OWN)

# The flags everything was built with: when they change (SANITIZE=..., a
# new CFLAGS), every object, test program and the library are rebuilt
# instead of mixing old and new builds in one test run.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW   := $(CC) $(SA_CFLAGS) $(SHIM_CFLAGS) $(SA_LDFLAGS)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(FLAGS_STAMP) 2>/dev/null)" = '$(subst ','\'',$(FLAGS_NOW))' ] || printf '%s\n' '$(subst ','\'',$(FLAGS_NOW))' >$(FLAGS_STAMP); })

# The shim's floors, lowest first: each calls only its own and lower ones
# (`make check-layers`). judge/, the pure judges, calls nothing of the
# shim at all: the CLI links it.
LAYERS    := judge base line kernel state audit core
SHIM_SRC  := $(foreach l,$(LAYERS),$(sort $(wildcard shim/$(l)/*.c shim/$(l)/*.S)))
SHIM_OBJ  := $(patsubst shim/%.S,$(BUILD)/obj/%.o,$(patsubst shim/%.c,$(BUILD)/obj/%.o,$(SHIM_SRC)))
# Everything but the libc-name definitions and the link glue: what unit
# tests link against.
CORE_OBJ  := $(filter-out $(BUILD)/obj/core/interpose%.o $(BUILD)/obj/core/vfork_%.o $(BUILD)/obj/base/link.o,$(SHIM_OBJ))
# The CLI's floors, lowest first: the log reader and the configuration
# readers (cli/conf/, which the report asks where a backlog was set) side
# by side, the verbs side by side
# (none calls another), the verbs that stand on one of them (diff reads
# both sides with report's model), main.c (`make check-layers`).
# cli/floor/ is the launcher's glibc start-up, linked by mk/launcher.mk.
CLI_VERBS := report metrics top explain launch
CLI_UPPER := diff
CLI_BASE  := log conf
CLI_LAYERS := $(subst $(space),+,$(CLI_BASE)) $(subst $(space),+,$(CLI_VERBS)) $(CLI_UPPER) .
CLI_SRC   := $(sort $(wildcard cli/*.c $(foreach d,$(CLI_BASE) $(CLI_VERBS) $(CLI_UPPER),cli/$(d)/*.c)))
CLI_HDR   := $(wildcard cli/*/*.h)
CLI_OBJ   := $(patsubst cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRC))
# What the CLI links of the shim (`sockaudit explain`): every judge, and
# the kernel floor's option table and read-back words (optnames.o,
# readback.o), which call nothing of the shim either (common/readback.h).
# The CLI sees one folder of the shim's headers: the judges' (judge/judge.h).
JUDGE_OBJ := $(patsubst shim/%.c,$(BUILD)/obj/%.o,$(sort $(wildcard shim/judge/*.c)))
CLI_SHARED_OBJ := $(JUDGE_OBJ) $(BUILD)/obj/kernel/readback.o $(BUILD)/obj/kernel/optnames.o
CLI_INC   := -Icli -Ishim
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRC))
PROG_SRC  := $(sort $(wildcard tests/progs/*.c))
PROG_BIN  := $(patsubst tests/progs/%.c,$(BUILD)/progs/%,$(PROG_SRC))

.PHONY: all deps test-deps test unit check-peer demo bench install lint clean check-layers
all: $(OUTDIR)libsockaudit.so $(if $(CLI_SRC),$(OUTDIR)sockaudit)

deps:
	@scripts/ensure-deps.sh build

$(BUILD)/obj/%.o: shim/%.c $(wildcard shim/*/*.h common/*.h) include/sockaudit.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(SA_CFLAGS) -Ishim $(SHIM_CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: shim/%.S $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(SA_CFLAGS) -c -o $@ $<

# -fini= an undefined name: no DT_FINI. crti/crtn's _fini is an empty frame
# that sits alone after .text, and ld.so called it at every exit: one more
# code fault in each forked child. Destructors are in .fini_array, which
# ld.so runs as before.
# One read-only segment for the headers, .rodata and .text, .rodata first
# (-z noseparate-code and the move below): a forked child reads our
# .gnu.hash (the host's lazy binding), constants and its code, and each
# mapping of ours is a vma that every fork copies and every exit tears
# down, and each 64 kB window of a file mapping a child reads is a fault.
# Three mappings would be three vmas and three faults or more per child; as
# one vma, the three parts sit in 60 kB (docs/performance.md).
# No RELRO: every exec then writes one data page of ours (the loader's
# zeroing of the page's tail comes first, so one fault), makes no
# mprotect and keeps one vma fewer. The .got.plt stays writable either way
# (no -z now, below). Measured with bench/exec_loop.sh and
# bench/socat_fork.sh; the trade is in docs/hardening.md and performance.md.
# SHIM_BINDING goes last on the link line, after LDFLAGS: a packager's
# -z relro (Debian's default) would otherwise win, and its RELRO region,
# which starts at the data segment, would cover the zero tables
# (shim/sa_proc.ld) and make them read-only. Likewise -z now.
SHIM_NORELRO := -Wl,-z,norelro
SHIM_BINDING := $(SHIM_NORELRO) -Wl,-z,lazy
SHIM_LAYOUT := -Wl,-z,noseparate-code $(SHIM_NORELRO)
# The linker's own script with our placements in it (scripts/shim-ld.sh
# says which and why; `scripts/shim-ld.sh --check` compares).
$(BUILD)/shim.ld: shim/sa_fork_text.ld shim/sa_proc.ld scripts/shim-ld.sh $(FLAGS_STAMP) Makefile
	@mkdir -p $(dir $@)
	scripts/shim-ld.sh $@ -- $(CC) $(SA_LDFLAGS) -shared $(SHIM_LAYOUT)

# What each exec pays the loader for the library (docs/performance.md,
# "Start cost"): no -z now (the ~60 libc functions we call are bound when
# first called, not all at every exec);
# no crtbeginS.o (shim/base/link.c); malloc and free wrapped so jansson's
# static pointers to them need no symbol lookup at load.
SHIM_START := -nostartfiles $(shell $(CC) -print-file-name=crtendS.o) -Wl,--wrap=malloc,--wrap=free
$(OUTDIR)libsockaudit.so: $(SHIM_OBJ) shim/exports.map $(BUILD)/shim.ld
	$(CC) -shared -o $@ $(SHIM_OBJ) -Wl,--version-script=shim/exports.map $(SHIM_LAYOUT) -Wl,-T,$(BUILD)/shim.ld -Wl,-fini=sa_no_dt_fini -Wl,--no-as-needed $(SA_LDFLAGS) $(SHIM_JANSSON) $(SHIM_START) -ldl -lpthread $(SHIM_BINDING)

$(BUILD)/cli/%.o: cli/%.c $(CLI_HDR) $(wildcard common/*.h shim/judge/*.h) include/sockaudit.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(SA_CFLAGS) $(CLI_INC) -DSOCKAUDIT_LIBDIR=\"$(PKGLIBDIR)\" -c -o $@ $<

$(OUTDIR)sockaudit: $(CLI_OBJ) $(CLI_SHARED_OBJ)
	$(CC) -o $@ $(LAUNCHER_START) $(CLI_OBJ) $(CLI_SHARED_OBJ) $(SA_LDFLAGS) $(LAUNCHER_LIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(CORE_OBJ) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -Ishim -o $@ $< $(CORE_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -lcmocka -ldl -lpthread -lm

$(BUILD)/progs/%: tests/progs/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall $(SAN_FLAGS) -o $@ $< -lpthread

test-deps:
	@scripts/ensure-deps.sh test

unit: all $(UNIT_BIN)

test: test-deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(PROG_BIN) test-extra
	@tests/run-tests.sh

demo:
	@scripts/ensure-deps.sh demo
	@$(MAKE) --no-print-directory all demo-build
	@demo/run.sh

install: all
	install -d $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PKGDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DOCDIR)
	install -m 0644 libsockaudit.so $(DESTDIR)$(PKGLIBDIR)/libsockaudit.so
	for m in libsockaudit-musl.so libsockaudit-musl-attach.so; do \
		if [ -f $$m ]; then install -m 0644 $$m $(DESTDIR)$(PKGLIBDIR)/$$m; fi; \
	done
	install -m 0755 sockaudit $(DESTDIR)$(BINDIR)/sockaudit
	install -m 0644 include/sockaudit.h $(DESTDIR)$(INCDIR)/sockaudit.h
	install -m 0644 docs/man/sockaudit.1 $(DESTDIR)$(MANDIR)/man1/sockaudit.1
	install -m 0644 docs/man/libsockaudit.7 $(DESTDIR)$(MANDIR)/man7/libsockaudit.7
	install -m 0644 README.md LICENSE $(wildcard docs/*.md) $(DESTDIR)$(DOCDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PKGLIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		sockaudit.pc.in > $(DESTDIR)$(PKGDIR)/sockaudit.pc

lint:
	cppcheck --quiet --enable=warning,performance,portability --inline-suppr -Iinclude -Icommon -Ishim shim
	clang-tidy --quiet $(filter %.c,$(SHIM_SRC)) -- $(SA_CFLAGS) -Ishim

clean:
	rm -rf $(BUILD) libsockaudit.so libsockaudit-musl.so libsockaudit-musl-attach.so sockaudit

# Targets other parts add (demo-build, test-extra, bench, fuzz ...) live in mk/*.mk.
.PHONY: demo-build test-extra
demo-build::
test-extra::
-include $(sort $(wildcard mk/*.mk))

# Every call in the shim goes down its floors (shim/base .. shim/core), and
# every call in the CLI goes down its own (cli/log, the verbs, main.c).
.PHONY: check-layers
check-layers: $(SHIM_OBJ) $(CLI_OBJ)
	@scripts/check-layers.py $(BUILD)/obj $(LAYERS)
	@rm -f $(filter-out $(CLI_OBJ),$(wildcard $(BUILD)/cli/*.o $(foreach d,$(CLI_BASE) $(CLI_VERBS) $(CLI_UPPER),$(BUILD)/cli/$(d)/*.o)))
	@scripts/check-layers.py $(BUILD)/cli $(CLI_LAYERS)
