/*
 * metrics/retire.c: a process whose summary was read, folded into its
 * program's accumulator (model.c's per-process totals stay
 * bounded by the processes running, not by all that ever ran).
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

static long maxl(long a, long b)
{
	return a > b ? a : b;
}

static void unhash(struct mx_state *st, struct mx_proc *p)
{
	struct mx_proc **pp = &st->hash[(size_t)p->pid % MX_HASH];

	while (*pp && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = p->hnext;
	if (st->last == p)
		st->last = NULL;
}

/*
 * A process whose summary was read has said everything: its final
 * counts (per counter the larger of lines and totals, as the exposition
 * takes them) are added to its program's accumulator and it is freed, so
 * a fork-per-connection server followed for days holds one entry per
 * program, not one per connection. The accumulator is an mx_proc whose
 * sum_ and st_ fields hold the sums; it is never in the pid hash.
 */
void mx_retire(struct mx_state *st, struct mx_proc *p)
{
	struct mx_proc *a = NULL;
	const char *code;
	json_t *v;
	void *it;
	size_t i;
	long nsum = 0;
	int k;

	for (i = 0; i < st->nprocs; i++)
		if (st->procs[i]->retired && strcmp(st->procs[i]->comm, p->comm) == 0)
			a = st->procs[i];
	if (!a) {
		a = calloc(1, sizeof *a);
		if (!a) {
			fputs("sockaudit metrics: out of memory\n", stderr);
			exit(1);
		}
		a->pid = -1;
		a->comm = log_strdup(p->comm);
		a->exited = 1;
		a->have_sum_hist = a->have_sum_sum = 1;
		st->procs = log_grow(st->procs, &st->capprocs, st->nprocs + 1, sizeof *st->procs);
		st->procs[st->nprocs++] = a;
	}
	a->retired++;
	for (k = 0; k < MX_OUTCOMES; k++)
		a->sum_conn[k] += maxl(p->ev_conn[k], p->sum_conn[k]);
	for (k = 0; k < SA_CONN_NBUCKETS; k++)
		nsum += p->sum_hist[k];
	for (k = 0; k < SA_CONN_NBUCKETS; k++)   /* the histogram print_connects would pick */
		a->sum_hist[k] += p->have_sum_hist && nsum >= p->ev_timed ? p->sum_hist[k] : p->ev_hist[k];
	a->sum_sum_ms += p->have_sum_hist && nsum >= p->ev_timed && p->have_sum_sum ? p->sum_sum_ms : p->ev_sum_ms;
	a->sum_retr += maxl(p->ev_retr, p->sum_retr);
	a->dropped_sum += maxl(p->dropped_warn, p->dropped_sum);
	if (!a->sum_find)
		a->sum_find = json_object();
	LOG_OBJECT_EACH(p->sum_find, it, code, v) {
		json_t *e = json_object_get(p->ev_find, code);

		log_obj_add(a->sum_find, code, maxl((long)json_integer_value(v), e ? (long)json_integer_value(e) : 0));
	}
	LOG_OBJECT_EACH(p->ev_find, it, code, v)
		if (!json_object_get(p->sum_find, code))
			log_obj_add(a->sum_find, code, (long)json_integer_value(v));
	for (i = 0; i < p->nlst; i++) {
		const struct mx_plst *l = &p->lst[i];
		struct mx_plst *al = mx_plst_get(a, l->local);

		al->st_accepts += maxl(maxl(l->ev_accepts, l->st_accepts), l->sum_accepts);
		al->st_queue_full += maxl(l->st_queue_full, l->sum_queue_full);
		al->st_empty += maxl(l->st_empty, l->sum_empty);
		al->st_empty_defer += l->st_empty_defer;
		al->st_empty_syncookie += l->st_empty_syncookie;
	}
	unhash(st, p);
	for (i = 0; i < st->nprocs; i++)
		if (st->procs[i] == p) {
			memmove(&st->procs[i], &st->procs[i + 1], (st->nprocs - i - 1) * sizeof *st->procs);
			st->nprocs--;
			break;
		}
	mx_proc_free(p);
}
