/*
 * report/fix.c: the fix of a "Fix first" item about a listener's backlog,
 * in the words of the program that opened it. The listener comes from the
 * item (a cause's listener; the first listener a finding names); its
 * process's init line gives the argv (cli/conf/ reads the configuration
 * it names: the report never guesses a file), its namespace and boot.
 * A clamped backlog is fixed by net.core.somaxconn in the listener's own
 * namespace (ip netns exec NAME when /run/netns names it, nsenter -n -t
 * PID otherwise); a queue that filled by a larger backlog in the
 * program's configuration, and the sysctl when that passes somaxconn.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "report/fix.h"

#define SYSCTL_FILE "/etc/sysctl.d/60-sockaudit.conf"

static int has_code(const json_t *o, const char *code)
{
	const json_t *f = o ? json_object_get(o, "findings") : NULL, *v;
	size_t i;

	json_array_foreach(f, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), code))
			return 1;
	return 0;
}

/* The listener an item is about, and the backlog it needs (-1 unknown). */
static const struct rp_listener *item_listener(const struct rp_state *st, size_t item, long *need)
{
	const struct rp_item *it = &st->items[item];
	const char *code;
	size_t i;
	long v;

	*need = -1;
	if (it->is_cause) {
		const struct rp_cause *cz = &st->join.causes[it->idx];

		if (cz->lst < 0 || (size_t)cz->lst >= st->nlsts)
			return NULL;
		*need = cz->need > 0 ? cz->need : -1;
		return &st->lsts[cz->lst];
	}
	code = st->finds[it->idx].code;
	for (i = 0; i < st->nlsts; i++) {
		const struct rp_listener *l = &st->lsts[i];
		int hit;

		if (!strcmp(code, "backlog_clamped"))
			hit = l->have_backlog_req && l->have_backlog_eff && l->backlog_effective < l->backlog_requested;
		else if (!strcmp(code, "accept_queue_full"))
			hit = l->accept_queue_full > 0 || (l->stats && log_long(l->stats, "queue_full_seen", &v) && v > 0);
		else if (!strcmp(code, "listen_overflows"))
			hit = l->overflow_lines > 0 || has_code(l->stats, "listen_overflows");
		else if (!strcmp(code, "defer_bypass_risk"))   /* its remedy is a larger backlog too */
			hit = l->have_defer_eff && l->defer_eff_s > 0;
		else
			return NULL;
		if (!hit)
			continue;
		if (l->stats && log_long(l->stats, "backlog_needed", &v) && v > 0)
			*need = v;
		return l;
	}
	return NULL;
}

/* This host's boot id and the report's own namespace, to compare with the
 * listener's init line. */
static void own_place(char boot[40], unsigned long long *netns)
{
	char buf[64];
	ssize_t n = readlink("/proc/self/ns/net", buf, sizeof buf - 1);
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	*netns = 0;
	if (n > 0) {
		buf[n] = '\0';
		if (strchr(buf, '['))
			*netns = strtoull(strchr(buf, '[') + 1, NULL, 10);
	}
	boot[0] = '\0';
	if (fd >= 0) {
		n = read(fd, boot, 39);
		boot[n > 0 ? n : 0] = '\0';
		boot[strcspn(boot, "\n")] = '\0';
		close(fd);
	}
}

/* The name /run/netns gives the namespace INODE (ip netns add), or NULL. */
static char *netns_name(unsigned long long inode)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;
	char *name = NULL;

	while (d && !name && (e = readdir(d))) {
		char p[512];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "/run/netns/%s", e->d_name);
		if (stat(p, &sb) == 0 && (unsigned long long)sb.st_ino == inode)
			name = log_strdup(e->d_name);
	}
	if (d)
		closedir(d);
	return name;
}

/* Whether P's init line names this host's boot (its files are here). */
static int same_boot(const struct rp_proc *p)
{
	const char *boot = p && p->init ? log_str(p->init, "boot_id") : NULL;
	char own[40];
	unsigned long long ns;

	own_place(own, &ns);
	return boot && !strcmp(boot, own);
}

static void cant_read(struct cf_answer *a, const char *program, const char *why)
{
	memset(a, 0, sizeof *a);
	a->origin = CF_UNREADABLE;
	a->program = program;
	a->value = -1;
	snprintf(a->note, sizeof a->note, "%s", why);
}

static long own_somaxconn(void)
{
	FILE *f = fopen("/proc/sys/net/core/somaxconn", "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The sysctl -w line in the listener's namespace, and how to keep it. */
static void sysctl_lines(const struct rp_proc *p, long pid, long n, struct rp_fix *fx)
{
	const json_t *init = p ? p->init : NULL;
	const char *boot = init ? log_str(init, "boot_id") : NULL, *node = init ? log_str(init, "nodename") : NULL;
	json_t *ns = init ? json_object_get(init, "netns") : NULL;
	unsigned long long their = json_is_integer(ns) ? (unsigned long long)json_integer_value(ns) : 0, ours;
	char ownboot[40], *name = NULL, how[160];

	own_place(ownboot, &ours);
	if (!their) {
		fx->sysctl = rp_xprintf("sysctl -w net.core.somaxconn=%ld (in the listener's network namespace: "
					"its init line does not say which)", n);
		fx->keep = rp_xprintf("keep it: echo net.core.somaxconn=%ld > %s (read at boot by the host's "
				      "namespace; a namespace of its own needs it where it is made)", n, SYSCTL_FILE);
		return;
	} else if (boot && strcmp(boot, ownboot)) {
		fx->sysctl = rp_xprintf("on %s, in the namespace of pid %ld: nsenter -n -t %ld sysctl -w "
					"net.core.somaxconn=%ld", node ? node : "the host it ran on", pid, pid, n);
	} else if (their == ours) {
		fx->sysctl = rp_xprintf("sysctl -w net.core.somaxconn=%ld", n);
		fx->keep = rp_xprintf("keep it: echo net.core.somaxconn=%ld > %s", n, SYSCTL_FILE);
		return;
	} else if ((name = netns_name(their))) {
		fx->sysctl = rp_xprintf("ip netns exec %s sysctl -w net.core.somaxconn=%ld", name, n);
	} else {
		fx->sysctl = rp_xprintf("nsenter -n -t %ld sysctl -w net.core.somaxconn=%ld (pid %ld's namespace, "
					"not the report's)", pid, n, pid);
	}
	/* systemd-sysctl applies /etc/sysctl.d at boot to the host's namespace
	 * only; a namespace made later starts with the kernel's default. */
	if (name)
		snprintf(how, sizeof how, "ip netns exec %s", name);
	else
		snprintf(how, sizeof how, "nsenter -n -t PID");
	fx->keep = rp_xprintf("keep it: echo net.core.somaxconn=%ld > %s, applied where the namespace is made "
			      "(%s sysctl -p %s; at boot the file sets only the host's namespace, now %ld)", n,
			      SYSCTL_FILE, how, SYSCTL_FILE, own_somaxconn());
	free(name);
}

static char *why_words(const struct rp_fix *fx, const char *comm)
{
	const struct cf_answer *a = &fx->conf;
	char *s, *at = NULL, *tail;

	if (a->line > 0)
		at = rp_xprintf(" at %s:%ld (%s)", a->file, a->line, a->directive);
	switch (a->origin) {
	case CF_SET:
		s = rp_xprintf("%s asked for %ld%s", a->program, fx->requested, at ? at : "");
		break;
	case CF_DEFAULT:
		s = rp_xprintf("%s asked for %ld%s: %s", a->program, fx->requested, at ? at : "", a->note);
		break;
	case CF_DERIVED:
		s = rp_xprintf("%s asked for %ld%s: %s", a->program, fx->requested,
			       at ? at : "", a->note);
		break;
	case CF_ARGV:
		s = rp_xprintf("%s asked for %ld, set on its command line (%s)", a->program, fx->requested, a->directive);
		break;
	case CF_UNREADABLE:
		s = rp_xprintf("%s asked for %ld; the report could not read its configuration: %s", a->program,
			       fx->requested, a->note);
		break;
	default:
		s = rp_xprintf("%s (pid %ld) called listen(fd, %ld); the report knows no configuration of %s, "
			       "so none is named", comm ? comm : "the program", fx->pid, fx->requested,
			       comm ? comm : "it");
	}
	free(at);
	/* The file says another number than the process asked for: it changed
	 * since, or it is not the one the process read. */
	if ((a->origin == CF_SET || a->origin == CF_ARGV || a->origin == CF_DEFAULT) && a->value >= 0 &&
	    fx->requested >= 0 && a->value != fx->requested) {
		tail = rp_xprintf("%s (it says %ld now: changed since the process started?)", s, a->value);
		free(s);
		s = tail;
	}
	if (fx->effective >= 0 && fx->requested > fx->effective)
		tail = rp_xprintf("%s; net.core.somaxconn, %ld in its namespace, cut it to %ld", s,
				  fx->somaxconn >= 0 ? fx->somaxconn : fx->effective, fx->effective);
	else if (fx->want > fx->requested)
		tail = rp_xprintf("%s; its queue filled: about %ld are needed", s, fx->want);
	else
		return s;
	free(s);
	return tail;
}

int rp_fix_make(const struct rp_state *st, size_t item, struct rp_fix *fx)
{
	const struct rp_listener *l;
	const struct rp_proc *p;
	struct cf_query q;
	const char *argv[64];
	const json_t *av, *v;
	size_t i;
	long need, sysctl_n = -1;

	memset(fx, 0, sizeof *fx);
	if (item >= st->nitems || !(l = item_listener(st, item, &need)) || !l->have_backlog_req)
		return 0;
	fx->l = l;
	fx->pid = l->pid;
	fx->requested = l->backlog_requested;
	fx->effective = l->have_backlog_eff ? l->backlog_effective : -1;
	fx->somaxconn = l->have_somaxconn ? l->somaxconn : -1;
	fx->want = need > fx->requested ? need : fx->requested;
	p = rp_proc_find(st, l->pid);
	memset(&q, 0, sizeof q);
	q.comm = l->comm;
	q.local = l->local;
	q.requested = fx->requested;
	q.want = fx->want;
	av = p && p->init ? json_object_get(p->init, "argv") : NULL;
	json_array_foreach(av, i, v)
		if (json_is_string(v) && q.argc < 64)
			argv[q.argc++] = json_string_value(v);
	q.argv = q.argc ? argv : NULL;
	if (!cf_family(q.argc ? argv[0] : NULL, l->comm))
		cf_backlog(&q, &fx->conf);   /* none of ours: CF_UNKNOWN, nothing read */
	else if (!q.argv)
		cant_read(&fx->conf, cf_family(NULL, l->comm), "its init line carries no argv (a library older than "
			  "the report), so the files it was started with are unknown");
	else if (!same_boot(p))
		cant_read(&fx->conf, cf_family(argv[0], l->comm), "it ran on another host or boot than the report: "
			  "its files are there, not here");
	else
		cf_backlog(&q, &fx->conf);
	fx->why = why_words(fx, l->comm);
	/* A queue that filled needs a larger backlog from the program; one
	 * that somaxconn cut, or a larger one that passes it, the sysctl. */
	if (fx->want > fx->requested && fx->conf.fix[0] && fx->conf.origin != CF_UNREADABLE)
		fx->config = rp_xprintf("%s  (%s)", fx->conf.fix, fx->conf.where);
	else if (fx->want > fx->requested && fx->conf.origin == CF_UNKNOWN)
		fx->config = rp_xprintf("listen(fd, %ld) where %s sets its backlog (its code or its arguments: it "
					"called listen(fd, %ld))", fx->want, l->comm ? l->comm : "the program", fx->requested);
	if (fx->effective >= 0 && fx->requested > fx->effective)
		sysctl_n = fx->want;
	else if (fx->somaxconn >= 0 && fx->want > fx->somaxconn)
		sysctl_n = fx->want;
	if (sysctl_n > 0)
		sysctl_lines(p, l->pid, sysctl_n, fx);
	/* Where the directive goes, when the fix is not in the file: the
	 * program's own line with N, for a later change. */
	if (!fx->config && fx->conf.fix[0] && fx->conf.origin != CF_UNREADABLE && fx->conf.origin != CF_UNKNOWN) {
		struct cf_answer n;

		q.want = 0;
		if (cf_backlog(&q, &n) == fx->conf.origin && n.fix[0])
			fx->set_in = rp_xprintf("its own setting: %s  (%s)", n.fix, n.where);
	}
	if (fx->config)
		fx->lines[fx->nlines++] = rp_xprintf("Fix: %s", fx->config);
	if (fx->sysctl) {
		char *line = rp_xprintf("%s %s", fx->nlines ? "and:" : "Fix:", fx->sysctl);

		fx->lines[fx->nlines++] = line;
	}
	if (fx->keep)
		fx->lines[fx->nlines++] = rp_xprintf("%s", fx->keep);
	if (!fx->nlines)
		fx->lines[fx->nlines++] = rp_xprintf("Fix: a larger backlog than %ld, where %s sets it%s", fx->requested,
						     fx->conf.program ? fx->conf.program : "the program",
						     fx->set_in ? " (below)" : "");
	fx->nact = fx->nlines;
	fx->lines[fx->nlines++] = rp_xprintf("Why: %s", fx->why);
	if (fx->set_in && fx->nlines < RP_FIX_LINES)
		fx->lines[fx->nlines++] = rp_xprintf("%s", fx->set_in);
	return 1;
}

void rp_fix_free(struct rp_fix *fx)
{
	int i;

	free(fx->config);
	free(fx->sysctl);
	free(fx->keep);
	free(fx->why);
	free(fx->set_in);
	for (i = 0; i < fx->nlines; i++)
		free(fx->lines[i]);
	memset(fx, 0, sizeof *fx);
}

void rp_fix_text(const struct rp_state *st, size_t item, FILE *out, const char *indent)
{
	struct rp_fix fx;
	int i;

	if (!rp_fix_make(st, item, &fx))
		return;
	for (i = 0; i < fx.nlines; i++) {
		/* The action's own lines under its "Fix:", then why and the setting. */
		fprintf(out, "%s%s%s", indent, i == 0 ? tp_S.bold : "", i > 0 && i < fx.nact ? "     " : "");
		tp_safe(out, fx.lines[i], 0);
		fprintf(out, "%s\n", i == 0 ? tp_S.off : "");
	}
	rp_fix_free(&fx);
}

void rp_fix_html(const struct rp_state *st, size_t item, FILE *out)
{
	struct rp_fix fx;
	int i;

	if (!rp_fix_make(st, item, &fx))
		return;
	fputs("<div class=fix>", out);
	for (i = 0; i < fx.nlines; i++) {
		fputs(i == 0 ? "<b>" : "<br>", out);
		h_esc(out, fx.lines[i]);
		if (i == 0)
			fputs("</b>", out);
	}
	fputs("</div>", out);
	rp_fix_free(&fx);
}

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

json_t *rp_fix_json(const struct rp_state *st, size_t item)
{
	struct rp_fix fx;
	json_t *o, *lines;
	int i;

	if (!rp_fix_make(st, item, &fx))
		return json_null();
	o = json_object();
	lines = json_array();
	for (i = 0; i < fx.nlines; i++)
		json_array_append_new(lines, json_string(fx.lines[i]));
	json_object_set_new(o, "lines", lines);
	json_object_set_new(o, "pid", json_integer(fx.pid));
	json_object_set_new(o, "listener", str_or_null(fx.l->local));
	json_object_set_new(o, "program", str_or_null(fx.conf.program ? fx.conf.program : fx.l->comm));
	json_object_set_new(o, "origin", json_string(cf_origin_name(fx.conf.origin)));
	json_object_set_new(o, "file", str_or_null(fx.conf.file));
	json_object_set_new(o, "line", fx.conf.line > 0 ? json_integer(fx.conf.line) : json_null());
	json_object_set_new(o, "directive", str_or_null(fx.conf.directive));
	json_object_set_new(o, "note", str_or_null(fx.conf.note));
	json_object_set_new(o, "config_fix", fx.config ? json_string(fx.conf.fix) : json_null());
	json_object_set_new(o, "config_where", fx.config ? str_or_null(fx.conf.where) : json_null());
	json_object_set_new(o, "setting", str_or_null(fx.set_in));
	json_object_set_new(o, "sysctl", str_or_null(fx.sysctl));
	json_object_set_new(o, "sysctl_keep", str_or_null(fx.keep));
	json_object_set_new(o, "backlog_requested", json_integer(fx.requested));
	json_object_set_new(o, "backlog_effective", fx.effective >= 0 ? json_integer(fx.effective) : json_null());
	json_object_set_new(o, "backlog_wanted", json_integer(fx.want));
	json_object_set_new(o, "why", str_or_null(fx.why));
	rp_fix_free(&fx);
	return o;
}
