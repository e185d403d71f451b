/*
 * event_text.h: the words of the events whose msg the shim writes without
 * a finding code (a finding's words are finding_text.h's). For each: the
 * event's name, its anchor in docs/events.md, and its sentences, which
 * decision code picks and never spells out. tests/unit/test_finding_words.c
 * checks docs/events.md against this table. Pure: no dependencies.
 */
#ifndef SA_EVENT_TEXT_H
#define SA_EVENT_TEXT_H

#define SA_EVENT_MAX_SENTENCES 4

struct sa_event_text {
	const char *event;
	const char *anchor;                   /* docs/events.md#anchor */
	const char *sentences[SA_EVENT_MAX_SENTENCES];   /* NULL after the last */
};

/* ---- exec_unaudited -------------------------------------------------------- */
#define SA_MSG_EXEC_UNAUDITED_ENV_REPLACED \
	"This program starts with an environment of the caller's making, without LD_PRELOAD " \
	"naming libsockaudit: it runs unaudited. Pass LD_PRELOAD and SOCKAUDIT_* on (nginx: env " \
	"LD_PRELOAD; env SOCKAUDIT_LOG;)."
#define SA_MSG_EXEC_UNAUDITED_PRELOAD_REMOVED \
	"This program starts after LD_PRELOAD naming libsockaudit was removed from the " \
	"environment, so it runs unaudited: none of its socket calls will be logged."

static const struct sa_event_text sa_event_texts[] __attribute__((unused)) = {
	{ "exec_unaudited", "exec_unaudited",
	  { SA_MSG_EXEC_UNAUDITED_ENV_REPLACED, SA_MSG_EXEC_UNAUDITED_PRELOAD_REMOVED } },
};

#endif
