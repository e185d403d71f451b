/*
 * report/syn.c: the kernel's SYN retransmission schedule, as the init lines
 * of the logs describe it. The causes (join.c) and the pictures use it;
 * it calls nothing of the report above the model's state.
 */
#include "report/report.h"
#include "syn_schedule.h"

/* The schedule itself is common/syn_schedule.h's, the one the shim's
 * messages use: the RTO stays 1 s while the retransmissions so far are at
 * most tcp_syn_linear_timeouts (6.5+; absent before: it always doubles),
 * then doubles. The init line does not carry tcp_rto_max_ms: the default
 * cap (120 s) is used, which only matters past the first several. */
int rp_syn_schedule(const struct rp_state *st, double *t, int n, long *linear)
{
	long lin = -1;
	size_t i;
	int k;

	for (i = 0; i < st->nprocs && lin < 0; i++)
		if (!log_long(st->procs[i].init, "tcp_syn_linear_timeouts", &lin))
			lin = -1;
	for (i = 0; i < st->nprocs && lin < 0; i++)
		if (st->procs[i].init && log_str(st->procs[i].init, "kernel"))
			lin = 0;        /* an init line without the sysctl: older kernel */
	if (lin < 0)
		return 0;
	if (lin > 64)
		lin = 64;
	*linear = lin;
	for (k = 1; k <= n; k++)
		t[k - 1] = sa_syn_retrans_at_ms(k, lin, SA_RTO_MAX_DEFAULT_MS) / 1000.0;
	return n;
}
