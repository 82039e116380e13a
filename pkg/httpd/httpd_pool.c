/* httpd: the worker threads that compute deferred answers, off the serving thread. */
#include "httpd_int.h"

#include <errno.h>
#include <stdlib.h>

static void *worker(void *arg)
{
        struct gc_httpd__pool *p = arg;
        struct gc_httpd__job *j;

        pthread_mutex_lock(&p->mu);
        for (;;) {
                while (!p->stop && !p->queue)
                        pthread_cond_wait(&p->cv, &p->mu);
                if (p->stop)
                        break;
                j = p->queue;
                p->queue = j->next;
                if (!p->queue)
                        p->queue_tail = NULL;
                p->n_queued--;
                if (!j->orphan) {
                        pthread_mutex_unlock(&p->mu);
                        j->r = j->fn(j->ud, &j->req, &j->res);
                        pthread_mutex_lock(&p->mu);
                }
                j->next = p->done;
                p->done = j;
                pthread_mutex_unlock(&p->mu);
                p->done_fn(p->done_ud);
                pthread_mutex_lock(&p->mu);
        }
        pthread_mutex_unlock(&p->mu);
        return NULL;
}

int gc_httpd__pool_start(struct gc_httpd__pool *p, int n_threads, int max_queued,
                         void (*done_fn)(void *ud), void *done_ud)
{
        int r;

        if (!p || n_threads < 1 || max_queued < 1 || !done_fn)
                return -EINVAL;
        p->threads = calloc((size_t)n_threads, sizeof(*p->threads));
        if (!p->threads)
                return -ENOMEM;
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->cv, NULL);
        p->max_queued = max_queued;
        p->done_fn = done_fn;
        p->done_ud = done_ud;
        for (p->n_threads = 0; p->n_threads < n_threads; p->n_threads++) {
                r = pthread_create(&p->threads[p->n_threads], NULL, worker, p);
                if (r != 0) {
                        gc_httpd__pool_stop(p);
                        return -r;
                }
        }
        return 0;
}

int gc_httpd__pool_submit(struct gc_httpd__pool *p, struct gc_httpd__job *j)
{
        pthread_mutex_lock(&p->mu);
        if (p->n_queued >= p->max_queued) {
                pthread_mutex_unlock(&p->mu);
                return -EBUSY;
        }
        j->next = NULL;
        j->orphan = false;
        if (p->queue_tail)
                p->queue_tail->next = j;
        else
                p->queue = j;
        p->queue_tail = j;
        p->n_queued++;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
        return 0;
}

void gc_httpd__pool_orphan(struct gc_httpd__pool *p, struct gc_httpd__job *j)
{
        if (!p->threads) { /* stopped: no worker is left to race with */
                j->orphan = true;
                return;
        }
        pthread_mutex_lock(&p->mu);
        j->orphan = true;
        pthread_mutex_unlock(&p->mu);
}

struct gc_httpd__job *gc_httpd__pool_take_done(struct gc_httpd__pool *p)
{
        struct gc_httpd__job *d;

        if (!p->threads)
                return NULL;
        pthread_mutex_lock(&p->mu);
        d = p->done;
        p->done = NULL;
        pthread_mutex_unlock(&p->mu);
        return d;
}

struct gc_httpd__job *gc_httpd__pool_stop(struct gc_httpd__pool *p)
{
        struct gc_httpd__job *left;

        if (!p || !p->threads)
                return NULL;
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        free(p->threads);
        p->threads = NULL;
        if (p->queue_tail) {
                p->queue_tail->next = p->done;
                left = p->queue;
        } else {
                left = p->done;
        }
        p->queue = p->queue_tail = p->done = NULL;
        p->n_queued = 0;
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        return left;
}
