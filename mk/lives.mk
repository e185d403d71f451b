# Test programs that link a library of their own (liburing, from
# liburing-dev: scripts/ensure-deps.sh test).
$(BUILD)/progs/life_uring: tests/progs/life_uring.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall $(SAN_FLAGS) -o $@ $< -luring -lpthread
