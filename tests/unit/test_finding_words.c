/* Unit tests for common/finding_text.h, the one table of every finding
 * code's words: it names the same codes as the counters (common/names.h),
 * each code has its explanation and sentence templates, and
 * docs/findings.md has a section for each code at the anchor the table
 * gives, an index row linking to it, no section for a code the table does
 * not know, and in that section the table's meaning, mechanism and fix word
 * for word (what `sockaudit explain CODE` prints); likewise common/event_text.h against docs/events.md for
 * the events whose msg carries no finding code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "names.h"
#include "event_text.h"
#include "finding_text.h"

#define NTEXTS (sizeof sa_finding_texts / sizeof sa_finding_texts[0])

static char *doc, *events_doc;

/* docs/NAME, whole, or NULL. */
static char *load(const char *name)
{
	const char *top = getenv("top");
	char path[4096], *text;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "%s/docs/%s", top && *top ? top : ".", name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

static int setup(void **state)
{
	doc = load("findings.md");
	events_doc = load("events.md");
	return doc && events_doc ? 0 : -1;
}

static int teardown(void **state)
{
	free(doc);
	free(events_doc);
	return 0;
}

static const struct sa_finding_text *entry(const char *code)
{
	size_t i;

	for (i = 0; i < NTEXTS; i++)
		if (!strcmp(sa_finding_texts[i].code, code))
			return &sa_finding_texts[i];
	return NULL;
}

/* The table and the counters name the same codes ("other" is the
 * counters' catch-all, never a finding). */
static void same_codes_as_counters(void **state)
{
	size_t i;

	for (i = 0; i < SA_NFINDING_CODES; i++)
		if (strcmp(sa_finding_codes[i], "other") && !entry(sa_finding_codes[i]))
			fail_msg("%s is counted but has no words in finding_text.h", sa_finding_codes[i]);
	for (i = 0; i < NTEXTS; i++) {
		size_t j;

		for (j = 0; j < SA_NFINDING_CODES && strcmp(sa_finding_codes[j], sa_finding_texts[i].code); j++)
			;
		if (j == SA_NFINDING_CODES)
			fail_msg("%s has words but no counter in names.h", sa_finding_texts[i].code);
	}
}

/* Every code has its explanation, and every code the shim raises has its
 * sentences (config_warning's lines word the refused setting themselves). */
static void each_code_has_words(void **state)
{
	size_t i, k;

	for (i = 0; i < NTEXTS; i++) {
		const struct sa_finding_text *t = &sa_finding_texts[i];

		if (!t->text || strlen(t->text) < 40)
			fail_msg("%s: no explanation", t->code);
		if (strcmp(t->code, "config_warning") && !t->sentences[0])
			fail_msg("%s: no sentence template", t->code);
		for (k = 0; k < SA_FINDING_MAX_SENTENCES && t->sentences[k]; k++)
			if (strlen(t->sentences[k]) < 10)
				fail_msg("%s: sentence %zu is empty", t->code, k);
	}
}

/* docs/findings.md: "### `code`" for each code, an index row linking to
 * its anchor, and no section for a code the table does not know. */
static void docs_match_table(void **state)
{
	char want[128];
	const char *p;
	size_t i;

	assert_non_null(doc);
	for (i = 0; i < NTEXTS; i++) {
		const struct sa_finding_text *t = &sa_finding_texts[i];

		snprintf(want, sizeof want, "\n### `%s`\n", t->code);
		if (!strstr(doc, want))
			fail_msg("docs/findings.md has no section \"### `%s`\"", t->code);
		/* GitHub's anchor of "### `code`" is the code itself. */
		if (strcmp(t->anchor, t->code))
			fail_msg("%s: anchor %s is not its section's", t->code, t->anchor);
		snprintf(want, sizeof want, "](#%s) |", t->anchor);
		if (!strstr(doc, want))
			fail_msg("docs/findings.md's index has no link to #%s", t->anchor);
	}
	for (p = strstr(doc, "\n### `"); p; p = strstr(p + 1, "\n### `")) {
		const char *b = p + 6, *e = strchr(b, '`');
		char code[64];

		if (!e || (size_t)(e - b) >= sizeof code)
			continue;
		memcpy(code, b, (size_t)(e - b));
		code[e - b] = '\0';
		if (!entry(code))
			fail_msg("docs/findings.md documents %s, which finding_text.h does not know", code);
	}
}

/* s with every run of blanks and newlines as one space, into a new string. */
static char *squeeze(const char *s, size_t n)
{
	char *o = calloc(1, n + 1), *d = o;
	size_t i;

	assert_non_null(o);
	for (i = 0; i < n; i++) {
		int blank = s[i] == ' ' || s[i] == '\n' || s[i] == '\t';

		if (blank && (d == o || d[-1] == ' '))
			continue;
		*d++ = blank ? ' ' : s[i];
	}
	*d = '\0';
	return o;
}

/* Each code's section says the table's words as its **Meaning.**,
 * **Mechanism.** and **Fix.** paragraphs, word for word: the one text that
 * `sockaudit explain CODE` prints lives in the table and on the page. */
static void docs_say_the_words(void **state)
{
	char want[128];
	size_t i;

	for (i = 0; i < NTEXTS; i++) {
		const struct sa_finding_text *t = &sa_finding_texts[i];
		const char *label[3] = { "**Meaning.** ", "**Mechanism.** ", "**Fix.** " };
		const char *words[3] = { t->text, t->mechanism, t->fix };
		const char *sec, *end;
		char *flat;
		int k;

		snprintf(want, sizeof want, "\n### `%s`\n", t->code);
		sec = strstr(doc, want);
		assert_non_null(sec);
		end = strstr(sec + 1, "\n### ");
		if (!end)
			end = sec + strlen(sec);
		flat = squeeze(sec, (size_t)(end - sec));
		for (k = 0; k < 3; k++) {
			char *line;

			if (!words[k] || strlen(words[k]) < 20)
				fail_msg("%s: no %s in finding_text.h", t->code, label[k]);
			line = calloc(1, strlen(label[k]) + strlen(words[k]) + 1);
			assert_non_null(line);
			strcpy(line, label[k]);
			strcat(line, words[k]);
			if (!strstr(flat, line))
				fail_msg("docs/findings.md's %s section does not say, word for word: %s", t->code, line);
			free(line);
		}
		free(flat);
	}
}

/* The events whose msg is worded without a finding code
 * (common/event_text.h): each has its sentences, a section in
 * docs/events.md at the table's anchor with a `msg` row, and an index row
 * linking to it. */
static void event_words_match_docs(void **state)
{
	char want[128];
	size_t i, k;

	assert_non_null(events_doc);
	for (i = 0; i < sizeof sa_event_texts / sizeof sa_event_texts[0]; i++) {
		const struct sa_event_text *t = &sa_event_texts[i];
		const char *sec, *end;

		if (!t->sentences[0])
			fail_msg("%s: no sentence", t->event);
		for (k = 0; k < SA_EVENT_MAX_SENTENCES && t->sentences[k]; k++)
			if (strlen(t->sentences[k]) < 40)
				fail_msg("%s: sentence %zu is empty", t->event, k);
		if (strcmp(t->anchor, t->event))
			fail_msg("%s: anchor %s is not its section's", t->event, t->anchor);
		snprintf(want, sizeof want, "\n## %s\n", t->event);
		sec = strstr(events_doc, want);
		if (!sec)
			fail_msg("docs/events.md has no section \"## %s\"", t->event);
		end = strstr(sec + 1, "\n## ");
		snprintf(want, sizeof want, "\n| `msg` |");
		{
			const char *m = strstr(sec, want);
			if (!m || (end && m > end))
				fail_msg("docs/events.md's %s section has no msg row", t->event);
		}
		snprintf(want, sizeof want, "(#%s)", t->anchor);
		if (!strstr(events_doc, want))
			fail_msg("docs/events.md's index has no link to #%s", t->anchor);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_codes_as_counters),
		cmocka_unit_test(each_code_has_words),
		cmocka_unit_test(docs_match_table),
		cmocka_unit_test(docs_say_the_words),
		cmocka_unit_test(event_words_match_docs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
