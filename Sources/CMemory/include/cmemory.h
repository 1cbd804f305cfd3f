// CMemory: what the allocator offers that the Glibc module leaves out.
#ifndef LOOKOUT_CMEMORY_H
#define LOOKOUT_CMEMORY_H

/// Hands the heap's free pages back to the system (tcmalloc's ReleaseFreeMemory, else glibc's
/// malloc_trim(0)); returns 1 when some memory may have been released. Worth it after a burst
/// of short-lived allocations, such as parsing a config of 10,000 sources.
int lookout_release_free_memory(void);

/// The bytes the program has allocated and not freed (tcmalloc's
/// generic.current_allocated_bytes, else glibc's mallinfo2); -1 when unknown. Resident memory
/// less this is what the allocator keeps free, and code and mapped files.
long long lookout_heap_allocated_bytes(void);

/// The bytes the allocator holds free and has not given back to the system: tcmalloc's page
/// heap, central, transfer and thread caches (glibc: mallinfo2's fordblks); -1 when unknown.
long long lookout_heap_free_bytes(void);

/// 1 when the program runs on tcmalloc (the `lookout` binary), 0 on glibc's malloc (the tests).
int lookout_allocator_is_tcmalloc(void);

#endif
