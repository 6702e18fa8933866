/* A test-process workaround for CPython 3.11/3.12's stack-chunk thrashing (CPython issue
 * gh-142183, fixed in 3.13 and later by caching one chunk per thread).
 *
 * CPython keeps Python frames in 16 KiB "data stack chunks" taken from the object arena
 * allocator (mmap) and returns a chunk (munmap) as soon as it empties.  A loop that
 * calls across a chunk boundary maps and unmaps a chunk on every call.  Under pytest's
 * deep stacks numba's compiler does this about 28,000 times per generated program: about
 * 10% of the differential suite's CPU went to the system calls and page faults.
 *
 * This allocator wraps the interpreter's own: 1 MiB obmalloc arenas go to it unchanged;
 * freed blocks of any other size (the chunks) are kept, up to KEEP of them, and handed
 * out again for the same size.  Every block still comes from the original allocator,
 * so blocks allocated before the switch are freed correctly after it.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_SIZE ((size_t)1 << 20) /* obmalloc's arenas (CPython >= 3.10) */
#define KEEP 8

typedef struct {
    void *ctx;
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr, size_t size);
} arena_allocator;

void PyObject_GetArenaAllocator(arena_allocator *allocator);
void PyObject_SetArenaAllocator(arena_allocator *allocator);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static arena_allocator inner;
static void *kept[KEEP];
static size_t kept_size[KEEP];
static int nkept;
static int64_t reused;

static void *cached_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (size != ARENA_SIZE) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < nkept; i++) {
            if (kept_size[i] == size) {
                void *p = kept[i];
                nkept--;
                kept[i] = kept[nkept];
                kept_size[i] = kept_size[nkept];
                reused++;
                pthread_mutex_unlock(&lock);
                return p;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return inner.alloc(inner.ctx, size);
}

static void cached_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (ptr != NULL && size != ARENA_SIZE) {
        pthread_mutex_lock(&lock);
        if (nkept < KEEP) {
            kept[nkept] = ptr;
            kept_size[nkept] = size;
            nkept++;
            pthread_mutex_unlock(&lock);
            return;
        }
        pthread_mutex_unlock(&lock);
    }
    inner.free(inner.ctx, ptr, size);
}

/* 1: installed now; 0: already installed.  Call with the GIL held. */
int chunk_cache_install(void) {
    arena_allocator current;
    PyObject_GetArenaAllocator(&current);
    if (current.alloc == cached_alloc)
        return 0;
    inner = current;
    arena_allocator mine = {NULL, cached_alloc, cached_free};
    PyObject_SetArenaAllocator(&mine);
    return 1;
}

/* chunks handed out again instead of mapped anew */
int64_t chunk_cache_reused(void) {
    pthread_mutex_lock(&lock);
    int64_t n = reused;
    pthread_mutex_unlock(&lock);
    return n;
}
