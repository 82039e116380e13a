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
        /* Room for n elements is room for element n - 1: util's one growable array. */
        return n == 0 ? 0 : gc_grow(p, cap, n - 1, size, 16, 0);
}
