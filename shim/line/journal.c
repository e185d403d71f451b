/*
 * journal.c: the journald sink. One JSON line becomes one native journal
 * entry, sent as one datagram to /run/systemd/journal/socket (the protocol
 * of systemd's JOURNAL_NATIVE_PROTOCOL.md, without libsystemd):
 *
 *   MESSAGE            the line's msg, or the event and its scalar fields
 *   PRIORITY           4 for a warn line, 7 for a trace-only line (an
 *                      accept, connect or first_speaker without findings
 *                      or errno), 6 for the rest
 *   SYSLOG_IDENTIFIER  sockaudit (else journald names the wrapped daemon)
 *   SOCKAUDIT_FINDING  once per finding code (a repeated field)
 *   SOCKAUDIT_<KEY>    each scalar field (key upper-cased; null left out)
 *   SOCKAUDIT_JSON     the whole line, for jq
 *
 * The line is ours (json.c wrote it), so the scanner here only has to
 * read a flat object whose nested values it skips. Everything is built on
 * the caller's stack and sent with MSG_DONTWAIT | MSG_NOSIGNAL from an
 * unconnected socket: never blocks, never raises SIGPIPE, and a journald
 * that restarts is found again at the next line. An entry the journal
 * does not take (no socket, buffer full, too large) is dropped and
 * counted like every other lost line; no memfd fallback for oversized
 * entries (a line is at most 4096 bytes, far under the socket's limit).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "line/line.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
/* What goes before SOCKAUDIT_JSON: every scalar field again, MESSAGE and
 * the fixed fields. Past it, scalar fields are left out (the JSON keeps
 * them). */
#define ENTRY_HEAD_MAX (SA_LINE_MAX + 1024)
#define DESC_MAX 240

/* The socket, once it is known that a journal listens: a connect (then
 * undone with AF_UNSPEC: the entries go unconnected, so that a journald
 * that restarts is found again) fails with ENOENT or ECONNREFUSED where
 * none does, and the sink then falls back to stderr with a warning, as
 * the syslog sink does. System calls, not libc's connect (a cancellation
 * point). */
int sa_journal_open(void)
{
	static const struct sockaddr_un to = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
	static const struct sockaddr none = { .sa_family = AF_UNSPEC };
	int fd = SA_REAL(socket)(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	if (sa_syscall(SYS_connect, fd, &to, sizeof to) != 0) {
		err = errno;
		sa_sinkio_close(fd);
		return -err;
	}
	sa_syscall(SYS_connect, fd, &none, sizeof none);
	return sa_sinkio_move_high(fd);
}

/* ---- reading our own line ------------------------------------------------ */

enum jtype { J_STR, J_ARR, J_OBJ, J_LIT };

struct jfield {
	const char *key, *val;   /* key without quotes; val as written (a string with its quotes) */
	size_t klen, vlen;
	enum jtype type;
};

static const char *skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* p at the opening quote: the byte after the closing one, or NULL. */
static const char *skip_str(const char *p, const char *e)
{
	for (p++; p < e; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

static const char *skip_value(const char *p, const char *e)
{
	int depth = 0;

	if (p < e && *p == '"')
		return skip_str(p, e);
	for (; p < e; p++) {
		if (*p == '"') {
			p = skip_str(p, e);
			if (!p)
				return NULL;
			p--;
		} else if (*p == '[' || *p == '{') {
			depth++;
		} else if (*p == ']' || *p == '}') {
			if (depth == 0)
				return p;
			if (--depth == 0)
				return p + 1;
		} else if (*p == ',' && depth == 0) {
			return p;
		}
	}
	return depth == 0 ? p : NULL;
}

/* The next top-level field after *pp (at '{' or after a value): 1 with f
 * filled, 0 at the end or on anything unexpected. */
static int next_field(const char **pp, const char *e, struct jfield *f)
{
	const char *p = skip_ws(*pp, e), *q;

	if (p >= e || (*p != '{' && *p != ','))
		return 0;
	p = skip_ws(p + 1, e);
	if (p >= e || *p != '"' || !(q = skip_str(p, e)))
		return 0;
	f->key = p + 1;
	f->klen = (size_t)(q - p - 2);
	p = skip_ws(q, e);
	if (p >= e || *p != ':')
		return 0;
	p = skip_ws(p + 1, e);
	if (p >= e || !(q = skip_value(p, e)))
		return 0;
	f->val = p;
	f->vlen = (size_t)(q - p);
	f->type = *p == '"' ? J_STR : *p == '[' ? J_ARR : *p == '{' ? J_OBJ : J_LIT;
	while (f->vlen && (p[f->vlen - 1] == ' ' || p[f->vlen - 1] == '\n'))
		f->vlen--;
	*pp = q;
	return 1;
}

static int key_is(const struct jfield *f, const char *k)
{
	size_t n = strlen(k);

	return f->klen == n && memcmp(f->key, k, n) == 0;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int read_u4(const char *p, const char *e, unsigned *cp)
{
	int i, h;

	if (e - p < 4)
		return -1;
	for (*cp = 0, i = 0; i < 4; i++) {
		if ((h = hex_value(p[i])) < 0)
			return -1;
		*cp = *cp << 4 | (unsigned)h;
	}
	return 0;
}

/* A JSON string (s..e without its quotes) decoded into o (at most cap
 * bytes: a decoded string is never longer than its escaped form).
 * Returns the length, or -1. */
static long decode_str(const char *s, const char *e, char *o, size_t cap)
{
	size_t n = 0;
	unsigned cp, lo;

	if ((size_t)(e - s) > cap)
		return -1;
	while (s < e) {
		if (*s != '\\') {
			o[n++] = *s++;
			continue;
		}
		if (++s >= e)
			return -1;
		switch (*s++) {
		case 'n': o[n++] = '\n'; break;
		case 't': o[n++] = '\t'; break;
		case 'r': o[n++] = '\r'; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case 'u':
			if (read_u4(s, e, &cp))
				return -1;
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && e - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
			    !read_u4(s + 2, e, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			n += put_utf8(o + n, cp);   /* a \u escape with four hex digits is 6 bytes, its UTF-8 at most 4 */
			break;
		default: o[n++] = s[-1]; break;   /* \" \\ \/ */
		}
	}
	return (long)n;
}

/* ---- the entry ----------------------------------------------------------- */

struct entry {
	char *p, *end;
};

static int put(struct entry *en, const void *s, size_t n)
{
	if ((size_t)(en->end - en->p) < n)
		return -1;
	memcpy(en->p, s, n);
	en->p += n;
	return 0;
}

/* KEY=value\n, or the binary form when value holds a newline (or a NUL):
 * KEY\n, its length as 64-bit little-endian, the bytes, \n. */
static int put_field(struct entry *en, const char *key, size_t klen, const char *v, size_t n)
{
	unsigned char le[8];
	int i;

	if (!memchr(v, '\n', n) && !memchr(v, '\0', n)) {
		if ((size_t)(en->end - en->p) < klen + n + 2)
			return -1;
		put(en, key, klen);
		put(en, "=", 1);
		put(en, v, n);
		return put(en, "\n", 1);
	}
	if ((size_t)(en->end - en->p) < klen + n + 10)
		return -1;
	for (i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)n >> (8 * i));
	put(en, key, klen);
	put(en, "\n", 1);
	put(en, le, 8);
	put(en, v, n);
	return put(en, "\n", 1);
}

/* SOCKAUDIT_<KEY>: A-Z, 0-9 and _ (journald's rule), at most 64 bytes. */
static size_t field_name(const struct jfield *f, char *out)
{
	size_t i, n = sizeof "SOCKAUDIT_" - 1;

	if (f->klen == 0 || n + f->klen > 64)
		return 0;
	memcpy(out, "SOCKAUDIT_", n);
	for (i = 0; i < f->klen; i++) {
		char c = f->key[i];
		out[n++] = c >= 'a' && c <= 'z' ? (char)(c - 32) : (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
	}
	return n;
}

/* Fields that are the entry's own (MESSAGE) or say nothing per line. */
static int skipped_key(const struct jfield *f)
{
	return key_is(f, "msg") || key_is(f, "findings");
}

/* Not in the event's MESSAGE: the fields every line has. */
static int common_key(const struct jfield *f)
{
	return key_is(f, "ts") || key_is(f, "schema") || key_is(f, "pid") || key_is(f, "tid") ||
	       key_is(f, "comm") || key_is(f, "severity") || key_is(f, "event");
}

struct scan {
	int warn, err, traceish, have_msg;
	const char *msg, *event;     /* escaped, without quotes */
	size_t msglen, eventlen;
};

static void first_pass(const char *line, const char *e, struct scan *s)
{
	const char *p = line;
	struct jfield f;

	memset(s, 0, sizeof *s);
	while (next_field(&p, e, &f)) {
		if (f.type == J_STR && key_is(&f, "severity"))
			s->warn = f.vlen == 6 && memcmp(f.val, "\"warn\"", 6) == 0;
		else if (key_is(&f, "errno") && f.type == J_STR)
			s->err = 1;
		else if (f.type == J_STR && key_is(&f, "msg")) {
			s->have_msg = 1;
			s->msg = f.val + 1;
			s->msglen = f.vlen - 2;
		} else if (f.type == J_STR && key_is(&f, "event")) {
			s->event = f.val + 1;
			s->eventlen = f.vlen - 2;
		}
	}
	s->traceish = s->event && ((s->eventlen == 6 && !memcmp(s->event, "accept", 6)) ||
				   (s->eventlen == 7 && !memcmp(s->event, "connect", 7)) ||
				   (s->eventlen == 13 && !memcmp(s->event, "first_speaker", 13)));
}

/* The description of a line without msg: "EVENT k=v k=v", cut at a field
 * that would pass DESC_MAX. */
static size_t describe_event(const char *line, const char *e, const struct scan *s, char *d)
{
	const char *p = line;
	struct jfield f;
	size_t n = 0;
	long vn;

	if (s->event && s->eventlen < DESC_MAX && (vn = decode_str(s->event, s->event + s->eventlen, d, DESC_MAX)) > 0)
		n = (size_t)vn;
	while (next_field(&p, e, &f)) {
		char v[DESC_MAX];
		size_t need;

		if (common_key(&f) || f.type == J_ARR || f.type == J_OBJ || (f.type == J_LIT && f.vlen == 4 && !memcmp(f.val, "null", 4)))
			continue;
		if (f.type == J_STR) {
			vn = f.vlen - 2 < sizeof v ? decode_str(f.val + 1, f.val + f.vlen - 1, v, sizeof v) : -1;
			if (vn < 0 || memchr(v, '\n', (size_t)vn))
				continue;
		} else {
			if (f.vlen > sizeof v)
				continue;
			memcpy(v, f.val, f.vlen);
			vn = (long)f.vlen;
		}
		need = 1 + f.klen + 1 + (size_t)vn;
		if (n + need > DESC_MAX)
			break;
		d[n++] = ' ';
		memcpy(d + n, f.key, f.klen);
		n += f.klen;
		d[n++] = '=';
		memcpy(d + n, v, (size_t)vn);
		n += (size_t)vn;
	}
	return n;
}

long sa_journal_entry(const char *line, size_t len, char *buf, size_t cap)
{
	const char *e = line + len, *p = line;
	struct entry en = { buf, buf + cap };
	struct jfield f;
	struct scan s;
	char name[72], desc[DESC_MAX];
	size_t nl, reserve;
	long vn;
	int prio;

	while (e > line && (e[-1] == '\n'))
		e--;
	first_pass(line, e, &s);
	prio = s.warn ? 4 : s.traceish && !s.err ? 7 : 6;
	/* Room kept for what every entry has: MESSAGE, PRIORITY, the
	 * identifier and the SOCKAUDIT_JSON key. */
	reserve = (s.have_msg ? s.msglen : DESC_MAX) + 128;
	if (reserve > cap)
		return -1;
	en.end = buf + cap - reserve;
	while (next_field(&p, e, &f)) {
		if (key_is(&f, "findings") && f.type == J_ARR) {
			const char *a = f.val + 1, *ae = f.val + f.vlen - 1, *q;

			while ((a = skip_ws(a, ae)) < ae) {
				if (*a == '"' && (q = skip_str(a, ae)) != NULL) {
					char code[64];

					vn = decode_str(a + 1, q - 1, code, sizeof code);
					if (vn > 0)
						(void)put_field(&en, "SOCKAUDIT_FINDING", 17, code, (size_t)vn);
					a = q;
				} else if (!(a = skip_value(a, ae))) {
					break;
				}
				a = skip_ws(a, ae);
				if (a < ae && *a == ',')
					a++;
			}
			continue;
		}
		if (skipped_key(&f) || f.type == J_ARR || f.type == J_OBJ ||
		    (f.type == J_LIT && f.vlen == 4 && !memcmp(f.val, "null", 4)) || !(nl = field_name(&f, name)))
			continue;
		if (f.type == J_STR) {
			char *mark = en.p;
			size_t room = (size_t)(en.end - en.p);

			/* Decoded in place after where its key goes, then moved. */
			if (room < nl + 12 + f.vlen)
				continue;
			vn = decode_str(f.val + 1, f.val + f.vlen - 1, mark + nl + 10, room - nl - 10);
			if (vn < 0)
				continue;
			if (memchr(mark + nl + 10, '\n', (size_t)vn) || memchr(mark + nl + 10, '\0', (size_t)vn)) {
				/* The binary form: KEY\n, the length, the bytes, \n. */
				int i;

				memmove(mark + nl + 9, mark + nl + 10, (size_t)vn);
				memcpy(mark, name, nl);
				mark[nl] = '\n';
				for (i = 0; i < 8; i++)
					mark[nl + 1 + i] = (char)((uint64_t)vn >> (8 * i));
				mark[nl + 9 + vn] = '\n';
				en.p = mark + nl + 10 + vn;
			} else {
				memmove(mark + nl + 1, mark + nl + 10, (size_t)vn);
				memcpy(mark, name, nl);
				mark[nl] = '=';
				mark[nl + 1 + vn] = '\n';
				en.p = mark + nl + 2 + vn;
			}
		} else {
			(void)put_field(&en, name, nl, f.val, f.vlen);
		}
	}
	en.end = buf + cap;
	{
		char pr[12] = "PRIORITY=0\n";

		pr[9] = (char)('0' + prio);
		if (put(&en, pr, 11) || put(&en, "SYSLOG_IDENTIFIER=sockaudit\n", 28))
			return -1;
	}
	if (s.have_msg) {
		char *mark = en.p;

		if ((size_t)(en.end - en.p) < 8 + s.msglen + 1)
			return -1;
		vn = decode_str(s.msg, s.msg + s.msglen, mark + 8, s.msglen);
		if (vn < 0)
			return -1;
		if (memchr(mark + 8, '\n', (size_t)vn))   /* our sentences never hold one; keep it readable */
			for (nl = 0; nl < (size_t)vn; nl++)
				if (mark[8 + nl] == '\n')
					mark[8 + nl] = ' ';
		memcpy(mark, "MESSAGE=", 8);
		mark[8 + vn] = '\n';
		en.p = mark + 9 + vn;
	} else {
		size_t dn = describe_event(line, e, &s, desc);

		if (put_field(&en, "MESSAGE", 7, desc, dn))
			return -1;
	}
	if (put(&en, "SOCKAUDIT_JSON=", 15))
		return -1;
	return (long)(en.p - buf);
}

int sa_journal_write(int fd, const char *line, size_t len)
{
	static const struct sockaddr_un to = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
	char head[ENTRY_HEAD_MAX];
	struct iovec iov[2];
	struct msghdr m = { .msg_name = (void *)&to, .msg_namelen = sizeof to, .msg_iov = iov, .msg_iovlen = 2 };
	long n = sa_journal_entry(line, len, head, sizeof head);
	int err;

	if (n < 0 || len == 0 || line[len - 1] != '\n') {
		sa_sinkio_drop("the line cannot be made a journal entry");
		return 0;
	}
	/* SOCKAUDIT_JSON's value is the line itself, with its own newline. */
	iov[0].iov_base = head;
	iov[0].iov_len = (size_t)n;
	iov[1].iov_base = (void *)line;
	iov[1].iov_len = len;
	if (sa_syscall(SYS_sendmsg, fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) == (long)n + (long)len)
		return 1;
	err = errno;
	sa_sinkio_drop(err == ENOENT || err == ECONNREFUSED || err == ENOTDIR
		       ? "the journal cannot be reached (no " JOURNAL_SOCKET ")"
		       : err == EMSGSIZE ? "the entry is too large for the journal"
		       : err == EAGAIN || err == ENOBUFS ? "the journal is not taking messages (its socket is full)"
		       : "the journal refused the entry");
	return 0;
}
