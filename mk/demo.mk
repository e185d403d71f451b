# mk/demo.mk: the scenario programs `make demo` runs (demo/*.c -> $(BUILD)/demo/).
DEMO_SRC := $(sort $(wildcard demo/*.c))
DEMO_BIN := $(patsubst demo/%.c,$(BUILD)/demo/%,$(DEMO_SRC))

$(BUILD)/demo/%: demo/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -o $@ $< -lpthread

demo-build:: $(DEMO_BIN)
test-extra:: $(DEMO_BIN)
