#include "cmemory.h"
#include <malloc.h>

// tcmalloc's own call (gperftools' malloc_extension_c.h), when `lookout` is linked with it; weak,
// so that a binary without tcmalloc falls back to glibc's trim.
extern void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));
extern int MallocExtension_GetNumericProperty(const char *property, size_t *value) __attribute__((weak));

int lookout_release_free_memory(void) {
    if (MallocExtension_ReleaseFreeMemory) {
        MallocExtension_ReleaseFreeMemory();
        return 1;
    }
    return malloc_trim(0);
}

long long lookout_heap_allocated_bytes(void) {
    if (MallocExtension_GetNumericProperty) {
        size_t value = 0;
        if (MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &value)) return (long long)value;
        return -1;
    }
    struct mallinfo2 info = mallinfo2();
    return (long long)info.uordblks;
}

long long lookout_heap_free_bytes(void) {
    if (MallocExtension_GetNumericProperty) {
        const char *properties[] = {
            "tcmalloc.pageheap_free_bytes", "tcmalloc.central_cache_free_bytes", "tcmalloc.transfer_cache_free_bytes",
            "tcmalloc.thread_cache_free_bytes",
        };
        long long total = 0;
        for (unsigned i = 0; i < sizeof properties / sizeof properties[0]; i++) {
            size_t value = 0;
            if (!MallocExtension_GetNumericProperty(properties[i], &value)) return -1;
            total += (long long)value;
        }
        return total;
    }
    struct mallinfo2 info = mallinfo2();
    return (long long)info.fordblks;
}

int lookout_allocator_is_tcmalloc(void) {
    return MallocExtension_ReleaseFreeMemory != 0;
}
