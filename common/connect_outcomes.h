/*
 * connect_outcomes.h: the words a connect line's "outcome" field holds
 * (docs/events.md), one spelling for the library that writes them
 * (shim/audit/connect_line.c, the summary's "connects" counts) and the
 * CLI that reads them (report, metrics, top).
 *
 * Macros for single words, and one table of fixed-width strings for code
 * that loops over the counted outcomes: no array of pointers, so the shim
 * can include it without adding a relocation. Pure: no dependencies.
 */
#ifndef SA_CONNECT_OUTCOMES_H
#define SA_CONNECT_OUTCOMES_H

#define SA_OUTCOME_OK "ok"
#define SA_OUTCOME_FAILED "failed"
#define SA_OUTCOME_ABANDONED "abandoned"          /* closed before the handshake finished */
#define SA_OUTCOME_INTERRUPTED "interrupted"      /* a blocking connect returned EINTR */
#define SA_OUTCOME_DISCONNECT "disconnect"        /* connect(AF_UNSPEC) */
#define SA_OUTCOME_PENDING "pending"              /* still in the handshake when written */

/* The final outcomes a summary counts per process and per peer, in the
 * order of their counters. */
enum sa_outcome_counted {
	SA_OUTCOME_I_OK, SA_OUTCOME_I_FAILED, SA_OUTCOME_I_ABANDONED, SA_OUTCOME_I_INTERRUPTED,
	SA_OUTCOMES_COUNTED
};
static const char sa_outcome_words[SA_OUTCOMES_COUNTED][12] __attribute__((unused)) = {
	SA_OUTCOME_OK, SA_OUTCOME_FAILED, SA_OUTCOME_ABANDONED, SA_OUTCOME_INTERRUPTED,
};

#endif
