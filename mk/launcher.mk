# mk/launcher.mk: how the `sockaudit` binary is linked.
# On x86_64 and aarch64 glibc (no sanitizers) it binds no symbol version above
# GLIBC_2.17 and needs no jansson shared library, so the one binary runs on
# every glibc from 2.17 (cli/floor/start.c says how): gcc's start files but
# Scrt1.o, our _start, --wrap for the few newer defaults, jansson's static
# archive. Elsewhere it links the usual way. Bound at start (-z now): the
# launcher runs once per command, and its GOT is then read-only.
LAUNCHER_FLOOR := $(if $(SAN_FLAGS),,$(filter x86_64-%-gnu x86_64-linux-gnu aarch64-%-gnu aarch64-linux-gnu,$(shell $(CC) -dumpmachine 2>/dev/null)))
ifneq ($(LAUNCHER_FLOOR),)
LAUNCHER_CRT_PRE  := $(shell $(CC) -print-file-name=crti.o) $(shell $(CC) -print-file-name=crtbeginS.o)
LAUNCHER_CRT_POST := $(shell $(CC) -print-file-name=crtendS.o) $(shell $(CC) -print-file-name=crtn.o)
LAUNCHER_WRAP     := $(foreach f,stat fstat lstat fstatat pow glob,-Wl,--wrap=$(f))
LAUNCHER_START    := -nostartfiles -Wl,-z,now $(LAUNCHER_CRT_PRE) $(BUILD)/cli/floor/start.o
LAUNCHER_LIBS     := $(LAUNCHER_WRAP) $(if $(JANSSON_STATIC),$(JANSSON_STATIC),$(JANSSON_LIBS)) -lm $(LAUNCHER_CRT_POST)
$(OUTDIR)sockaudit: $(BUILD)/cli/floor/start.o
else
LAUNCHER_START := -Wl,-z,now
LAUNCHER_LIBS  := $(JANSSON_LIBS) -lm
endif

$(BUILD)/cli/floor/start.o: cli/floor/start.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(SA_CFLAGS) -fPIE -U_FORTIFY_SOURCE -c -o $@ $<
