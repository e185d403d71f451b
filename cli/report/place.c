/*
 * report/place.c: where processes and listeners are, for the join: the
 * init line's network namespace, host and boot as one "place" per
 * process, and whether a connect's peer address is a listener's address
 * (exactly; a wildcard listener's port in its own namespace; or the
 * address its accepts were made on). Loopback never crosses a place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

const struct rp_proc *rp_proc_find(const struct rp_state *st, long pid)
{
	size_t i;

	for (i = st->nprocs; i-- > 0;)
		if (st->procs[i].pid == pid)
			return &st->procs[i];
	return NULL;
}

/* "netns 4026531840 on web1": where the process of PID ran, from its
 * init line; 0 when the line does not say. */
int rp_place(const struct rp_state *st, long pid, char *buf, size_t len)
{
	const struct rp_proc *p = rp_proc_find(st, pid);
	const char *node = p ? log_str(p->init, "nodename") : NULL;
	double ns;

	if (!p || !node || !log_num(p->init, "netns", &ns))
		return 0;
	snprintf(buf, len, "netns %.0f on %s", ns, node);
	return 1;
}

/* ---- addresses ------------------------------------------------------------ */

static int addr_port(const char *a)
{
	const char *c = a ? strrchr(a, ':') : NULL;

	return c && c[1] ? atoi(c + 1) : -1;
}

int rp_addr_wildcard(const char *a)
{
	return a && (strncmp(a, "0.0.0.0:", 8) == 0 || strncmp(a, "[::]:", 5) == 0);
}

static int addr_loopback(const char *a)
{
	return a && (strncmp(a, "127.", 4) == 0 || strncmp(a, "[::1]:", 6) == 0 ||
		     strncmp(a, "[::ffff:127.", 12) == 0);
}

/* Whether a connect to PEER reached listener L. SAME: the two are in one
 * namespace of one host. The address its accepts were made on, its own
 * address, and in one namespace, a wildcard listener's loopback peers on
 * its port. */
int rp_addr_reaches(const char *peer, const struct rp_listener *l, int same)
{
	const char *la = l->local;

	if (!peer || (!same && addr_loopback(peer)))
		return 0;
	if (l->accept_local && strcmp(peer, l->accept_local) == 0)
		return 1;
	if (!la || !*la)
		return 0;
	if (strcmp(peer, la) == 0)
		return 1;
	if (!rp_addr_wildcard(la) || addr_port(peer) != addr_port(la))
		return 0;
	/* 0.0.0.0 takes IPv4 only; [::] takes both unless IPV6_V6ONLY. */
	if (same && addr_loopback(peer))
		return la[0] == '[' || peer[0] != '[';
	return 0;
}

/* ---- places: (netns, nodename, boot_id) ------------------------------------- */


void rp_places_make(const struct rp_state *st, struct rp_places *pl)
{
	size_t i;
	int k;

	pl->of_proc = calloc(st->nprocs + 1, sizeof(int));
	pl->key = calloc(st->nprocs + 1, sizeof(char *));
	pl->n = 0;
	if (!pl->of_proc || !pl->key) {
		fputs("sockaudit report: out of memory\n", stderr);
		exit(1);
	}
	for (i = 0; i < st->nprocs; i++) {
		const json_t *in = st->procs[i].init;
		const char *node = log_str(in, "nodename"), *boot = log_str(in, "boot_id");
		double ns;
		char buf[400];

		pl->of_proc[i] = -1;
		if (!node || !boot || !log_num(in, "netns", &ns))
			continue;
		snprintf(buf, sizeof buf, "%.0f %s %s", ns, boot, node);
		for (k = 0; k < pl->n && strcmp(pl->key[k], buf) != 0; k++)
			;
		if (k == pl->n)
			pl->key[pl->n++] = log_strdup(buf);
		pl->of_proc[i] = k;
	}
}

int rp_place_of(const struct rp_state *st, const struct rp_places *pl, long pid)
{
	const struct rp_proc *p = rp_proc_find(st, pid);

	return p ? pl->of_proc[p - st->procs] : -1;
}

void rp_places_free(struct rp_places *pl)
{
	int k;

	for (k = 0; k < pl->n; k++)
		free(pl->key[k]);
	free(pl->key);
	free(pl->of_proc);
}
