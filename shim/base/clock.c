/*
 * clock.c: the kernel's clocks, read without asking any other library.
 *
 * Durations (connect_ms, wait_ms, queue ages) must be real time whatever a
 * preload after us does to clock_gettime: libfaketime (FAKETIME="+0 x10")
 * interposes clock_gettime, and a call through our PLT reaches it, because
 * the dynamic linker searches the global scope (the program, then every
 * LD_PRELOAD in order, then libc). So the shim calls the vDSO's own
 * clock_gettime, found once from the auxiliary vector (getauxval, GLIBC_2.16),
 * and traps into the kernel where there is no vDSO. Neither can be
 * interposed. Where the vDSO's timespec is not libc's (32-bit time64), the
 * shim keeps libc's clock_gettime.
 *
 * Owns one function pointer, written with the same value by any thread or
 * handler that races to resolve it; no lock, no allocation, no system call
 * but the clock read itself.
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>

#include "base/base.h"

typedef int (*clock_fn)(clockid_t, struct timespec *);

static int clock_trap(clockid_t id, struct timespec *ts)
{
	return (int)sa_syscall3_raw(SYS_clock_gettime, id, (long)ts, 0);
}

#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || \
			   defined(__powerpc64__) || defined(__s390x__))
/* The number of symbols in the vDSO's dynamic symbol table: from DT_HASH
 * (nchain), or from DT_GNU_HASH (one past the last symbol any chain
 * reaches). */
static size_t dynsym_count(const uint32_t *hash, const uint32_t *gnu)
{
	uint32_t nbuckets, symoffset, bloom, i, max = 0;
	const uint32_t *buckets, *chain;

	if (hash)
		return hash[1];
	if (!gnu)
		return 0;
	nbuckets = gnu[0];
	symoffset = gnu[1];
	bloom = gnu[2];
	buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nbuckets;
	for (i = 0; i < nbuckets; i++)
		if (buckets[i] > max)
			max = buckets[i];
	if (max < symoffset)
		return max;
	while (!(chain[max - symoffset] & 1))
		max++;
	return (size_t)max + 1;
}

/* The vDSO's clock_gettime, or NULL. The image is an ELF object mapped
 * whole at AT_SYSINFO_EHDR; its addresses are link-time ones, moved by the
 * first PT_LOAD's offset. */
static clock_fn vdso_clock(void)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *dyn = NULL, *d;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL, *gnu = NULL;
	uintptr_t base, off = 0;
	size_t i, n;
	int have_load = 0;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	base = (uintptr_t)eh;
	ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			off = base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const ElfW(Dyn) *)(base + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return NULL;
	for (d = dyn; d->d_tag != DT_NULL; d++) {
		uintptr_t p = off + d->d_un.d_ptr;

		if (d->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)p;
		else if (d->d_tag == DT_STRTAB)
			str = (const char *)p;
		else if (d->d_tag == DT_HASH)
			hash = (const uint32_t *)p;
		else if (d->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)p;
	}
	if (!sym || !str)
		return NULL;
	n = dynsym_count(hash, gnu);
	for (i = 0; i < n; i++) {
		const char *name = str + sym[i].st_name;

		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF)
			continue;
		/* x86_64 and riscv64 name it __vdso_, arm64, ppc64 and s390x
		 * __kernel_. */
		if (strcmp(name, "__vdso_clock_gettime") == 0 || strcmp(name, "__kernel_clock_gettime") == 0)
			return (clock_fn)(off + sym[i].st_value);
	}
	return NULL;
}
#else
static clock_fn vdso_clock(void)
{
	return NULL;
}
#endif

static int clock_first(clockid_t id, struct timespec *ts);

/* Resolved on first use (a constructor of another library, or our own,
 * may read the clock before ours ran). Read inline by sa_clock(). */
clock_fn sa_clock_fn = clock_first;

static clock_fn resolve(void)
{
	clock_fn f = vdso_clock();

#if !defined(__LP64__)
	if (!f)
		f = clock_gettime;   /* the timespec libc was built with */
#endif
	if (!f)
		f = clock_trap;
	__atomic_store_n(&sa_clock_fn, f, __ATOMIC_RELAXED);
	return f;
}

static int clock_first(clockid_t id, struct timespec *ts)
{
	return resolve()(id, ts);
}

void sa_clock_failed(clockid_t id, struct timespec *ts)
{
	/* The vDSO falls back to the system call itself for a clock it
	 * cannot read in user space and returns that call's result: asking
	 * the kernel again is for a clock neither knows. */
	if (clock_trap(id, ts) != 0) {
		ts->tv_sec = 0;
		ts->tv_nsec = 0;
	}
}

int sa_clock_is_vdso(void)
{
	clock_fn f = __atomic_load_n(&sa_clock_fn, __ATOMIC_RELAXED);

	if (f == clock_first)
		f = resolve();
#if !defined(__LP64__)
	if (f == (clock_fn)clock_gettime)
		return 0;
#endif
	return f != clock_trap;
}
