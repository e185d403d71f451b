/*
 * conf/text.c: what every configuration reader shares: reading a file
 * whole, splitting a line into words, nginx's tokens, include patterns
 * expanded as the programs expand them (glob, sorted), and whether an
 * address in a configuration names a listener. Reads files only.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"

#define CF_FILE_MAX (4u << 20)

int cf_file_read(struct cf_file *f, const char *path)
{
	struct stat sb;
	size_t got = 0;
	int fd;

	memset(f, 0, sizeof *f);
	snprintf(f->path, sizeof f->path, "%s", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (size_t)sb.st_size > CF_FILE_MAX) {
		int e = S_ISDIR(sb.st_mode) ? -EISDIR : -EFBIG;

		close(fd);
		return e;
	}
	f->text = malloc((size_t)sb.st_size + 1);
	if (!f->text) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, f->text + got, (size_t)sb.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	f->text[got] = '\0';
	f->len = got;
	return 0;
}

void cf_file_free(struct cf_file *f)
{
	free(f->text);
	f->text = NULL;
}

void cf_say(char *buf, size_t len, const char *fmt, ...)
{
	size_t have = strlen(buf);
	va_list ap;

	if (have + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + have, len - have, fmt, ap);
	va_end(ap);
}

const char *cf_n(const struct cf_query *q)
{
	static char n[24];

	if (q->want <= 0)
		return "N";
	snprintf(n, sizeof n, "%ld", q->want);
	return n;
}

void cf_put(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);   /* cut to LEN: the answer's fields are for reading */
	va_end(ap);
}

static void put_char(char *w, size_t *n, char c)
{
	if (*n + 1 < 256)
		w[(*n)++] = c;
}

int cf_next_line(const char *text, size_t *pos, long *line, int cont, struct cf_words *out)
{
	size_t p = *pos, rawn = 0;

	memset(out, 0, sizeof *out);
	while (text[p]) {
		size_t n = 0;
		char quote = 0;
		int in_word = 0;

		out->n = 0;
		rawn = 0;
		out->line = ++*line;
		for (; text[p] && text[p] != '\n'; p++) {
			char c = text[p];

			if (cont && c == '\\' && text[p + 1] == '\n') {
				++*line;
				p++;
				continue;
			}
			if (!quote && c == '#' && !in_word)
				break;
			if (rawn + 1 < sizeof out->raw && (rawn || (c != ' ' && c != '\t')) && c != '\r')
				out->raw[rawn++] = c;
			if (quote) {
				if (c == quote)
					quote = 0;
				else if (c == '\\' && text[p + 1] && text[p + 1] != '\n')
					put_char(out->w[out->n], &n, text[++p]);
				else
					put_char(out->w[out->n], &n, c);
				continue;
			}
			if (c == ' ' || c == '\t' || c == '\r') {
				if (in_word && out->n < CF_WORDS_MAX - 1) {
					out->w[out->n][n] = '\0';
					out->n++;
				}
				in_word = 0;
				n = 0;
				continue;
			}
			if (!in_word) {
				in_word = 1;
				n = 0;
			}
			if (c == '"' || c == '\'')
				quote = c;
			else
				put_char(out->w[out->n], &n, c);
		}
		if (in_word && out->n < CF_WORDS_MAX) {
			out->w[out->n][n] = '\0';
			out->n++;
		}
		/* A comment's text is no part of the line as written. */
		while (text[p] && text[p] != '\n')
			p++;
		if (text[p] == '\n')
			p++;
		while (rawn && (out->raw[rawn - 1] == ' ' || out->raw[rawn - 1] == '\t'))
			rawn--;
		out->raw[rawn] = '\0';
		if (out->n) {
			*pos = p;
			return 1;
		}
	}
	*pos = p;
	return 0;
}

int cf_next_tok(const char *text, size_t *pos, long *line, struct cf_tok *t)
{
	size_t p = *pos, n = 0;

	memset(t, 0, sizeof *t);
	for (;;) {
		while (text[p] == ' ' || text[p] == '\t' || text[p] == '\r' || text[p] == '\n') {
			if (text[p] == '\n')
				++*line;
			p++;
		}
		if (text[p] != '#')
			break;
		while (text[p] && text[p] != '\n')
			p++;
	}
	if (!text[p]) {
		*pos = p;
		return 0;
	}
	t->line = *line;
	if (text[p] == ';' || text[p] == '{' || text[p] == '}') {
		t->special = text[p];
		t->s[0] = text[p];
		*pos = p + 1;
		return 1;
	}
	if (text[p] == '"' || text[p] == '\'') {
		char q = text[p++];

		t->quoted = 1;
		for (; text[p] && text[p] != q; p++) {
			if (text[p] == '\\' && text[p + 1])
				p++;
			if (text[p] == '\n')
				++*line;
			if (n + 1 < sizeof t->s)
				t->s[n++] = text[p];
		}
		if (text[p])
			p++;
		*pos = p;
		return 1;
	}
	for (; text[p] && !strchr(" \t\r\n;{}", text[p]); p++) {
		if (text[p] == '\\' && text[p + 1])
			p++;
		if (n + 1 < sizeof t->s)
			t->s[n++] = text[p];
	}
	*pos = p;
	return 1;
}

void cf_dirname(const char *path, char *out, size_t len)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		snprintf(out, len, ".");
	else if (sl == path)
		snprintf(out, len, "/");
	else
		snprintf(out, len, "%.*s", (int)(sl - path), path);
}

void cf_join(const char *base, const char *rel, char *out, size_t len)
{
	if (rel[0] == '/' || !base || !base[0])
		snprintf(out, len, "%s", rel);
	else
		snprintf(out, len, "%s/%s", base, rel);
}

int cf_glob(const char *base, const char *pattern, int (*fn)(void *ctx, const char *path), void *ctx)
{
	char full[CF_PATH];
	glob_t g;
	size_t i;
	int rc;

	cf_join(base, pattern, full, sizeof full);
	if (!strpbrk(full, "*?[")) {
		if (access(full, R_OK) != 0)
			return -errno;
		fn(ctx, full);
		return 1;
	}
	memset(&g, 0, sizeof g);
	rc = glob(full, 0, NULL, &g);   /* sorted, as nginx and apache read them */
	if (rc == GLOB_NOMATCH) {
		globfree(&g);
		return 0;
	}
	if (rc != 0) {
		globfree(&g);
		return -EIO;
	}
	for (i = 0; i < g.gl_pathc; i++)
		fn(ctx, g.gl_pathv[i]);
	rc = (int)g.gl_pathc;
	globfree(&g);
	return rc;
}

int cf_local_port(const char *local, char *out, size_t len)
{
	const char *c = local ? strrchr(local, ':') : NULL;

	if (!c || !c[1] || local[0] == '/' || local[0] == '@')
		return 0;
	snprintf(out, len, "%s", c + 1);
	return 1;
}

static int wildcard_host(const char *h)
{
	return !h[0] || !strcmp(h, "*") || !strcmp(h, "0.0.0.0") || !strcmp(h, "::") || !strcmp(h, "[::]");
}

int cf_addr_match(const char *host, const char *port, const char *local)
{
	char lport[32], lhost[CF_PATH];
	const char *c;

	if (!local || !port || !cf_local_port(local, lport, sizeof lport) || strcmp(port, lport))
		return 0;
	c = strrchr(local, ':');
	snprintf(lhost, sizeof lhost, "%.*s", (int)(c - local), local);
	/* A wildcard in the file covers any address of the port; one in the
	 * log is only a wildcard's. An exact address scores higher. */
	if (wildcard_host(host) || wildcard_host(lhost))
		return wildcard_host(host) && wildcard_host(lhost) ? 2 : wildcard_host(host) ? 1 : 0;
	if (!strcmp(host, "localhost"))
		return !strcmp(lhost, "127.0.0.1") || !strcmp(lhost, "[::1]") ? 2 : 0;
	if (host[0] == '[' || lhost[0] == '[') {
		size_t hl = strlen(host);
		const char *h = host[0] == '[' ? host + 1 : host;

		if (host[0] == '[')
			hl -= 2;
		return lhost[0] == '[' && strlen(lhost) == hl + 2 && !strncmp(lhost + 1, h, hl) ? 2 : 0;
	}
	return !strcmp(host, lhost) ? 2 : 0;
}

const char *cf_arg(const struct cf_query *q, const char *opt, const char *longopt)
{
	int i;
	size_t ol = opt ? strlen(opt) : 0, ll = longopt ? strlen(longopt) : 0;

	for (i = 1; q->argv && i < q->argc; i++) {
		const char *a = q->argv[i];

		if (opt && !strcmp(a, opt))
			return i + 1 < q->argc ? q->argv[i + 1] : NULL;
		if (opt && ol == 2 && !strncmp(a, opt, 2) && a[2])
			return a + 2;
		if (longopt && !strcmp(a, longopt))
			return i + 1 < q->argc ? q->argv[i + 1] : NULL;
		if (longopt && !strncmp(a, longopt, ll) && a[ll] == '=')
			return a + ll + 1;
	}
	return NULL;
}

const char *cf_progname(const struct cf_query *q, char *out, size_t len)
{
	const char *s = q->argv && q->argc > 0 ? q->argv[0] : q->comm, *sl;
	char cut[CF_PATH];

	if (!s)
		s = "";
	/* A retitled process ("nginx: master process ...") keeps its name first. */
	snprintf(cut, sizeof cut, "%s", s);
	cut[strcspn(cut, ": ")] = '\0';
	sl = strrchr(cut, '/');
	snprintf(out, len, "%s", sl ? sl + 1 : cut);
	return out;
}

void cf_unread(struct cf_walk *w, const char *path, int err)
{
	if (!w->unread[0])
		snprintf(w->unread, sizeof w->unread, "cannot read %s (%s)", path, strerror(-err));
}

void cf_doubt(struct cf_walk *w, const char *what)
{
	if (!w->unread[0])
		snprintf(w->unread, sizeof w->unread, "%s", what);
}
