/*
 * digits.h: decimal numbers read by hand, for the library and the CLI.
 * Pure: no dependencies.
 */
#ifndef SA_DIGITS_H
#define SA_DIGITS_H

/* The decimal number at p into *v (at most 2^60: no overflow), and the
 * first character after its digits; NULL when p has no digit. By hand:
 * sscanf and strtoull bind to newer glibc symbols (__isoc99_sscanf, a
 * version need of its own at every exec; __isoc23_* with glibc 2.38's
 * headers). */
static inline const char *sa_digits(const char *p, unsigned long long *v)
{
	const char *s = p;

	for (*v = 0; *p >= '0' && *p <= '9' && *v < (1ULL << 60); p++)
		*v = *v * 10 + (unsigned long long)(*p - '0');
	return p == s ? NULL : p;
}

#endif
