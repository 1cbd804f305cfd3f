#include "cmemory.h"
#include <malloc.h>

// tcmalloc's own call (gperftools' malloc_extension_c.h), when `lookout` is linked with it; weak,
// so that a binary without tcmalloc falls back to glibc's trim.
extern void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));

int lookout_release_free_memory(void) {
    if (MallocExtension_ReleaseFreeMemory) {
        MallocExtension_ReleaseFreeMemory();
        return 1;
    }
    return malloc_trim(0);
}
