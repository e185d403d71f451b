/*
 * connect_buckets.h: the connect-time histogram's buckets, shared by the
 * library's summary (shim/audit/connect.c) and the CLI's report, metrics
 * and top so they can never disagree. The 1-1.5, 1.5-2.5 and 2.5-3.5 s buckets separate
 * the clusters left by 1, 2 and 3 SYN retransmissions (1 s apart since
 * Linux 6.5). Pure: no dependencies.
 */
#ifndef SA_CONNECT_BUCKETS_H
#define SA_CONNECT_BUCKETS_H

#define SA_CONN_NBUCKETS 8

static const char *const sa_conn_bucket_names[SA_CONN_NBUCKETS] __attribute__((unused)) = {
	"<10ms", "10-100ms", "100-500ms", "0.5-1s", "1-1.5s", "1.5-2.5s", "2.5-3.5s", ">3.5s",
};

/* The bucket index of a connect time in milliseconds. */
static inline int sa_conn_bucket(double ms)
{
	static const double upper[SA_CONN_NBUCKETS - 1] = { 10, 100, 500, 1000, 1500, 2500, 3500 };
	int i;

	for (i = 0; i < SA_CONN_NBUCKETS - 1; i++)
		if (ms < upper[i])
			return i;
	return SA_CONN_NBUCKETS - 1;
}

#endif
