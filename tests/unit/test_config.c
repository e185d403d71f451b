/* Unit tests for shim/config.c: defaults, bad values (default + one
 * warning each), %p expansion, sinks, program-name lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"

static const char *const *env;   /* NAME=VALUE list for fake_getenv */

static char *fake_getenv(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return (char *)env[i] + n + 1;
	return NULL;
}

static void load(struct sa_config *c, const char *const *e)
{
	env = e;
	sa_config_load(c, fake_getenv, 4242);
}

static void defaults(void **state)
{
	struct sa_config c;

	load(&c, NULL);
	assert_int_equal(c.level, SA_LEVEL_INFO);
	assert_int_equal(c.sink, SA_SINK_STDERR);
	assert_int_equal(c.stats_interval, 5);
	assert_int_equal(c.disable, 0);
	assert_int_equal(c.nwarnings, 0);
	assert_string_equal(c.comm, "");
}

static void good_values(void **state)
{
	static const char *const e[] = { "SOCKAUDIT_LEVEL=trace", "SOCKAUDIT_LOG=/tmp/a.%p.jsonl",
		"SOCKAUDIT_STATS_INTERVAL=0", "SOCKAUDIT_DISABLE=1", "SOCKAUDIT_COMM=nginx,python3", NULL };
	struct sa_config c;

	load(&c, e);
	assert_int_equal(c.level, SA_LEVEL_TRACE);
	assert_int_equal(c.sink, SA_SINK_PATH);
	assert_string_equal(c.path, "/tmp/a.4242.jsonl");
	assert_int_equal(c.stats_interval, 0);
	assert_int_equal(c.disable, 1);
	assert_int_equal(c.nwarnings, 0);
}

static void sinks(void **state)
{
	static const char *const fd[] = { "SOCKAUDIT_LOG=fd:7", NULL };
	static const char *const sl[] = { "SOCKAUDIT_LOG=syslog", NULL };
	static const char *const pct[] = { "SOCKAUDIT_LOG=/x/100%%-%p-%q", NULL };
	struct sa_config c;

	load(&c, fd);
	assert_int_equal(c.sink, SA_SINK_FD);
	assert_int_equal(c.sink_fd, 7);
	load(&c, sl);
	assert_int_equal(c.sink, SA_SINK_SYSLOG);
	load(&c, pct);
	assert_string_equal(c.path, "/x/100%-4242-%q");
}

static void bad_values_keep_defaults_and_warn_once_each(void **state)
{
	static const char *const e[] = { "SOCKAUDIT_LEVEL=loud", "SOCKAUDIT_STATS_INTERVAL=-3",
		"SOCKAUDIT_LOG=fd:abc", "SOCKAUDIT_SLOW_CONNECT_MS=12x", "SOCKAUDIT_DISABLE=maybe", NULL };
	struct sa_config c;

	load(&c, e);
	assert_int_equal(c.level, SA_LEVEL_INFO);
	assert_int_equal(c.stats_interval, 5);
	assert_int_equal(c.sink, SA_SINK_STDERR);
	assert_int_equal(c.slow_connect_ms, 500);
	assert_int_equal(c.disable, 0);
	assert_int_equal(c.nwarnings, 5);
	assert_string_equal(c.warnings[0].var, "SOCKAUDIT_DISABLE");
	assert_string_equal(c.warnings[1].var, "SOCKAUDIT_LEVEL");
	assert_string_equal(c.warnings[1].value, "loud");
}

static void overlong_values_are_cut_safely(void **state)
{
	static char big[5000];
	static const char *e[] = { big, NULL };
	struct sa_config c;

	memset(big, 'a', sizeof big - 1);
	memcpy(big, "SOCKAUDIT_LOG=", 14);
	load(&c, e);
	assert_int_equal(c.sink, SA_SINK_STDERR);
	assert_int_equal(c.nwarnings, 1);
	assert_true(strlen(c.warnings[0].value) < sizeof c.warnings[0].value);
	memcpy(big, "SOCKAUDIT_COMM=", 15);
	load(&c, e);
	assert_string_equal(c.comm, "");
	assert_int_equal(c.nwarnings, 1);
	/* Fail closed: the list was meant to limit auditing. */
	assert_int_equal(c.comm_overflow, 1);
	assert_string_equal(c.warnings[0].var, "SOCKAUDIT_COMM");
}

static void disable_words(void **state)
{
	static const char *const on[] = { "1", "on", "yes", "true", "ON", "True", NULL };
	static const char *const off[] = { "0", "off", "no", "false", "", "NO", NULL };
	static const char *const bad[] = { "2", "disable", " on", "onn", NULL };
	char var[64];
	const char *e[] = { var, NULL };
	struct sa_config c;
	int i;

	/* sa_config_disables (the signal wrapper's answer without init) says
	 * what the loaded config says, for every value. */
	assert_int_equal(sa_config_disables(NULL), 0);
	for (i = 0; on[i]; i++) {
		snprintf(var, sizeof var, "SOCKAUDIT_DISABLE=%s", on[i]);
		load(&c, e);
		assert_int_equal(c.disable, 1);
		assert_int_equal(c.nwarnings, 0);
		assert_int_equal(sa_config_disables(on[i]), 1);
	}
	for (i = 0; off[i]; i++) {
		snprintf(var, sizeof var, "SOCKAUDIT_DISABLE=%s", off[i]);
		load(&c, e);
		assert_int_equal(c.disable, 0);
		assert_int_equal(c.nwarnings, 0);
		assert_int_equal(sa_config_disables(off[i]), 0);
	}
	for (i = 0; bad[i]; i++) {
		snprintf(var, sizeof var, "SOCKAUDIT_DISABLE=%s", bad[i]);
		load(&c, e);
		assert_int_equal(sa_config_disables(bad[i]), 0);
		assert_int_equal(c.disable, 0);
		assert_int_equal(c.nwarnings, 1);
		assert_string_equal(c.warnings[0].var, "SOCKAUDIT_DISABLE");
	}
}

static void fd_sink_digits_only(void **state)
{
	static const char *const bad[] = { "fd: 2", "fd:+2", "fd:-1", "fd:", "fd:2 ", "fd:0x2", NULL };
	static const char *const good[] = { "fd:0", "fd:2", "fd:1023", NULL };
	char var[64];
	const char *e[] = { var, NULL };
	struct sa_config c;
	int i;

	for (i = 0; bad[i]; i++) {
		snprintf(var, sizeof var, "SOCKAUDIT_LOG=%s", bad[i]);
		load(&c, e);
		assert_int_equal(c.sink, SA_SINK_STDERR);
		assert_int_equal(c.nwarnings, 1);
		assert_string_equal(c.warnings[0].var, "SOCKAUDIT_LOG");
	}
	for (i = 0; good[i]; i++) {
		snprintf(var, sizeof var, "SOCKAUDIT_LOG=%s", good[i]);
		load(&c, e);
		assert_int_equal(c.sink, SA_SINK_FD);
		assert_int_equal(c.sink_fd, atoi(good[i] + 3));
		assert_int_equal(c.nwarnings, 0);
	}
}

static void relative_paths(void **state)
{
	static const char *const rel[] = { "SOCKAUDIT_LOG=rel-%p.jsonl", NULL };
	char p[64], cwd[512], want[600];
	struct sa_config c;

	strcpy(p, "rel.jsonl");
	assert_int_equal(sa_config_absolute("/start/dir", p, sizeof p), 0);
	assert_string_equal(p, "/start/dir/rel.jsonl");
	strcpy(p, "rel.jsonl");
	assert_int_equal(sa_config_absolute("/start/dir/", p, sizeof p), 0);
	assert_string_equal(p, "/start/dir/rel.jsonl");
	strcpy(p, "rel.jsonl");
	assert_int_equal(sa_config_absolute("/", p, sizeof p), 0);
	assert_string_equal(p, "/rel.jsonl");
	strcpy(p, "/abs.jsonl");
	assert_int_equal(sa_config_absolute("/start", p, sizeof p), 0);
	assert_string_equal(p, "/abs.jsonl");
	strcpy(p, "rel.jsonl");
	assert_int_equal(sa_config_absolute("", p, sizeof p), 0);   /* unknown: as given */
	assert_string_equal(p, "rel.jsonl");
	strcpy(p, "rel.jsonl");
	assert_int_equal(sa_config_absolute("/a/directory/name/long/enough/to/overflow/sixty/four/bytes", p, sizeof p),
			 -ENAMETOOLONG);
	/* Through the loader: against the directory of the first load, even
	 * after a chdir (a forked child reloading its own %p path). */
	assert_non_null(getcwd(cwd, sizeof cwd));
	load(&c, rel);
	snprintf(want, sizeof want, "%s/rel-4242.jsonl", strcmp(cwd, "/") ? cwd : "");
	assert_string_equal(c.path, want);
	assert_int_equal(chdir("/"), 0);
	load(&c, rel);
	assert_string_equal(c.path, want);
	assert_int_equal(chdir(cwd), 0);
}

static void comm_lists(void **state)
{
	assert_true(sa_config_comm_match("", "anything"));
	assert_true(sa_config_comm_match("nginx,python3", "python3"));
	assert_true(sa_config_comm_match("nginx,python3", "nginx"));
	assert_false(sa_config_comm_match("nginx,python3", "python"));
	assert_false(sa_config_comm_match("nginx", "nginx2"));
	assert_false(sa_config_comm_match(",", "x"));
	/* The kernel keeps 15 bytes of a name. */
	assert_true(sa_config_comm_match("a-very-long-program-name", "a-very-long-pro"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(good_values),
		cmocka_unit_test(sinks),
		cmocka_unit_test(bad_values_keep_defaults_and_warn_once_each),
		cmocka_unit_test(overlong_values_are_cut_safely),
		cmocka_unit_test(comm_lists),
		cmocka_unit_test(disable_words),
		cmocka_unit_test(fd_sink_digits_only),
		cmocka_unit_test(relative_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
