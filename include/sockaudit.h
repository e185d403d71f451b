/*
 * sockaudit.h: the public face of libsockaudit.
 *
 * libsockaudit is an LD_PRELOAD library: programs do not link against it.
 * This header names the environment variables, the JSON schema version and
 * the few functions the library exports besides the libc names it wraps,
 * so a program (or a test) can ask whether the shim is active.
 */
#ifndef SOCKAUDIT_H
#define SOCKAUDIT_H

#ifdef __cplusplus
extern "C" {
#endif

#define SOCKAUDIT_SCHEMA 1

#define SOCKAUDIT_ENV_LOG            "SOCKAUDIT_LOG"
#define SOCKAUDIT_ENV_LEVEL          "SOCKAUDIT_LEVEL"
#define SOCKAUDIT_ENV_STATS_INTERVAL "SOCKAUDIT_STATS_INTERVAL"
#define SOCKAUDIT_ENV_COMM           "SOCKAUDIT_COMM"
#define SOCKAUDIT_ENV_DISABLE        "SOCKAUDIT_DISABLE"
#define SOCKAUDIT_ENV_SLOW_CONNECT_MS "SOCKAUDIT_SLOW_CONNECT_MS"
#define SOCKAUDIT_ENV_QUICKACK_MIN_REASSERTS "SOCKAUDIT_QUICKACK_MIN_REASSERTS"
#define SOCKAUDIT_ENV_QUICKACK_MAX_SEGS "SOCKAUDIT_QUICKACK_MAX_SEGS"

/* The library's version, e.g. "0.1.0". */
const char *sockaudit_version(void);

/* 1 when the shim audits this process, 0 when it passes calls through
 * (SOCKAUDIT_DISABLE=1, or the program is not in SOCKAUDIT_COMM). */
int sockaudit_enabled(void);

/* Called in a running program by `sockaudit attach PID` (after it loaded
 * the library with the program's dlopen) and `sockaudit detach PID`, on
 * one of its threads while the others are stopped. settings: SOCKAUDIT_*
 * entries as in an environment, NULL-terminated. sockaudit_attach: 0
 * attached, 1 already audited, 2 the settings audit nothing here, 3 no
 * call could be redirected, 4 the library's own wrappers not found.
 * sockaudit_detach: 0 detached, 1 not attached. */
int sockaudit_attach(char **settings);
int sockaudit_detach(void);

#ifdef __cplusplus
}
#endif
#endif
