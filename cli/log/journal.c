/*
 * log/journal.c: a line of journald's JSON export read as the line the
 * library wrote.
 *
 * `journalctl -o json` writes one object per entry; the journal sink puts
 * our whole line in its SOCKAUDIT_JSON field (shim/line/journal.c), and a
 * line that reached the journal another way (stderr of a unit, systemd-cat)
 * is its MESSAGE (taken only when it starts as our lines do). Every verb calls log_journal_inner() on each line before
 * it reads it, so all of them read an export the same way. An entry of
 * another program (`journalctl -o json` without `-t sockaudit`) holds no
 * line of ours: it becomes an empty line, passed over as a blank one is,
 * not an event without a name. A line of our own is told apart by its
 * first key ("ts": json.c writes it first) without a parse, so plain logs
 * cost one comparison a line.
 */
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

/* Room for n bytes and a NUL in in->buf. */
static void room(struct log_inner *in, size_t n)
{
	while (in->cap <= n)
		in->buf = log_grow(in->buf, &in->cap, in->cap, 1);
}

/* A field's text: a string, or the array of byte values journalctl writes
 * for a field that is not valid UTF-8 or holds control characters. */
static int field_text(const json_t *v, struct log_inner *in, size_t *len)
{
	size_t i, n;
	const json_t *b;

	if (json_is_string(v)) {
		n = json_string_length(v);
		room(in, n);
		memcpy(in->buf, json_string_value(v), n);
		*len = n;
		return 1;
	}
	if (!json_is_array(v) || !(n = json_array_size(v)))
		return 0;
	room(in, n);
	LOG_ARRAY_EACH(v, i, b) {
		json_int_t c = json_integer_value(b);

		if (!json_is_integer(b) || c < 0 || c > 255)
			return 0;
		in->buf[i] = (char)c;
	}
	*len = n;
	return 1;
}

int log_journal_inner(struct log_inner *in, const char **line, size_t *len)
{
	static const char ours[] = "{\"ts\":";
	const char *p = *line;
	size_t n = *len, got = 0;
	json_t *o, *v;
	int ok = 0;

	if (n >= sizeof ours - 1 && memcmp(p, ours, sizeof ours - 1) == 0)
		return 0;
	if (!memmem(p, n, "\"SOCKAUDIT_JSON\"", 16) && !memmem(p, n, "\"MESSAGE\"", 9) &&
	    !memmem(p, n, "\"__CURSOR\"", 10))
		return 0;
	o = json_loadb(p, n, 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return 0;
	}
	v = json_object_get(o, "SOCKAUDIT_JSON");
	if (v)
		ok = field_text(v, in, &got);
	else if ((v = json_object_get(o, "MESSAGE")) != NULL)
		ok = field_text(v, in, &got) && got >= sizeof ours - 1 &&
		     memcmp(in->buf, ours, sizeof ours - 1) == 0;
	/* journalctl writes __CURSOR in every entry: one without our line is
	 * another program's. */
	if (!ok && json_object_get(o, "__CURSOR")) {
		ok = 1;
		got = 0;
		room(in, 0);
	}
	json_decref(o);
	if (!ok)
		return 0;
	in->buf[got] = '\0';
	*line = in->buf;
	*len = got;
	return 1;
}

void log_inner_free(struct log_inner *in)
{
	free(in->buf);
	in->buf = NULL;
	in->cap = 0;
}
