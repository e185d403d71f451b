/*
 * floor/start.c: what lets one `sockaudit` binary built on a new glibc run
 * on glibc 2.17 and later (x86_64 and aarch64, whose first glibc 2.17 is):
 * no symbol it binds may carry a version above GLIBC_2.17, or the old
 * loader refuses to start it at all.
 *
 * - The C start-up. gcc's Scrt1.o calls __libc_start_main@GLIBC_2.34 (the
 *   version that runs the program's constructors itself). This _start calls
 *   the oldest one (SA_OLD: GLIBC_2.2.5 on x86_64, GLIBC_2.17 on aarch64),
 *   which every glibc of the architecture exports, and hands it
 *   sa_floor_init, which runs _init and .init_array as glibc's own
 *   __libc_csu_init did (the loader runs .preinit_array of an executable);
 *   destructors are in .fini_array, which ld.so's _dl_fini runs on every
 *   glibc, so no fini is passed.
 * - The few libc/libm functions whose default version is newer than the
 *   floor reach us as __wrap_NAME (the link uses --wrap=NAME) and call the
 *   old version: stat family through __xstat (before 2.33 stat was an
 *   inline wrapper around it), pow and glob through their SA_OLD versions
 *   (2.27 changed only glob's GLOB_ALTDIRFUNC callbacks, which we never
 *   pass).
 *
 * What is per architecture: the versions, _STAT_VER and _start, below.
 * Built only for x86_64 and aarch64 glibc without sanitizers
 * (mk/launcher.mk).
 */
#include <stddef.h>
#include <stdint.h>
#include <glob.h>
#include <sys/stat.h>

#if defined(__x86_64__)
#define SA_OLD "GLIBC_2.2.5"
#define SA_OLD_AT "GLIBC_2.4"    /* __fxstatat came in 2.4 */
#define SA_STAT_VER 1            /* _STAT_VER_LINUX on x86_64 */
#elif defined(__aarch64__)
#define SA_OLD "GLIBC_2.17"
#define SA_OLD_AT "GLIBC_2.17"
#define SA_STAT_VER 0            /* _STAT_VER_KERNEL, the generic struct stat */
#else
#error "floor/start.c: no start-up for this architecture (mk/launcher.mk builds it for x86_64 and aarch64)"
#endif

int main(int argc, char **argv, char **envp);
void sa_floor_init(int argc, char **argv, char **envp);
int __wrap_stat(const char *path, struct stat *st);
int __wrap_fstat(int fd, struct stat *st);
int __wrap_lstat(const char *path, struct stat *st);
int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags);
double __wrap_pow(double x, double y);
int __wrap_glob(const char *pat, int flags, int (*errfn)(const char *, int), glob_t *g);

int sa_old_xstat(int ver, const char *path, struct stat *st);
int sa_old_fxstat(int ver, int fd, struct stat *st);
int sa_old_lxstat(int ver, const char *path, struct stat *st);
int sa_old_fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
double sa_old_pow(double x, double y);
int sa_old_glob(const char *pat, int flags, int (*errfn)(const char *, int), glob_t *g);
__asm__(".symver sa_old_xstat,__xstat@" SA_OLD);
__asm__(".symver sa_old_fxstat,__fxstat@" SA_OLD);
__asm__(".symver sa_old_lxstat,__lxstat@" SA_OLD);
__asm__(".symver sa_old_fxstatat,__fxstatat@" SA_OLD_AT);
__asm__(".symver sa_old_pow,pow@" SA_OLD);
__asm__(".symver sa_old_glob,glob@" SA_OLD);
__asm__(".symver sa_old_libc_start_main,__libc_start_main@" SA_OLD);

int __wrap_stat(const char *path, struct stat *st)
{
	return sa_old_xstat(SA_STAT_VER, path, st);
}

int __wrap_fstat(int fd, struct stat *st)
{
	return sa_old_fxstat(SA_STAT_VER, fd, st);
}

int __wrap_lstat(const char *path, struct stat *st)
{
	return sa_old_lxstat(SA_STAT_VER, path, st);
}

int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return sa_old_fxstatat(SA_STAT_VER, dirfd, path, st, flags);
}

double __wrap_pow(double x, double y)
{
	return sa_old_pow(x, y);
}

int __wrap_glob(const char *pat, int flags, int (*errfn)(const char *, int), glob_t *g)
{
	return sa_old_glob(pat, flags, errfn, g);
}

typedef void (*sa_ctor)(int, char **, char **);
extern sa_ctor __init_array_start[] __attribute__((visibility("hidden")));
extern sa_ctor __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void);

void sa_floor_init(int argc, char **argv, char **envp)
{
	/* Two linker-made symbols around one array: their distance as addresses. */
	size_t i, n = ((uintptr_t)__init_array_end - (uintptr_t)__init_array_start) / sizeof(sa_ctor);

	_init();
	for (i = 0; i < n; i++)
		__init_array_start[i](argc, argv, envp);
}

#if defined(__x86_64__)
/* The kernel's entry: %rdx holds ld.so's finaliser, the stack argc, argv,
 * envp. As glibc's own x86_64 start.S, with our init and the old symbol. */
__asm__(
	".text\n"
	".globl _start\n"
	".type _start,@function\n"
	"_start:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined rip\n"
	"	endbr64\n"
	"	xorl %ebp, %ebp\n"
	"	movq %rdx, %r9\n"              /* rtld_fini */
	"	popq %rsi\n"                   /* argc */
	"	movq %rsp, %rdx\n"             /* argv */
	"	andq $~15, %rsp\n"
	"	pushq %rax\n"
	"	pushq %rsp\n"                  /* stack_end */
	"	xorl %r8d, %r8d\n"             /* fini: none, see above */
	"	leaq sa_floor_init(%rip), %rcx\n"
	"	leaq main(%rip), %rdi\n"
	"	call *sa_old_libc_start_main@GOTPCREL(%rip)\n"
	"	hlt\n"
	"	.cfi_endproc\n"
	".size _start, .-_start\n");
#elif defined(__aarch64__)
/* The kernel's entry: x0 holds ld.so's finaliser, the stack argc, argv,
 * envp. As glibc's own aarch64 start.S: a last frame (x29 = x30 = 0), then
 * __libc_start_main(main, argc, argv, init, fini, rtld_fini, stack_end),
 * with our init and the old symbol, called through the GOT. */
__asm__(
	".text\n"
	".globl _start\n"
	".type _start,%function\n"
	"_start:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined x30\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x5, x0\n"                  /* rtld_fini */
	"	ldr x1, [sp]\n"                /* argc */
	"	add x2, sp, #8\n"              /* argv */
	"	mov x6, sp\n"                  /* stack_end */
	"	adrp x0, main\n"
	"	add x0, x0, :lo12:main\n"
	"	adrp x3, sa_floor_init\n"
	"	add x3, x3, :lo12:sa_floor_init\n"
	"	mov x4, #0\n"                  /* fini: none, see above */
	"	adrp x16, :got:sa_old_libc_start_main\n"
	"	ldr x16, [x16, :got_lo12:sa_old_libc_start_main]\n"
	"	blr x16\n"
	"	brk #0\n"
	"	.cfi_endproc\n"
	".size _start, .-_start\n");
#endif
