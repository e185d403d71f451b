/*
 * metrics/proc.c: one process's own record: its listeners by address, and
 * freeing it. Below both the model (which fills it) and retire.c (which
 * folds an exited one into its program's accumulator).
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

void mx_proc_free(struct mx_proc *p)
{
	size_t i;

	for (i = 0; i < p->nlst; i++)
		free(p->lst[i].local);
	for (i = 0; i < p->nfds; i++)
		free(p->fds[i].local);
	free(p->lst);
	free(p->fds);
	json_decref(p->ev_find);
	json_decref(p->sum_find);
	free(p->comm);
	free(p->node);
	free(p->boot);
	free(p);
}

struct mx_plst *mx_plst_get(struct mx_proc *p, const char *local)
{
	size_t i;

	for (i = 0; i < p->nlst; i++)
		if (strcmp(p->lst[i].local, local) == 0)
			return &p->lst[i];
	p->lst = log_grow(p->lst, &p->caplst, p->nlst + 1, sizeof *p->lst);
	memset(&p->lst[p->nlst], 0, sizeof p->lst[p->nlst]);
	p->lst[p->nlst].local = log_strdup(local);
	return &p->lst[p->nlst++];
}
