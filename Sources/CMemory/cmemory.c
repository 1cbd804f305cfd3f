#include "cmemory.h"
#include <malloc.h>

int lookout_release_free_memory(void) {
    return malloc_trim(0);
}
