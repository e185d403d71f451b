/*
 * diff/judge.c: the verdict on one figure, before and after, from the two
 * values alone. Nothing here reads a log or prints.
 */
#include <math.h>

#include "diff/diff.h"

/* Two times within 1 ms or 10% of each other are the same: queue_ms has
 * jiffy resolution and a connect on loopback moves by a few tenths of a
 * millisecond from run to run. */
#define DF_TIME_ABS_MS 1.0
#define DF_TIME_REL 0.10

enum df_verdict df_judge(enum df_kind kind, const struct df_val *before, const struct df_val *after)
{
	double a = before->v, b = after->v;

	if (!before->have)
		return DF_NEW;
	if (!after->have)
		return DF_GONE;
	switch (kind) {
	case DF_ROOM:
		return b > a ? DF_BETTER : b < a ? DF_WORSE : DF_SAME;
	case DF_TIME:
		if (fabs(b - a) <= fmax(DF_TIME_ABS_MS, DF_TIME_REL * fmax(a, b)))
			return DF_SAME;
		return b < a ? DF_BETTER : DF_WORSE;
	case DF_COUNT:
	default:
		if (b == a)
			return DF_SAME;
		if (b < a)
			return b == 0 ? DF_FIXED : DF_BETTER;
		return DF_WORSE;
	}
}

const char *df_verdict_name(enum df_verdict v)
{
	static const char *const names[] = {
		[DF_SAME] = "same", [DF_BETTER] = "better", [DF_FIXED] = "fixed",
		[DF_WORSE] = "worse", [DF_NEW] = "new", [DF_GONE] = "gone",
	};

	return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}
