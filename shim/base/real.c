/*
 * real.c: the real libc symbols, found by reading the loaded objects'
 * dynamic symbol tables ourselves, as dlsym(RTLD_NEXT) would find them.
 *
 * Owns sa_real. Must never call an exported wrapper name: everything inside
 * the shim reaches libc through sa_real. The wrappers resolve lazily through
 * sa_real_init(), so a constructor of another library that calls socket()
 * before ours ran still works.
 *
 * Why not dlsym: it is glibc 2.34's in libc (libdl's before, a library the
 * host may not load), it takes the loader's lock, may allocate, and makes
 * each name a lookup of its own, at every exec. Here one pass over the
 * objects loaded after ours (dl_iterate_phdr: glibc 2.2.5, musl) looks every
 * missing name up in their GNU (or SysV) hash tables: no allocation, no call
 * back into our wrappers, nothing a signal handler could meet half done (two
 * threads or a handler resolving at once store the same pointers).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"

struct sa_real_fns sa_real SA_START_DATA;
/* The re-entry flag (base.h). */
__thread int sa_in_shim SA_TLS;
static int resolved SA_START_DATA;

/* The symbol of each slot of struct sa_real_fns, in its order. Fixed-width
 * strings, not pointers: no relocation at load. */
static const char names[][16] = {
	"socket", "socketpair", "setsockopt", "getsockopt", "listen",
	"accept", "accept4", "connect", "close", "close_range", "closefrom",
	"dup", "dup2", "dup3", "read", "write", "recv", "send",
	"recvfrom", "sendto", "recvmsg", "sendmsg", "readv", "writev",
	"sigaction", "signal",
	/* _FORTIFY_SOURCE builds call these instead of read/recv/recvfrom. */
	"__read_chk", "__recv_chk", "__recvfrom_chk",
	"syscall", "clone", "_exit",
	"execve", "execvp", "execvpe", "fexecve", "posix_spawn", "posix_spawnp",
	"execv",
};
#define NSLOTS (sizeof names / sizeof names[0])
_Static_assert(sizeof(struct sa_real_fns) == NSLOTS * sizeof(void (*)(void)),
	       "names[] must list every slot of struct sa_real_fns, in order");

_Static_assert(NSLOTS <= 64, "a walk's slots are the bits of a uint64_t");
#define ALL_SLOTS (NSLOTS == 64 ? ~(uint64_t)0 : ((uint64_t)1 << NSLOTS) - 1)
#define BIT(fn) ((uint64_t)1 << SA_REAL_SLOT(fn))
/* What a process that never sets the shim up (a shell, a CGI script)
 * calls through the wrappers: the first of them to be missed fills all,
 * in one walk. A walk costs about 1,400 instructions and a name more
 * about 100; a shell calls four or five of these. */
#define BASICS (BIT(sigaction) | BIT(signal) | BIT(read) | BIT(write) | BIT(close) | BIT(dup) | \
		BIT(dup2) | BIT(_exit) | BIT(execve))

typedef void *sa_slot_t __attribute__((may_alias));
static inline sa_slot_t *slot_table(void)
{
	return (sa_slot_t *)(void *)&sa_real;
}

/* close_range() is new in glibc 2.34; when libc lacks it, go to the kernel. */
static int fallback_close_range(unsigned int first, unsigned int last, int flags)
{
#ifdef SYS_close_range
	return (int)sa_syscall(SYS_close_range, first, last, flags);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* closefrom() as glibc does it, for a libc without one (before 2.34). */
static void fallback_closefrom(int lowfd)
{
	struct rlimit rl;
	unsigned int fd, top = 65536;

	if (lowfd < 0)
		lowfd = 0;
	if (fallback_close_range((unsigned int)lowfd, ~0U, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < top)
		top = (unsigned int)rl.rlim_cur;
	for (fd = (unsigned int)lowfd; fd < top; fd++)
		SA_REAL(close)((int)fd);
}

/* One loaded object's dynamic symbol table. */
struct obj {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu;       /* DT_GNU_HASH */
	const uint32_t *sysv;      /* DT_HASH */
	const ElfW(Half) *versym;  /* DT_VERSYM, or NULL */
};

/* glibc adds the load address to .dynamic's pointers in place (not for the
 * vDSO); musl leaves them as they are in the file. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
	return p < base ? base + p : p;
}

static const ElfW(Dyn) *dynamic_of(const struct dl_phdr_info *info)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return NULL;
}

static int obj_open(uintptr_t base, const ElfW(Dyn) *d, struct obj *o)
{
	memset(o, 0, sizeof *o);
	o->base = base;
	if (!d)
		return -ENOENT;
	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: o->sym = (const void *)dyn_ptr(o->base, d->d_un.d_ptr); break;
		case DT_STRTAB: o->str = (const void *)dyn_ptr(o->base, d->d_un.d_ptr); break;
		case DT_GNU_HASH: o->gnu = (const void *)dyn_ptr(o->base, d->d_un.d_ptr); break;
		case DT_HASH: o->sysv = (const void *)dyn_ptr(o->base, d->d_un.d_ptr); break;
		case DT_VERSYM: o->versym = (const void *)dyn_ptr(o->base, d->d_un.d_ptr); break;
		default: break;
		}
	}
	return o->sym && o->str && (o->gnu || o->sysv) ? 0 : -ENOENT;
}

/* strcmp by hand: a call to libc's would be one more lazy binding (about
 * 700 instructions) in every process whose first wrapped call walks. */
static inline int same_name(const char *a, const char *b)
{
	for (; *a == *b; a++, b++)
		if (!*a)
			return 1;
	return 0;
}

/* A definition dlsym would return: defined, global or weak, and the
 * default version (not a hidden old one such as
 * dlsym@GLIBC_2.2.5 next to dlsym@@GLIBC_2.34). */
static void *sym_value(const struct obj *o, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &o->sym[i];
	unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
	void *p;

	if (s->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
	    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE && type != STT_OBJECT) ||
	    !same_name(o->str + s->st_name, name))
		return NULL;
	if (o->versym && ((o->versym[i] & 0x8000) || (o->versym[i] & 0x7fff) == 0))
		return NULL;
	p = (void *)(o->base + s->st_value);
	if (type == STT_GNU_IFUNC)   /* what the loader does for an indirect function */
		p = ((void *(*)(unsigned long))p)(getauxval(AT_HWCAP));
	return p;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000;
		h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static void *lookup(const struct obj *o, const char *name)
{
	void *p;

	if (o->gnu) {
		const uint32_t *g = o->gnu;
		uint32_t nbuckets = g[0], symoffset = g[1], bloom_size = g[2], shift = g[3];
		const ElfW(Addr) *bloom = (const void *)&g[4];
		const uint32_t *buckets = (const void *)&bloom[bloom_size];
		const uint32_t *chain = &buckets[nbuckets];
		const unsigned bits = sizeof(ElfW(Addr)) * 8;
		uint32_t h = gnu_hash(name), i, h2;
		ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));

		if (!nbuckets || !bloom_size || (bloom[(h / bits) % bloom_size] & mask) != mask)
			return NULL;
		i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			h2 = chain[i - symoffset];
			if ((h | 1) == (h2 | 1) && (p = sym_value(o, i, name)))
				return p;
			if (h2 & 1)
				return NULL;
		}
	} else {
		const uint32_t *t = o->sysv;
		uint32_t nbucket = t[0], i;
		const uint32_t *bucket = &t[2], *chain = &t[2 + nbucket];

		if (!nbucket)
			return NULL;
		for (i = bucket[sysv_hash(name) % nbucket]; i; i = chain[i])
			if ((p = sym_value(o, i, name)))
				return p;
		return NULL;
	}
}

/*
 * The names sa_real_sym is asked for, looked up in the set-up's one walk
 * (in every object but ours, in load order) and kept: after the set-up no
 * walk runs at all. That matters in a child forked while another thread
 * was inside dl_iterate_phdr (ours or the host's): glibc's fork resets the
 * loader's dl_load_lock but not the lock dl_iterate_phdr takes, so a walk
 * in that child would wait forever.
 */
static const char extra_names[][28] = {
	"pthread_create", "pthread_join", "pthread_detach", "pthread_attr_setstacksize",
	"pthread_setcancelstate", "pthread_getattr_np", "pthread_attr_getstack",
	"__register_atfork", "gnu_get_libc_version", "environ",
};
#define NEXTRA (sizeof extra_names / sizeof extra_names[0])
_Static_assert(NEXTRA <= 32, "a walk's extras are the bits of an unsigned");
static void *extra_at[NEXTRA];
static int extras_done;    /* extra_at holds the walk's answers (NULL: none has it) */

struct walk {
	int after_self;   /* 1: only the objects after ours (RTLD_NEXT); 0: every other one */
	int past_self;
	int after;        /* an object after ours had one of the names */
	int missing;
	const char *one;  /* sa_real_sym's name, or NULL for the slots */
	void *found;
	uint64_t want;    /* the slots to fill, a bit each */
	unsigned extras;  /* extra_names still to find, a bit each (the set-up's walk) */
};

static int is_self(const struct dl_phdr_info *info)
{
	uintptr_t me = (uintptr_t)&sa_real;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && me >= info->dlpi_addr + ph->p_vaddr &&
		    me - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* One object other than ours; 1 ends the walk (nothing left to find). */
static int visit_obj(struct walk *w, const struct obj *o)
{
	unsigned i, miss = 0;
	void *p;

	if (w->one)
		return (w->found = lookup(o, w->one)) != NULL;
	for (i = 0; i < NEXTRA; i++)   /* every object, ours excepted, in order */
		if (w->extras >> i & 1) {
			if ((p = lookup(o, extra_names[i]))) {
				extra_at[i] = p;
				w->extras &= ~(1u << i);
			} else
				miss++;
		}
	if (w->after_self && !w->past_self)
		return 0;   /* the slots: only the objects after ours */
	for (i = 0; i < NSLOTS; i++) {
		if (!(w->want >> i & 1) || __atomic_load_n(&slot_table()[i], __ATOMIC_RELAXED))
			continue;
		if ((p = lookup(o, names[i]))) {
			__atomic_store_n(&slot_table()[i], p, __ATOMIC_RELEASE);
			w->after = 1;   /* a libc after ours (not only our own dependencies) */
		} else
			miss++;
	}
	w->missing = (int)miss;
	return miss == 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct walk *w = data;
	struct obj o;

	(void)size;
	if (is_self(info)) {
		w->past_self = 1;
		return 0;
	}
	if (obj_open(info->dlpi_addr, dynamic_of(info), &o) != 0)
		return 0;
	return visit_obj(w, &o);
}

/*
 * The loader's list of objects read without its lock, from the r_debug the
 * main program's DT_DEBUG points to (glibc and musl both fill it; musl's
 * objects begin as link_map does), in a process forked while one of our
 * walks was under way: dl_iterate_phdr's lock may be held there by a
 * thread that did not come along (ours, or the host's that ours waited
 * on), and then no dlopen or dlclose can change the list under the walk
 * either (they take that lock too). 0: no such list here.
 */
static int walk_unlocked(struct walk *w)
{
	extern ElfW(Dyn) _DYNAMIC[] SA_HIDDEN;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t i, n = getauxval(AT_PHNUM);
	uintptr_t bias = 0;
	const ElfW(Dyn) *d = NULL;
	const struct r_debug *r = NULL;
	const struct link_map *l;
	struct obj o;

	for (i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			bias = (uintptr_t)ph - ph[i].p_vaddr;
	for (i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(bias + ph[i].p_vaddr);
	for (; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_DEBUG)
			r = (const struct r_debug *)d->d_un.d_ptr;
	if (!r || !r->r_map)
		return 0;
	for (l = r->r_map; l; l = l->l_next) {
		if (l->l_ld == _DYNAMIC) {
			w->past_self = 1;
			continue;
		}
		if (l->l_ld && obj_open(l->l_addr, l->l_ld, &o) == 0 && visit_obj(w, &o))
			break;
	}
	return 1;
}

/* Walks under way in this process: the count in the low half, the pid of
 * the process they run in in the high half. A fork child finds a count
 * left by a thread that did not come along, under another pid. On the
 * page the loader writes at every exec (a shell's one walk writes no page
 * more); one getpid a walk (a process makes one to three). */
static uint64_t walks SA_START_DATA;

static void walk(struct walk *w)
{
	uint64_t me = (uint64_t)(uint32_t)sa_syscall3_raw(SYS_getpid, 0, 0, 0), cur, next;

	cur = __atomic_load_n(&walks, __ATOMIC_ACQUIRE);
	if ((uint32_t)cur && cur >> 32 != me && walk_unlocked(w))
		return;   /* forked in the middle of a walk */
	do
		next = (uint32_t)cur && cur >> 32 == me ? cur + 1 : me << 32 | 1;
	while (!__atomic_compare_exchange_n(&walks, &cur, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	dl_iterate_phdr(visit, w);
	__atomic_sub_fetch(&walks, 1, __ATOMIC_RELEASE);
}

static void resolve(uint64_t want, unsigned extras)
{
	int saved = errno;
	struct walk w = { 1, 0, 0, 1, NULL, NULL, want, extras };

	walk(&w);
	/* Loaded last (by dlopen, after libc: an attach), where the only
	 * objects after ours are our own dependencies, which define none of
	 * the names: what RTLD_NEXT would have found is in an object before
	 * ours. Not when an object after ours had some: a name missing there
	 * is missing from libc (the fallbacks below), and an earlier
	 * object's definition could be another preload's wrapper, which
	 * would call back into ours. */
	if (w.missing && !w.after) {
		w.after_self = 0;
		walk(&w);
	}
	if (extras)
		__atomic_store_n(&extras_done, 1, __ATOMIC_RELEASE);
	if (!sa_real.close_range)
		sa_real.close_range = fallback_close_range;
	if (!sa_real.closefrom)
		sa_real.closefrom = fallback_closefrom;
	errno = saved;
}

void sa_real_init(void)
{
	/* The common case after start-up: one predictable load. */
	if (SA_LIKELY(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)))
		return;
	int saved = sa_in_shim;
	sa_in_shim = 1;
	resolve(ALL_SLOTS, (1u << NEXTRA) - 1);
	/* An audited process's later execv, in a vfork child or a handler,
	 * then walks nothing for it. */
	(void)sa_environ();
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
	sa_in_shim = saved;
}

void sa_real_one(unsigned slot)
{
	int saved = sa_in_shim;

	if (slot >= NSLOTS)
		return;
	sa_in_shim = 1;
	resolve((uint64_t)1 << slot | ((BASICS >> slot & 1) ? BASICS : 0), 0);
	sa_in_shim = saved;
}

static char ***environ_at SA_START_DATA;

char **sa_environ(void)
{
	char ***e = __atomic_load_n(&environ_at, __ATOMIC_ACQUIRE);

	if (!e && (e = sa_real_sym("environ")) != NULL)
		__atomic_store_n(&environ_at, e, __ATOMIC_RELEASE);
	return e ? *e : NULL;
}

static int visit_self(struct dl_phdr_info *info, size_t size, void *data)
{
	struct walk *w = data;
	struct obj o;

	(void)size;
	if (!is_self(info) || obj_open(info->dlpi_addr, dynamic_of(info), &o) != 0)
		return 0;
	w->found = lookup(&o, w->one);
	return 1;
}

void *sa_self_sym(const char *name)
{
	struct walk w = { 0, 0, 0, 0, name, NULL, 0, 0 };
	int saved = errno;

	dl_iterate_phdr(visit_self, &w);
	errno = saved;
	return w.found;
}

void *sa_real_sym(const char *name)
{
	struct walk w = { 0, 0, 0, 0, name, NULL, 0, 0 };
	int saved = errno;
	unsigned i;

	if (__atomic_load_n(&extras_done, __ATOMIC_ACQUIRE))
		for (i = 0; i < NEXTRA; i++)
			if (same_name(extra_names[i], name))
				return extra_at[i];
	walk(&w);
	errno = saved;
	return w.found;
}
