/*
 * got.c: an attached library's way in. Loaded into a running program by
 * dlopen (sockaudit attach), the library's socket() and the rest are
 * bound by nobody: every object already resolved its calls to libc's. So
 * the attach points each object's GOT slots (R_*_JUMP_SLOT and GLOB_DAT
 * relocations) for a wrapped name at our wrapper, remembering what each
 * slot held, and the detach puts every slot back.
 *
 * Every loaded object but ours, the loader, libc itself and the vDSO: the
 * same calls a preloaded run sees (libc's calls to itself are not
 * interposed either), and the calls of objects the program loaded with
 * dlopen (the JVM's libnet.so and libnio.so, a module) as well as the
 * executable's. A slot under RELRO is made writable for the store and
 * read-only again; each store is one aligned word, so a thread that runs
 * meanwhile calls either the old function or ours, never a torn pointer.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

/* What the attach changed: each slot, what it held and what we stored. */
struct got_patch {
	void **slot;
	void *old, *ours;
	uintptr_t relro_lo, relro_hi;   /* its object's RELRO: read-only between stores */
};
static struct got_patch *patches;
static size_t npatches, cap_patches;

struct got_walk {
	const char *const *names;
	void *const *ours;
	size_t n;
	int failed;
};

static int keep(void **slot, void *old, void *ours, uintptr_t lo, uintptr_t hi)
{
	if (npatches == cap_patches) {
		size_t cap = cap_patches ? cap_patches * 2 : 256;
		void *p = mmap(NULL, cap * sizeof *patches, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -ENOMEM;
		if (patches) {
			memcpy(p, patches, npatches * sizeof *patches);
			munmap(patches, cap_patches * sizeof *patches);
		}
		patches = p;
		cap_patches = cap;
	}
	patches[npatches++] = (struct got_patch){ slot, old, ours, lo, hi };
	return 0;
}

/* One aligned word, the page made writable first when it is not. */
static int store(void **slot, void *v, uintptr_t relro_lo, uintptr_t relro_hi)
{
	long pg = (long)getauxval(AT_PAGESZ);   /* not sysconf: Debian's symbols file dates it 2.34 */
	uintptr_t a = (uintptr_t)slot, page = a & ~(uintptr_t)(pg - 1);
	int ro = a >= relro_lo && a < relro_hi;

	if (ro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	__atomic_store_n(slot, v, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)page, (size_t)pg, PROT_READ);
	return 0;
}

static int is_skipped(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-musl", 7) == 0 ||
	       strncmp(b, "linux-vdso", 10) == 0 || strncmp(b, "libsockaudit", 12) == 0;
}

static uintptr_t dyn_address(uintptr_t base, ElfW(Addr) p)
{
	return p < base ? base + p : p;   /* glibc relocates .dynamic in place, musl does not */
}

static void patch_relocs(struct got_walk *w, uintptr_t base, const ElfW(Rela) *r, size_t bytes, const ElfW(Sym) *sym,
			 const char *str, uintptr_t lo, uintptr_t hi)
{
	size_t i, k;

	for (i = 0; r && i < bytes / sizeof *r; i++) {
		unsigned long type = ELF64_R_TYPE(r[i].r_info);
		const char *name;
		void **slot;

		if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
			continue;
		name = str + sym[ELF64_R_SYM(r[i].r_info)].st_name;
		for (k = 0; k < w->n; k++)
			if (strcmp(name, w->names[k]) == 0)
				break;
		if (k == w->n)
			continue;
		slot = (void **)(base + r[i].r_offset);
		if (*slot == w->ours[k])
			continue;
		if (keep(slot, *slot, w->ours[k], lo, hi) != 0 || store(slot, w->ours[k], lo, hi) != 0) {
			if (npatches && patches[npatches - 1].slot == slot)
				npatches--;
			w->failed++;
		}
	}
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct got_walk *w = data;
	const ElfW(Dyn) *d = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	size_t jmpsz = 0, relasz = 0;
	uintptr_t base = info->dlpi_addr, lo = 0, hi = 0;
	int i;

	(void)size;
	if (!info->dlpi_name || is_skipped(info->dlpi_name))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(base + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			lo = base + ph->p_vaddr;
			hi = lo + ph->p_memsz;
		}
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL: jmprel = (const void *)dyn_address(base, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmpsz = d->d_un.d_val; break;
		case DT_RELA: rela = (const void *)dyn_address(base, d->d_un.d_ptr); break;
		case DT_RELASZ: relasz = d->d_un.d_val; break;
		case DT_SYMTAB: sym = (const void *)dyn_address(base, d->d_un.d_ptr); break;
		case DT_STRTAB: str = (const void *)dyn_address(base, d->d_un.d_ptr); break;
		default: break;
		}
	}
	if (!sym || !str)
		return 0;
	patch_relocs(w, base, jmprel, jmpsz, sym, str, lo, hi);
	patch_relocs(w, base, rela, relasz, sym, str, lo, hi);
	return 0;
}

int sa_got_patch(const char *const *names, void *const *ours, size_t n)
{
#if defined(R_JUMP_SLOT)
	struct got_walk w = { names, ours, n, 0 };

	dl_iterate_phdr(visit, &w);
	return w.failed ? -(int)w.failed : (int)npatches;
#else
	(void)names, (void)ours, (void)n;
	return -ENOSYS;
#endif
}

/* The slots put back (those still holding ours: a slot the program changed
 * since is its own); the list emptied. */
void sa_got_restore(void)
{
	size_t i;

	for (i = npatches; i-- > 0;)
		if (__atomic_load_n(patches[i].slot, __ATOMIC_ACQUIRE) == patches[i].ours)
			store(patches[i].slot, patches[i].old, patches[i].relro_lo, patches[i].relro_hi);
	npatches = 0;
}

size_t sa_got_patched(void)
{
	return npatches;
}
