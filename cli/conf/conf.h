/*
 * conf/conf.h: where a listener's backlog came from, read from the
 * configuration the program was started with, and the change in that
 * program's own words.
 *
 * cf_backlog() is the one entry: given the process's argv (its init line),
 * its program name and the listener's address, it picks the reader of the
 * program's family (nginx.c, haproxy.c, redis.c, apache.c, lighttpd.c,
 * memcached.c, postgres.c), which reads the files the program reads (the
 * file named by its command line, else the program's default path),
 * follows their includes, and says which FILE:LINE and directive set the
 * value, or that it is the program's default and where the directive goes.
 * text.c holds the common file reading, word splitting, include globbing
 * and address matching. Only the report calls this; nothing here calls
 * the report or the log reader, and it only ever reads files: a file it
 * cannot read, or a text it is not sure of, is said in the answer, never
 * guessed.
 */
#ifndef SA_CLI_CONF_H
#define SA_CLI_CONF_H

#include <stddef.h>

#define CF_PATH 512
#define CF_TEXT 400

struct cf_query {
	const char *comm;           /* the process's comm, or NULL */
	const char *const *argv;    /* its argv (the init line's), NULL when unknown */
	int argc;
	const char *local;          /* the listener: "127.0.0.1:8080", "[::]:80", a path */
	long requested;             /* the backlog listen() asked for, -1 unknown */
	long want;                  /* the backlog the fix sets; 0: the fix says N */
};

enum cf_origin {
	CF_UNKNOWN = 0,             /* not a program whose configuration we read */
	CF_SET,                     /* a directive in a file set it */
	CF_DEFAULT,                 /* nothing sets it: the program's default */
	CF_DERIVED,                 /* the program derives it from another setting */
	CF_ARGV,                    /* set on the command line */
	CF_UNREADABLE               /* the configuration could not be read */
};

struct cf_answer {
	int origin;
	const char *program;        /* "nginx" ...; NULL with CF_UNKNOWN */
	char file[CF_PATH];         /* where it was set, or where the fix goes */
	long line;                  /* 0: the file as a whole (or no file) */
	char directive[CF_TEXT];    /* the line as written there, "" when none */
	long value;                 /* the backlog the configuration asks for, -1 unknown */
	char fix[CF_TEXT];          /* the line to write, in the program's syntax */
	char where[CF_TEXT];        /* where the fix goes, in a few words */
	char note[CF_TEXT];         /* the default or derivation, or why it could not be read */
};

/* The answer for Q into A; returns A->origin. */
int cf_backlog(const struct cf_query *q, struct cf_answer *a);
/* "nginx", "redis" ... for a program cf_backlog() reads, or NULL. */
const char *cf_family(const char *argv0, const char *comm);
/* "set", "default" ...: the origin as one word for JSON. */
const char *cf_origin_name(int origin);

/* ---- text.c: shared by the readers ---- */

#define CF_FILES_MAX 256        /* files one configuration may include */
#define CF_DEPTH_MAX 16
#define CF_WORDS_MAX 32

struct cf_file {
	char path[CF_PATH];
	char *text;                 /* NUL-terminated, NULL when unread */
	size_t len;
};

/* The whole file (at most 4 MiB) into F; 0 or -errno. */
int cf_file_read(struct cf_file *f, const char *path);
void cf_file_free(struct cf_file *f);

/* One line's words: quotes ("..." and '...') kept together without the
 * quotes, # to the end of the line a comment (when HASH is set), a
 * backslash before the newline joins the next line (apache, haproxy). */
struct cf_words {
	int n;
	char w[CF_WORDS_MAX][256];
	long line;                  /* the line it starts on */
	char raw[CF_TEXT];          /* the line as written, trimmed */
};
/* Reads the next logical line of TEXT at *POS (LINE counts); 0 at the end. */
int cf_next_line(const char *text, size_t *pos, long *line, int cont, struct cf_words *out);

/* nginx-style tokens: words, quoted strings, and ; { } as their own tokens. */
struct cf_tok {
	char s[256];
	long line;
	int special;                /* ';', '{', '}', or 0 for a word */
	int quoted;
};
int cf_next_tok(const char *text, size_t *pos, long *line, struct cf_tok *t);

/* PATTERN (relative to BASE when not absolute) expanded with glob(3),
 * sorted; calls FN for each path. Returns the number of matches, or
 * -errno when PATTERN has no wildcard and names no readable file. */
int cf_glob(const char *base, const char *pattern, int (*fn)(void *ctx, const char *path), void *ctx);
/* DIR of PATH into out. */
void cf_dirname(const char *path, char *out, size_t len);
/* BASE/REL, or REL when absolute. */
void cf_join(const char *base, const char *rel, char *out, size_t len);

/* Whether a configuration's address (HOST may be "", "*", a name; PORT
 * as a string) names the listener LOCAL ("127.0.0.1:8080", "[::]:80"):
 * 2 for its own address, 1 for a wildcard that covers it, 0 not. */
int cf_addr_match(const char *host, const char *port, const char *local);
/* The port of LOCAL as a string into out; 0 when it has none. */
int cf_local_port(const char *local, char *out, size_t len);
/* q->want as text, or "N" when it is 0 (a static buffer: one at a time). */
const char *cf_n(const struct cf_query *q);
/* printf into a fixed buffer, cut to its size. */
void cf_put(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends (printf) to a fixed buffer, truncating. */
void cf_say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The argument after OPT in argv ("-c FILE", "-cFILE", "--opt=FILE"), or NULL. */
const char *cf_arg(const struct cf_query *q, const char *opt, const char *longopt);
/* The basename of argv[0], else comm. */
const char *cf_progname(const struct cf_query *q, char *out, size_t len);

/* A walk through a configuration and its includes. */
struct cf_walk {
	int files, depth;
	char unread[CF_TEXT];       /* the first file that could not be read, and why */
};
void cf_unread(struct cf_walk *w, const char *path, int err);
/* A text the walk could not follow, said as WHAT (the first one kept). */
void cf_doubt(struct cf_walk *w, const char *what);

/* The readers (one file each). */
int cf_nginx(const struct cf_query *q, struct cf_answer *a);
int cf_haproxy(const struct cf_query *q, struct cf_answer *a);
int cf_redis(const struct cf_query *q, struct cf_answer *a);
int cf_apache(const struct cf_query *q, struct cf_answer *a);
int cf_lighttpd(const struct cf_query *q, struct cf_answer *a);
int cf_memcached(const struct cf_query *q, struct cf_answer *a);
int cf_postgres(const struct cf_query *q, struct cf_answer *a);

#endif
