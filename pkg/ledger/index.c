/* index: the ledger's open-addressing hash index over dense arrays of records. */
#include "ledger_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t gc__mix(uint64_t h, const void *p)
{
        h ^= (uint64_t)(uintptr_t)p;
        h *= 0x9e3779b97f4a7c15ULL;
        return h ^ (h >> 32);
}

/* murmur3's finaliser: linear probing needs well-mixed low bits. */
uint32_t gc__fin(uint64_t h)
{
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        return (uint32_t)h;
}

int64_t gc__floor_bucket(int64_t t, int64_t bucket)
{
        int64_t r = t % bucket;

        return r < 0 ? t - r - bucket : t - r;
}

int gc__index_find(const gc__index *t, uint32_t h, gc__eq_fn eq, const void *ctx, size_t *ret_pos)
{
        size_t mask, p;

        if (!t->nslots) {
                *ret_pos = 0;
                return 0;
        }
        mask = t->nslots - 1;
        for (p = h & mask; t->s[p].ix; p = (p + 1) & mask) {
                if (t->s[p].h == h && eq(ctx, t->s[p].ix - 1)) {
                        *ret_pos = p;
                        return 1;
                }
        }
        *ret_pos = p;
        return 0;
}

static void gc__index_place(gc__slot *s, size_t nslots, gc__slot e)
{
        size_t mask = nslots - 1, p;

        for (p = e.h & mask; s[p].ix; p = (p + 1) & mask)
                ;
        s[p] = e;
}

int gc__index_reserve(gc__index *t, size_t n)
{
        size_t want = t->nslots ? t->nslots : 16;
        gc__slot *s;

        if (n >= UINT32_MAX / 2)
                return -E2BIG;
        while (n * 4 > want * 3)
                want *= 2;
        if (want == t->nslots)
                return 0;
        s = calloc(want, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < t->nslots; i++)
                if (t->s[i].ix)
                        gc__index_place(s, want, t->s[i]);
        free(t->s);
        t->s = s;
        t->nslots = want;
        return 0;
}

void gc__index_fill(gc__index *t, size_t pos, uint32_t h, size_t ix)
{
        t->s[pos].h = h;
        t->s[pos].ix = (uint32_t)(ix + 1);
        t->count++;
}

void gc__index_add_new(gc__index *t, uint32_t h, size_t ix)
{
        gc__slot e = {h, (uint32_t)(ix + 1)};

        gc__index_place(t->s, t->nslots, e);
        t->count++;
}

void gc__index_del(gc__index *t, size_t pos)
{
        size_t mask = t->nslots - 1, j = pos;

        /* Pull later members of the probe run back over the hole so lookups never stop early. */
        for (;;) {
                size_t home;

                j = (j + 1) & mask;
                if (!t->s[j].ix)
                        break;
                home = t->s[j].h & mask;
                if (pos <= j ? (pos < home && home <= j) : (pos < home || home <= j))
                        continue;
                t->s[pos] = t->s[j];
                pos = j;
        }
        t->s[pos].h = 0;
        t->s[pos].ix = 0;
        t->count--;
}

void gc__index_renumber(gc__index *t, uint32_t h, size_t from, size_t to)
{
        size_t mask = t->nslots - 1;

        for (size_t p = h & mask; t->s[p].ix; p = (p + 1) & mask) {
                if (t->s[p].ix == from + 1) {
                        t->s[p].ix = (uint32_t)(to + 1);
                        return;
                }
        }
}

void gc__index_clear(gc__index *t)
{
        if (t->s)
                memset(t->s, 0, t->nslots * sizeof(*t->s));
        t->count = 0;
}

void gc__index_free(gc__index *t)
{
        free(t->s);
        t->s = NULL;
        t->nslots = 0;
        t->count = 0;
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
