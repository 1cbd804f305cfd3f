// CMemory: what the allocator offers that the Glibc module leaves out.
#ifndef LOOKOUT_CMEMORY_H
#define LOOKOUT_CMEMORY_H

/// Hands the heap's free pages back to the system (tcmalloc's ReleaseFreeMemory, else glibc's
/// malloc_trim(0)); returns 1 when some memory may have been released. Worth it after a burst
/// of short-lived allocations, such as parsing a config of 10,000 sources.
int lookout_release_free_memory(void);

#endif
