#include "csystem.h"
#include <malloc.h>
#include <sys/prctl.h>

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

int lookout_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}
