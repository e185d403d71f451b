# mk/cli.mk: the `sockaudit` launcher's build details.
# The launcher has $(PKGLIBDIR) compiled in (SOCKAUDIT_LIBDIR). A stamp named
# after it makes `make PREFIX=/usr install` after a plain `make` rebuild
# launch/libpick.o, instead of installing a launcher that looks in /usr/local/lib.
CLI_LIBDIR_STAMP := $(BUILD)/cli/libdir$(subst /,_,$(PKGLIBDIR)).stamp
$(BUILD)/cli/launch/launch.o $(BUILD)/cli/launch/libpick.o: $(CLI_LIBDIR_STAMP)
$(CLI_LIBDIR_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/cli/libdir*.stamp
	@touch $@

# tests/unit/test_report.c tests the report's gathering: it links the cli
# objects (all but main.o) instead of the shim's.
CLI_LIB_OBJ := $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
$(BUILD)/tests/unit/test_report: tests/unit/test_report.c $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(CLI_INC) -o $@ $< $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -lcmocka -lm

# tests/unit/test_metrics.c tests `sockaudit metrics`' model and the log
# scanner the same way.
$(BUILD)/tests/unit/test_metrics: tests/unit/test_metrics.c $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(CLI_INC) -o $@ $< $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -lcmocka -lm

# tests/unit/test_top.c tests `sockaudit top`'s model and log follower,
# from the cli objects too.
$(BUILD)/tests/unit/test_top: tests/unit/test_top.c $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(CLI_INC) -o $@ $< $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -lcmocka -lm

# tests/unit/test_diff.c tests `sockaudit diff`'s verdicts and compare,
# from the cli objects too.
$(BUILD)/tests/unit/test_diff: tests/unit/test_diff.c $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(CLI_INC) -o $@ $< $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -lcmocka -lm

# tests/unit/test_conf.c tests the configuration readers (cli/conf/) alone:
# it links their objects only.
CONF_OBJ := $(filter $(BUILD)/cli/conf/%.o,$(CLI_OBJ))
$(BUILD)/tests/unit/test_conf: tests/unit/test_conf.c $(CONF_OBJ) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(CLI_INC) -o $@ $< $(CONF_OBJ) $(SA_LDFLAGS) -lcmocka

# tests/unit/test_fix.c tests the report's fix in the program's words
# (cli/report/fix.c) from fed lines and a configuration file it writes.
$(BUILD)/tests/unit/test_fix: tests/unit/test_fix.c $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(CLI_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(CLI_INC) -o $@ $< $(CLI_LIB_OBJ) $(CLI_SHARED_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -lcmocka -lm
