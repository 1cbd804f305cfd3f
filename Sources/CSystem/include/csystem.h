// CSystem: what glibc offers that the Glibc module leaves out (or declares only in a variadic
// form, which Swift cannot call).
#ifndef LOOKOUT_CSYSTEM_H
#define LOOKOUT_CSYSTEM_H

/// Hands the heap's free pages back to the system (tcmalloc's ReleaseFreeMemory, else glibc's
/// malloc_trim(0)); returns 1 when some memory may have been released. Worth it after a burst
/// of short-lived allocations, such as parsing a config of 10,000 sources.
int lookout_release_free_memory(void);

/// Names the calling thread (at most 15 bytes are kept), as `top -H` and
/// `/proc/<pid>/task/*/comm` show it: Foundation names threads only on Darwin.
int lookout_name_this_thread(const char *name);

#endif
