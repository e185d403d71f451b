# mk/bench.mk: what the shim costs.
#   make bench             counted first (bench/counts.sh: syscalls, instructions and
#                          lines per request per arm: plain, default, attached, trace, strace),
#                          then wall and CPU ratios side by side (bench/run.sh)
#   make bench-counts      the counted figures only
#   make bench-socat       socat fork (a process per connection), plain vs default
#   make bench-fork        socat fork + a SYSTEM shell: page faults and syscalls per
#                          request, plain, an empty library and the shim (bench/fork_faults.sh)
#   make bench-conns-mem   memory of 10,000 idle connections, and after they close
#   make bench-callgrind   instructions per call of the wrappers' fast paths (valgrind)
#   make bench-mem         the shim's resident memory at low and high RLIMIT_NOFILE
#   make bench-start       instructions per exec of /bin/true (callgrind), plain, a
#                          one-function preload and the shim (bench/start_cost.sh)
#   make bench-exec        an exec loop of /bin/true timed, plain then shim (bench/exec_loop.sh)
#   make bench-attach      how long attach and detach stop nginx and a 16-thread server,
#                          and ab's latency across them (bench/attach.sh)
# Documented in docs/performance.md.

BENCH_MB := $(BUILD)/bench/microbench

$(BENCH_MB): bench/microbench.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -o $@ $<

BENCH_FDTAB := $(BUILD)/bench/fdtab_mem

# Links the shim's objects (not interpose.o) to read the fd table's size.
$(BENCH_FDTAB): bench/fdtab_mem.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(SA_CFLAGS) -Ishim -o $@ $< $(CORE_OBJ) $(SA_LDFLAGS) $(JANSSON_LIBS) -ldl -lpthread -lm

.PHONY: bench bench-callgrind bench-mem bench-build bench-counts bench-socat bench-fork bench-conns-mem bench-start bench-exec bench-attach
bench-build: all $(BENCH_MB) $(BENCH_FDTAB)

bench:
	@scripts/ensure-deps.sh build bench
	@$(MAKE) --no-print-directory bench-build
	@echo "== counted per request (exact; the figures to judge by)"
	@bench/counts.sh; c=$$?; \
	echo "== counted per exec (the start cost: exact)"; \
	bench/start_cost.sh; s=$$?; \
	echo "== wall and CPU ratios (secondary: they swing 2-15% on a shared machine)"; \
	bench/run.sh; r=$$?; [ $$c = 0 ] && [ $$s = 0 ] && [ $$r = 0 ]

bench-counts:
	@scripts/ensure-deps.sh build bench
	@$(MAKE) --no-print-directory bench-build
	@bench/counts.sh

bench-attach:
	@scripts/ensure-deps.sh build bench
	@$(MAKE) --no-print-directory all
	@bench/attach.sh

bench-socat:
	@$(MAKE) --no-print-directory all
	@bench/socat_fork.sh

bench-fork:
	@$(MAKE) --no-print-directory all
	@bench/fork_faults.sh

bench-start:
	@scripts/ensure-deps.sh build bench
	@$(MAKE) --no-print-directory all
	@bench/start_cost.sh

bench-exec:
	@$(MAKE) --no-print-directory all
	@bench/exec_loop.sh

bench-conns-mem:
	@$(MAKE) --no-print-directory all
	@bench/conns_mem.sh

bench-callgrind:
	@scripts/ensure-deps.sh build bench
	@$(MAKE) --no-print-directory bench-build
	@bench/callgrind.sh

bench-mem:
	@scripts/ensure-deps.sh build bench
	@$(MAKE) --no-print-directory bench-build
	@bench/mem.sh

# make bench-report: `sockaudit report` on a real 1M-line trace log,
# wall time and peak memory. The log is made once by bench/report_log.sh
# (nginx under the shim at trace, wrk on loopback) and kept in $(BUILD)/bench.
.PHONY: bench-report
bench-report: all
	@scripts/ensure-deps.sh build bench
	@mkdir -p $(BUILD)/bench
	@[ -s $(BUILD)/bench/report-1m.jsonl ] || bench/report_log.sh $(BUILD)/bench/report-1m.jsonl 1000000
	@wc -l <$(BUILD)/bench/report-1m.jsonl | sed 's/$$/ lines/'
	@/usr/bin/time -f 'text: %e s wall, %M kB max RSS' ./sockaudit report $(BUILD)/bench/report-1m.jsonl >/dev/null
	@/usr/bin/time -f 'html: %e s wall, %M kB max RSS' ./sockaudit report --html $(BUILD)/bench/report-1m.html $(BUILD)/bench/report-1m.jsonl
	@stat -c 'html: %s bytes' $(BUILD)/bench/report-1m.html

# make bench-follow: what `sockaudit metrics --follow` costs on a trace log
# growing at 100,000 lines a second (bench/follow_cost.sh; the lines are
# the same real nginx trace log as bench-report's), at the default
# interval and at 1 s.
.PHONY: bench-follow
bench-follow: all
	@scripts/ensure-deps.sh build bench
	@mkdir -p $(BUILD)/bench
	@bench/follow_cost.sh 100000 20
	@INTERVAL=1 bench/follow_cost.sh 100000 20
