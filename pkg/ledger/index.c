/* index: the ledger's small shared helpers (bucket arithmetic, dense arrays); tables are gc_index.
 */
#include "ledger_int.h"

#include <errno.h>
#include <stdlib.h>

int64_t gc__floor_bucket(int64_t t, int64_t bucket)
{
        int64_t r = t % bucket;

        return r < 0 ? t - r - bucket : t - r;
}

int gc__vec_reserve(void **p, size_t *cap, size_t n, size_t size)
{
        size_t c = *cap ? *cap : 16;
        void *q;

        if (n <= *cap)
                return 0;
        while (c < n)
                c *= 2;
        if (c > SIZE_MAX / size)
                return -ENOMEM;
        q = realloc(*p, c * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = c;
        return 0;
}
