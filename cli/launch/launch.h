/*
 * launch/launch.h: `sockaudit [options] [--] COMMAND [ARGS...]`: run a
 * program with the right libsockaudit preloaded, after saying why LD_PRELOAD
 * cannot work for it when that is so (a static, setuid or Go program).
 *
 * launch.c parses and execs, libpick.c picks the library by the program's
 * interpreter and glibc, progcheck.c and gocheck.c look at the program.
 */
#ifndef SA_CLI_LAUNCH_H
#define SA_CLI_LAUNCH_H

#include <stdio.h>

#ifndef SOCKAUDIT_VERSION_STR
#define SOCKAUDIT_VERSION_STR "unknown"
#endif
/* The installed libdir; the Makefile passes $(PKGLIBDIR). */
#ifndef SOCKAUDIT_LIBDIR
#define SOCKAUDIT_LIBDIR "/usr/local/lib"
#endif

#define SA_LIB_NAME "libsockaudit.so"
#define SA_MUSL_LIB_NAME "libsockaudit-musl.so"
/* musl's dlopen takes no initial-exec TLS: attach loads this build (mk/abi.mk). */
#define SA_MUSL_ATTACH_LIB_NAME "libsockaudit-musl-attach.so"

/* launch.c: `sockaudit [options] [--] COMMAND [ARGS...]`. Returns only
 * on error (the exit status to use); on success it has exec'd. */
int cli_launch(int argc, char **argv);
void cli_usage(FILE *out);
/* progcheck.c: one line on ERR when LD_PRELOAD cannot work for the program
 * NAME resolves to (static, another ELF class, setuid/setgid/setcap). */
void cli_check_program(const char *name, FILE *err);
/* NAME resolved like execvp does, in out; -1 when not found. */
int cli_resolve(const char *name, char *out, size_t cap);
/* The interpreter a #! script at fd names (through `env NAME`), in out;
 * -1 when the file is not a script. */
int cli_script_interp(int fd, char *out, size_t cap);

/* libpick.c: the library to preload into the program NAME runs, by its
 * interpreter (glibc or musl) and the running glibc's version. */
enum { SA_PICK_PRELOAD, SA_PICK_NONE, SA_PICK_MISSING };
/* SA_PICK_PRELOAD: the library's absolute path is in lib. SA_PICK_NONE: no
 * library fits; one line said why on err, run the program as it is.
 * SA_PICK_MISSING: libsockaudit.so is not installed anywhere we look. */
int cli_pick_library(const char *name, char *lib, size_t cap, FILE *err);
/* Library NAME beside this program, in ../lib/sockaudit, ../lib, or the
 * configured directory; 0 with its absolute path in out. */
int cli_find_library(const char *name, char *out, size_t cap);
/* 1 with the highest GLIBC_x.y the ELF at path needs in ver ("2.17"),
 * 0 when it needs none, -1 unreadable. */
int cli_glibc_needed(const char *path, char *ver, size_t cap);
/* gocheck.c: 1 when the ELF file at fd is a Go program (its build-id note
 * or .go.buildinfo section): Go makes its own system calls. */
int cli_is_go_program(int fd);
/* attach.c: `sockaudit attach [options] PID...` and `sockaudit detach
 * PID...`: the library into a running program and out again. */
int cli_attach(int argc, char **argv);
int cli_detach(int argc, char **argv);
/* Set by the launcher to its own pid, which the program keeps across exec:
 * the library's exit message is for that process only (shim/core/lifecycle.c). */
#define SA_ENV_LAUNCHED "SOCKAUDIT_LAUNCHED"

#endif
