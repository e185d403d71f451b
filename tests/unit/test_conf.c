/* Unit tests for the configuration readers (cli/conf/): each program's
 * files written to a temporary folder, with includes, and the FILE:LINE,
 * directive and fix each reader names for one listener; its default when
 * nothing sets it; what it says when it cannot read. Line numbers in the
 * fixtures are the line of the text as written here (line 1 first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf/conf.h"

static char dir[64];

static const char *put(const char *rel, const char *text)
{
	static char paths[16][512];
	static int k;
	char *p = paths[k++ % 16], *sl;
	FILE *f;

	snprintf(p, 512, "%s/%s", dir, rel);
	sl = strrchr(p, '/');
	*sl = '\0';
	mkdir(p, 0755);
	*sl = '/';
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static int ask(const char *const *argv, int argc, const char *comm, const char *local, long want,
	       struct cf_answer *a)
{
	struct cf_query q = { comm, argv, argc, local, 511, want };

	return cf_backlog(&q, a);
}

static void path_is(const struct cf_answer *a, const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	assert_string_equal(a->file, p);
}

static void nginx_include_glob(void **state)
{
	struct cf_answer a;
	char c[512], n[600];
	const char *argv[] = { "/usr/sbin/nginx", "-c", c };

	snprintf(c, sizeof c, "%s/nginx/nginx.conf", dir);
	put("nginx/nginx.conf", "events { }\n"
	    "http {\n"
	    "    include conf.d/*.conf;   # relative to this file's folder\n"
	    "}\n");
	put("nginx/conf.d/a.conf", "server {\n    listen 8080;\n}\nserver {\n    listen 8081;\n}\n");
	put("nginx/conf.d/b.conf", "# b\nserver {\n"
	    "    server_name b;\n"
	    "    listen 127.0.0.1:8081 reuseport backlog=64;\n"
	    "}\n");
	assert_int_equal(ask(argv, 3, "nginx", "127.0.0.1:8081", 4096, &a), CF_SET);
	path_is(&a, "nginx/conf.d/b.conf");
	assert_int_equal(a.line, 4);
	assert_string_equal(a.directive, "listen 127.0.0.1:8081 reuseport backlog=64;");
	assert_string_equal(a.fix, "listen 127.0.0.1:8081 reuseport backlog=4096;");
	assert_int_equal(a.value, 64);   /* not a.conf's `listen 8081` (a wildcard), read first */

	/* `listen 8080` without backlog=: nginx's default, 511. */
	assert_int_equal(ask(argv, 3, "nginx", "0.0.0.0:8080", 1024, &a), CF_DEFAULT);
	path_is(&a, "nginx/conf.d/a.conf");
	assert_int_equal(a.line, 2);
	assert_int_equal(a.value, 511);
	assert_string_equal(a.fix, "listen 8080 backlog=1024;");
	assert_non_null(strstr(a.note, "511"));

	/* The process retitled itself before its first line. */
	snprintf(n, sizeof n, "nginx: master process /usr/sbin/nginx -c %s", c);
	argv[0] = n;
	assert_int_equal(ask(argv, 1, "nginx", "127.0.0.1:8081", 4096, &a), CF_SET);
	assert_int_equal(a.line, 4);
}

static void nginx_cannot(void **state)
{
	struct cf_answer a;
	char c[512];
	const char *argv[] = { "nginx", "-c", c };

	snprintf(c, sizeof c, "%s/nginx2/nginx.conf", dir);
	put("nginx2/nginx.conf", "http {\n    include missing.conf;\n}\n");
	assert_int_equal(ask(argv, 3, "nginx", "127.0.0.1:8081", 4096, &a), CF_UNREADABLE);
	assert_non_null(strstr(a.note, "missing.conf"));
	/* A relative -c is relative to nginx's compiled-in prefix: not guessed. */
	argv[2] = "conf/nginx.conf";
	assert_int_equal(ask(argv, 3, "nginx", "127.0.0.1:8081", 4096, &a), CF_UNREADABLE);
	assert_non_null(strstr(a.note, "prefix"));
}

static void haproxy_files_and_dirs(void **state)
{
	struct cf_answer a;
	char d[512], f2[512];
	const char *argv[] = { "haproxy", "-W", "-f", d, "-f", f2 };

	snprintf(d, sizeof d, "%s/haproxy.d", dir);
	snprintf(f2, sizeof f2, "%s/haproxy-stats.cfg", dir);
	put("haproxy.d/10-global.cfg", "global\n    maxconn 2000\n\n"
	    "defaults\n    mode http\n    backlog 77\n");
	put("haproxy.d/20-web.cfg", "frontend web\n"
	    "    bind 127.0.0.1:8080,127.0.0.1:8082\n"
	    "    maxconn 300\n"
	    "frontend api\n"
	    "    bind :9001\n");
	put("haproxy.d/ignored.txt", "frontend nope\n    bind 127.0.0.1:9002 backlog 5\n");
	put("haproxy-stats.cfg", "defaults\n    timeout client 1s\n"
	    "listen stats\n"
	    "    bind 127.0.0.1:9000 backlog 50 name st\n");
	/* The defaults' backlog applies to the frontend after it. */
	assert_int_equal(ask(argv, 6, "haproxy", "127.0.0.1:8082", 4096, &a), CF_SET);
	path_is(&a, "haproxy.d/10-global.cfg");
	assert_int_equal(a.line, 6);
	assert_string_equal(a.directive, "backlog 77");
	assert_string_equal(a.fix, "bind 127.0.0.1:8080,127.0.0.1:8082 backlog 4096");
	assert_non_null(strstr(a.where, "line 2 of"));
	/* The bind's own backlog, in the second -f file. */
	assert_int_equal(ask(argv, 6, "haproxy", "127.0.0.1:9000", 4096, &a), CF_SET);
	path_is(&a, "haproxy-stats.cfg");
	assert_int_equal(a.line, 4);
	assert_int_equal(a.value, 50);
	assert_string_equal(a.fix, "bind 127.0.0.1:9000 name st backlog 4096");
	/* A *.txt in the folder is not read. */
	assert_int_equal(ask(argv, 6, "haproxy", "127.0.0.1:9002", 4096, &a), CF_UNREADABLE);
}

static void haproxy_maxconn(void **state)
{
	struct cf_answer a;
	char f[512];
	const char *argv[] = { "/usr/sbin/haproxy", "-f", f };

	snprintf(f, sizeof f, "%s/haproxy-mc.cfg", dir);
	put("haproxy-mc.cfg", "global\n    maxconn 2000\n"
	    "frontend web\n"
	    "    bind 127.0.0.1:8080\n"
	    "    maxconn 300\n"
	    "frontend other\n"
	    "    bind 127.0.0.1:8090\n");
	assert_int_equal(ask(argv, 3, "haproxy", "127.0.0.1:8080", 600, &a), CF_DERIVED);
	assert_int_equal(a.line, 5);
	assert_string_equal(a.directive, "maxconn 300");
	assert_non_null(strstr(a.note, "maxconn"));
	assert_string_equal(a.fix, "bind 127.0.0.1:8080 backlog 600");
	/* No maxconn of its own: the global one. */
	assert_int_equal(ask(argv, 3, "haproxy", "127.0.0.1:8090", 600, &a), CF_DERIVED);
	assert_int_equal(a.line, 2);
	assert_int_equal(a.value, 2000);
}

static void redis_include(void **state)
{
	struct cf_answer a;
	char main[512], text[1024];
	const char *argv[] = { "redis-server", main, "--port", "6390" };

	snprintf(main, sizeof main, "%s/redis/redis.conf", dir);
	snprintf(text, sizeof text, "port 6379\ntcp-backlog 64\ninclude %s/redis/local.conf\n", dir);
	put("redis/redis.conf", text);
	put("redis/local.conf", "# local\n\ntcp-backlog 128\n");
	/* The last one read wins: the include's, after line 2. */
	assert_int_equal(ask(argv, 4, "redis-server", "127.0.0.1:6390", 1024, &a), CF_SET);
	path_is(&a, "redis/local.conf");
	assert_int_equal(a.line, 3);
	assert_string_equal(a.directive, "tcp-backlog 128");
	assert_string_equal(a.fix, "tcp-backlog 1024");

	const char *argv2[] = { "redis-server", main, "--tcp-backlog", "32" };
	assert_int_equal(ask(argv2, 4, "redis-server", "127.0.0.1:6390", 1024, &a), CF_ARGV);
	assert_int_equal(a.value, 32);

	const char *argv3[] = { "redis-server", "--port", "6390" };
	assert_int_equal(ask(argv3, 3, "redis-server", "127.0.0.1:6390", 1024, &a), CF_DEFAULT);
	assert_int_equal(a.value, 511);

	/* Retitled before its first line: not a command line. */
	const char *argv5[] = { "redis-server 127.0.0.1:6390" };
	assert_int_equal(ask(argv5, 1, "redis-server", "127.0.0.1:6390", 1024, &a), CF_UNREADABLE);
	assert_non_null(strstr(a.note, "rewrote its command line"));

	const char *argv4[] = { "redis-server", "redis.conf" };
	assert_int_equal(ask(argv4, 2, "redis-server", "127.0.0.1:6390", 1024, &a), CF_UNREADABLE);
	assert_non_null(strstr(a.note, "working directory"));
}

static void apache_include(void **state)
{
	struct cf_answer a;
	char root[512];
	const char *argv[] = { "/usr/sbin/apache2", "-d", root, "-f", "main.conf", "-DFOREGROUND" };

	snprintf(root, sizeof root, "%s/apache", dir);
	put("apache/main.conf", "ServerName x\n"
	    "Listen 127.0.0.1:8080\n"
	    "IncludeOptional nothing/*.conf\n"
	    "Include conf.d/*.conf\n");
	put("apache/conf.d/mpm.conf", "<IfModule mpm_prefork_module>\n"
	    "  StartServers 2\n"
	    "</IfModule>\n"
	    "listenbacklog \\\n"
	    "   200\n");
	assert_int_equal(ask(argv, 6, "apache2", "127.0.0.1:8080", 1024, &a), CF_SET);
	path_is(&a, "apache/conf.d/mpm.conf");
	assert_int_equal(a.line, 4);
	assert_int_equal(a.value, 200);
	assert_string_equal(a.fix, "ListenBacklog 1024");

	put("apache/conf.d/mpm.conf", "Include ${APACHE_CONFDIR}/x.conf\n");
	assert_int_equal(ask(argv, 6, "apache2", "127.0.0.1:8080", 1024, &a), CF_UNREADABLE);
	assert_non_null(strstr(a.note, "cannot expand ${APACHE_CONFDIR}/x.conf (line 1 of"));
	put("apache/conf.d/mpm.conf", "# nothing\n");
	assert_int_equal(ask(argv, 6, "apache2", "127.0.0.1:8080", 1024, &a), CF_DEFAULT);
	path_is(&a, "apache/main.conf");
	assert_int_equal(a.line, 2);
	assert_string_equal(a.directive, "Listen 127.0.0.1:8080");
	assert_int_equal(a.value, 511);
}

static void lighttpd_socket_block(void **state)
{
	struct cf_answer a;
	char f[512];
	const char *argv[] = { "lighttpd", "-D", "-f", f };

	snprintf(f, sizeof f, "%s/lighttpd/lighttpd.conf", dir);
	put("lighttpd/lighttpd.conf", "server.port = 8080\n"
	    "server.bind = \"127.0.0.1\"\n"
	    "include \"conf.d/*.conf\"\n");
	put("lighttpd/conf.d/10-sock.conf", "server.listen-backlog = 256\n"
	    "$HTTP[\"host\"] == \"x\" {\n"
	    "  server.listen-backlog = 9\n"
	    "}\n"
	    "$SERVER[\"socket\"] == \"127.0.0.1:8081\" {\n"
	    "  server.listen-backlog=32\n"
	    "}\n");
	assert_int_equal(ask(argv, 4, "lighttpd", "127.0.0.1:8081", 512, &a), CF_SET);
	path_is(&a, "lighttpd/conf.d/10-sock.conf");
	assert_int_equal(a.line, 6);
	assert_int_equal(a.value, 32);
	assert_int_equal(ask(argv, 4, "lighttpd", "127.0.0.1:8080", 512, &a), CF_SET);
	assert_int_equal(a.line, 1);
	assert_int_equal(a.value, 256);
	assert_string_equal(a.fix, "server.listen-backlog = 512");

	put("lighttpd/conf.d/10-sock.conf", "\n");
	assert_int_equal(ask(argv, 4, "lighttpd", "127.0.0.1:8080", 512, &a), CF_DEFAULT);
	assert_int_equal(a.value, 1024);
	/* A command's output is not run, and the answer says so. */
	put("lighttpd/conf.d/10-sock.conf", "\ninclude_shell \"/usr/share/lighttpd/create-mime.conf.pl\"\n");
	assert_int_equal(ask(argv, 4, "lighttpd", "127.0.0.1:8080", 512, &a), CF_DEFAULT);
	assert_non_null(strstr(a.note, "10-sock.conf:2 was not run"));
}

static void memcached_flag(void **state)
{
	struct cf_answer a;
	const char *argv[] = { "/usr/bin/memcached", "-l", "127.0.0.1", "-b", "64" };
	const char *argv2[] = { "memcached", "-p", "11211" };

	assert_int_equal(ask(argv, 5, "memcached", "127.0.0.1:11211", 2048, &a), CF_ARGV);
	assert_int_equal(a.value, 64);
	assert_string_equal(a.directive, "-b 64");
	assert_string_equal(a.fix, "-b 2048");
	assert_string_equal(a.file, "");
	assert_int_equal(ask(argv2, 3, "memcached", "127.0.0.1:11211", 2048, &a), CF_DEFAULT);
	assert_int_equal(a.value, 1024);
}

static void postgres_include_dir(void **state)
{
	struct cf_answer a;
	char data[512];
	const char *argv[] = { "/usr/lib/postgresql/15/bin/postgres", "-D", data, "-k", "/tmp" };

	snprintf(data, sizeof data, "%s/pgdata", dir);
	put("pgdata/postgresql.conf", "listen_addresses = 'localhost'\n"
	    "max_connections = 100  # (change requires restart)\n"
	    "include_dir 'conf.d'\n");
	put("pgdata/conf.d/10-conn.conf", "\n\nmax_connections=40\n");
	assert_int_equal(ask(argv, 5, "postgres", "127.0.0.1:5432", 600, &a), CF_DERIVED);
	path_is(&a, "pgdata/conf.d/10-conn.conf");
	assert_int_equal(a.line, 3);
	assert_int_equal(a.value, 40);
	assert_string_equal(a.fix, "max_connections = 278");
	assert_non_null(strstr(a.note, "no backlog setting"));
	/* ALTER SYSTEM's file comes last. */
	put("pgdata/postgresql.auto.conf", "max_connections = '20'\n");
	assert_int_equal(ask(argv, 5, "postgres", "127.0.0.1:5432", 600, &a), CF_DERIVED);
	path_is(&a, "pgdata/postgresql.auto.conf");
	assert_int_equal(a.value, 20);
	unlink(a.file);

	const char *argv2[] = { "postgres", "-D", data, "-c", "max_connections=7" };
	assert_int_equal(ask(argv2, 5, "postgres", "127.0.0.1:5432", 600, &a), CF_DERIVED);
	assert_int_equal(a.value, 7);
	assert_string_equal(a.directive, "-c max_connections=7");

	const char *argv3[] = { "postgres" };   /* PGDATA: not on the command line */
	assert_int_equal(ask(argv3, 1, "postgres", "127.0.0.1:5432", 600, &a), CF_UNREADABLE);
}

static void unknown_program(void **state)
{
	struct cf_answer a;
	const char *argv[] = { "/usr/bin/python3", "-m", "http.server" };

	assert_int_equal(ask(argv, 3, "python3", "0.0.0.0:8000", 1024, &a), CF_UNKNOWN);
	assert_null(a.program);
	assert_string_equal(a.file, "");
	assert_string_equal(a.fix, "");
}

static void words_and_tokens(void **state)
{
	const char *text = "  bind \"a b\" 'c' # note\n\n# all comment\nx \\\n  y\n";
	struct cf_words w;
	struct cf_tok t;
	size_t pos = 0;
	long line = 0;

	assert_int_equal(cf_next_line(text, &pos, &line, 1, &w), 1);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.w[1], "a b");
	assert_string_equal(w.w[2], "c");
	assert_int_equal(w.line, 1);
	assert_string_equal(w.raw, "bind \"a b\" 'c'");
	assert_int_equal(cf_next_line(text, &pos, &line, 1, &w), 1);
	assert_int_equal(w.line, 4);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.w[1], "y");
	assert_int_equal(cf_next_line(text, &pos, &line, 1, &w), 0);

	text = "a {\n # c\n  b \"x;y\";}\n";
	pos = 0;
	line = 1;
	assert_int_equal(cf_next_tok(text, &pos, &line, &t), 1);
	assert_string_equal(t.s, "a");
	assert_int_equal(cf_next_tok(text, &pos, &line, &t), 1);
	assert_int_equal(t.special, '{');
	assert_int_equal(cf_next_tok(text, &pos, &line, &t), 1);
	assert_string_equal(t.s, "b");
	assert_int_equal(t.line, 3);
	assert_int_equal(cf_next_tok(text, &pos, &line, &t), 1);
	assert_string_equal(t.s, "x;y");
	assert_int_equal(cf_next_tok(text, &pos, &line, &t), 1);
	assert_int_equal(t.special, ';');

	assert_int_equal(cf_addr_match("", "80", "0.0.0.0:80"), 2);
	assert_int_equal(cf_addr_match("*", "80", "127.0.0.1:80"), 1);
	assert_true(cf_addr_match("*", "80", "[::]:80"));
	assert_true(cf_addr_match("localhost", "80", "127.0.0.1:80"));
	assert_true(cf_addr_match("[::1]", "80", "[::1]:80"));
	assert_false(cf_addr_match("127.0.0.1", "81", "127.0.0.1:80"));
	assert_false(cf_addr_match("127.0.0.2", "80", "127.0.0.1:80"));
	assert_false(cf_addr_match("127.0.0.1", "80", "0.0.0.0:80"));
}

static int setup(void **state)
{
	snprintf(dir, sizeof dir, "/tmp/sa-conf-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(words_and_tokens),
		cmocka_unit_test(nginx_include_glob),
		cmocka_unit_test(nginx_cannot),
		cmocka_unit_test(haproxy_files_and_dirs),
		cmocka_unit_test(haproxy_maxconn),
		cmocka_unit_test(redis_include),
		cmocka_unit_test(apache_include),
		cmocka_unit_test(lighttpd_socket_block),
		cmocka_unit_test(memcached_flag),
		cmocka_unit_test(postgres_include_dir),
		cmocka_unit_test(unknown_program),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
