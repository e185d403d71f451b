/*
 * base/placement.h: where the library's data goes, and why. One rule for
 * all of it: every page a process writes costs it a fault (a copy-on-write
 * one after a fork: tens of microseconds on a virtual machine), so what is
 * written together lives together, and what an exec or a forked child
 * touches lives on the pages it touches anyway. The linker scripts that
 * give these sections their places are shim/sa_proc.ld (the data) and
 * shim/sa_fork_text.ld (the code and read-only tables a forked child
 * runs); the Makefile splices both into the default script and moves
 * .rodata.s* after .text. A variable
 * gets its place by one of these attributes on its definition; anything
 * else goes to the zero tables. tests/integration/layout.sh checks the
 * result (pages written per exec, per fork, per child), docs/design.md
 * ("Layout and start cost") says how the pieces fit.
 */
#ifndef SA_BASE_PLACEMENT_H
#define SA_BASE_PLACEMENT_H

/* The process page: the small counters and flags that a forked child
 * resets (or writes on its way out) and that every request bumps, kept in
 * one section (sa_proc), page-aligned and at most one page by
 * shim/sa_proc.ld. After a fork every page either process writes is a
 * copy-on-write fault (tens of microseconds on a virtual machine): spread
 * over the zero tables these would cost a fork-per-connection server ~10
 * faults per child; here, one. Zero-initialised variables only. */
/* A .data.* name: the first of the zero tables that shim/sa_proc.ld
 * keeps in the file (zeros on disk), so the data segment is one file
 * mapping with no .bss past its end (one mmap and one vma fewer at every
 * exec). Nothing reads or writes these pages at an exec. */
#define SA_PROC_PAGE __attribute__((section(".data.sa_proc")))
/* The few words every forked child writes, even one that only closes and
 * dups fds before it execs: its pid, its process epoch, its clock traps.
 * shim/sa_proc.ld puts them at the start of the fd table's first page
 * (struct sa_fd_first, state.h), which such a child writes anyway, so that
 * it writes no page of ours but that one. At most SA_FORK_WORDS_BYTES. */
#define SA_FORK_WORDS __attribute__((section(".data.sa_fork_words"), aligned(8)))
#define SA_FORK_WORDS_BYTES 16
/* A small variable every exec or a shell's first wrapped calls touch
 * (the environment copy's state, the real functions, the run state): the
 * library's one .bss, right after .data on the last page of the data
 * segment, which the loader writes anyway (relocations, the PLT's GOT,
 * zeroing this tail), not one page each scattered through the zero
 * tables (a fault each, 10 in a dash script). Zero-initialised only. */
#define SA_START_DATA __attribute__((section(".bss.sa_start")))
/* The first listener's header, in the process page's free tail (a
 * forked child that accepts writes it with the counters). */
#define SA_PROC_TAIL __attribute__((section(".bss.sa_proc_tail")))
/* The fd table's first chunk, right after the fork words: the page a
 * child that closes or dups an fd writes. */
#define SA_FD_FIRST_PAGE __attribute__((section(".data.sa_fd_first"), aligned(8)))
/* A read-only table that no exec and no forked child reads (the option
 * names, the errno names, the histogram's powers): the Makefile's script
 * puts .rodata.s* after .text, so the pages every exec maps and reads at
 * start stay few. */
#define SA_COLD_RODATA(name) __attribute__((section(".rodata.sa_" #name)))

/* Code. A forked child does not inherit the page table entries of our
 * text, so each 64 kB window of it that the child runs is a page fault
 * (filemap_map_pages() maps the cached pages around the faulting one): a
 * fork-per-connection server pays that per connection. SA_FORK_TEXT goes
 * on a function a forked child runs (the fork handler, the wrappers a
 * child calls, what they call: what `valgrind --tool=callgrind
 * --trace-children=yes --zero-before=sa_lifecycle_new_process` shows a
 * socat child run, bench/socat_fork.sh); SA_START_TEXT on what every exec
 * runs of ours (the constructor) and every shell at its end (_exit).
 * shim/sa_fork_text.ld puts both first in .text, right after the headers
 * and .rodata, where one fault reads them with the headers. One section
 * per macro, not one per function: the compiler keeps a function with a
 * section of its own in one piece (no .text.unlikely part elsewhere), and
 * its clones (.constprop, .isra) in the same section. A function missing
 * its attribute costs a fault, never behaviour. */
#define SA_FORK_TEXT __attribute__((section(".text.sa_placed.fork")))
#define SA_START_TEXT __attribute__((section(".text.sa_placed.start")))

#endif
