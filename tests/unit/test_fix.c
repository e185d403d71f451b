/*
 * test_fix.c: the report's fix in the program's words (cli/report/fix.c),
 * from lines fed as the shim writes them and an nginx configuration written
 * to a temporary folder: a queue that filled leads with the configuration
 * line (its file and line), then the sysctl when the backlog it needs passes
 * somaxconn; a clamped backlog leads with the sysctl; a program the report
 * knows no configuration of gets the call it made and no file. The init
 * lines carry the report's own namespace and boot, so the sysctl is the
 * plain one and the persistent file is /etc/sysctl.d's; a log of another
 * boot, or without argv, reads no file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/report.h"
#include "report/fix.h"

static char dir[64], conf[128], boot[40];
static unsigned long long netns;

static void feed(struct rp_state *st, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	rp_feed_line(st, line, strlen(line));
}

static void init_line(struct rp_state *st, long pid, const char *comm, const char *argv)
{
	feed(st, "{\"event\":\"init\",\"ts\":1700000000,\"pid\":%ld,\"comm\":\"%s\",\"netns\":%llu,\"boot_id\":\"%s\","
	     "\"argv\":%s}", pid, comm, netns, boot, argv);
}

static int has_line(const struct rp_fix *fx, int i, const char *s)
{
	if (i >= fx->nlines || !strstr(fx->lines[i], s)) {
		print_message("line %d: %s\n  wants: %s\n", i, i < fx->nlines ? fx->lines[i] : "(none)", s);
		return 0;
	}
	return 1;
}

static void queue_full_config_first(void **unused)
{
	struct rp_state st;
	struct rp_fix fx;
	char argv[300], want[300];

	rp_state_init(&st);
	snprintf(argv, sizeof argv, "[\"nginx\",\"-c\",\"%s\"]", conf);
	init_line(&st, 10, "nginx", argv);
	feed(&st, "{\"event\":\"listen\",\"ts\":1700000001,\"pid\":10,\"comm\":\"nginx\",\"fd\":6,\"local\":\"127.0.0.1:8080\","
	     "\"backlog_requested\":16,\"backlog_effective\":16,\"somaxconn\":4096,\"ret\":0}");
	feed(&st, "{\"event\":\"listener_stats\",\"ts\":1700000005,\"pid\":10,\"comm\":\"nginx\",\"listen_fd\":6,"
	     "\"local\":\"127.0.0.1:8080\",\"accepts\":100,\"queue_full_seen\":3,\"backlog_needed\":8192,"
	     "\"findings\":[\"accept_queue_full\"],\"msg\":\"full\"}");
	rp_finish(&st);
	assert_true(st.nitems >= 1);
	assert_int_equal(rp_fix_make(&st, 0, &fx), 1);
	snprintf(want, sizeof want, "instead of line 3 of %s", conf);
	assert_true(has_line(&fx, 0, "Fix: listen 127.0.0.1:8080 backlog=8192;"));
	assert_true(has_line(&fx, 0, want));
	assert_true(has_line(&fx, 1, "and: sysctl -w net.core.somaxconn=8192"));
	assert_true(has_line(&fx, 2, "keep it: echo net.core.somaxconn=8192 > /etc/sysctl.d/60-sockaudit.conf"));
	snprintf(want, sizeof want, "nginx asked for 16 at %s:3 (listen 127.0.0.1:8080 backlog=16;)", conf);
	assert_true(has_line(&fx, 3, want));
	assert_true(has_line(&fx, 3, "its queue filled: about 8192 are needed"));
	assert_int_equal(fx.nlines, 4);
	rp_fix_free(&fx);
	rp_state_free(&st);
}

static void clamped_sysctl_first(void **unused)
{
	struct rp_state st;
	struct rp_fix fx;
	json_t *j;

	rp_state_init(&st);
	init_line(&st, 11, "python3", "[\"python3\",\"srv.py\"]");
	feed(&st, "{\"event\":\"listen\",\"ts\":1700000001,\"pid\":11,\"comm\":\"python3\",\"fd\":3,\"local\":\"0.0.0.0:9000\","
	     "\"backlog_requested\":511,\"backlog_effective\":128,\"somaxconn\":128,\"ret\":0,"
	     "\"findings\":[\"backlog_clamped\"],\"msg\":\"clamped\"}");
	rp_finish(&st);
	assert_int_equal(rp_fix_make(&st, 0, &fx), 1);
	assert_true(has_line(&fx, 0, "Fix: sysctl -w net.core.somaxconn=511"));
	assert_true(has_line(&fx, 1, "keep it: echo net.core.somaxconn=511 > /etc/sysctl.d/60-sockaudit.conf"));
	assert_true(has_line(&fx, 2, "python3 (pid 11) called listen(fd, 511); the report knows no configuration"));
	assert_true(has_line(&fx, 2, "cut it to 128"));
	assert_null(fx.config);
	rp_fix_free(&fx);
	j = rp_fix_json(&st, 0);
	assert_string_equal(json_string_value(json_object_get(j, "origin")), "unknown");
	assert_true(json_is_null(json_object_get(j, "file")));
	assert_string_equal(json_string_value(json_object_get(j, "sysctl")), "sysctl -w net.core.somaxconn=511");
	json_decref(j);
	rp_state_free(&st);
}

static void other_boot_reads_nothing(void **unused)
{
	struct rp_state st;
	struct rp_fix fx;
	char argv[300];

	rp_state_init(&st);
	snprintf(argv, sizeof argv, "[\"nginx\",\"-c\",\"%s\"]", conf);
	feed(&st, "{\"event\":\"init\",\"ts\":1700000000,\"pid\":13,\"comm\":\"nginx\",\"netns\":4026531840,"
	     "\"nodename\":\"web1\",\"boot_id\":\"00000000-0000-0000-0000-000000000000\",\"argv\":%s}", argv);
	feed(&st, "{\"event\":\"listen\",\"ts\":1700000001,\"pid\":13,\"comm\":\"nginx\",\"fd\":6,\"local\":\"127.0.0.1:8080\","
	     "\"backlog_requested\":511,\"backlog_effective\":128,\"somaxconn\":128,\"ret\":0,"
	     "\"findings\":[\"backlog_clamped\"],\"msg\":\"clamped\"}");
	rp_finish(&st);
	assert_int_equal(rp_fix_make(&st, 0, &fx), 1);
	assert_int_equal(fx.conf.origin, CF_UNREADABLE);
	assert_string_equal(fx.conf.file, "");
	assert_true(has_line(&fx, 0, "Fix: on web1, in the namespace of pid 13: nsenter -n -t 13 sysctl -w net.core.somaxconn=511"));
	assert_true(has_line(&fx, 2, "ran on another host or boot"));
	rp_fix_free(&fx);
	rp_state_free(&st);
}

static void no_listener_no_fix(void **unused)
{
	struct rp_state st;
	struct rp_fix fx;

	rp_state_init(&st);
	init_line(&st, 12, "curl", "[\"curl\"]");
	feed(&st, "{\"event\":\"connect\",\"ts\":1700000001,\"pid\":12,\"comm\":\"curl\",\"fd\":3,\"peer\":\"127.0.0.1:1\","
	     "\"ret\":-1,\"errno\":\"ECONNREFUSED\",\"findings\":[\"slow_connect\"],\"connect_ms\":1200,\"msg\":\"slow\"}");
	rp_finish(&st);
	assert_true(st.nitems >= 1);
	assert_int_equal(rp_fix_make(&st, 0, &fx), 0);
	assert_true(json_is_null(rp_fix_json(&st, 0)));
	rp_state_free(&st);
}

static int setup(void **unused)
{
	char buf[64];
	ssize_t n = readlink("/proc/self/ns/net", buf, sizeof buf - 1);
	FILE *f;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	netns = strtoull(strchr(buf, '[') + 1, NULL, 10);
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f || !fgets(boot, sizeof boot, f))
		return -1;
	fclose(f);
	boot[strcspn(boot, "\n")] = '\0';
	snprintf(dir, sizeof dir, "/tmp/sa-fix-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(conf, sizeof conf, "%s/nginx.conf", dir);
	f = fopen(conf, "w");
	if (!f)
		return -1;
	fputs("http {\n    server {\n        listen 127.0.0.1:8080 backlog=16;\n    }\n}\n", f);
	fclose(f);
	return 0;
}

static int teardown(void **unused)
{
	unlink(conf);
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(queue_full_config_first),
		cmocka_unit_test(clamped_sysctl_first),
		cmocka_unit_test(other_boot_reads_nothing),
		cmocka_unit_test(no_listener_no_fix),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
