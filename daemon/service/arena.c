/*
 * arena.c - bump allocator for per-request protobuf answers (see arena.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define ARENA_CHUNK (16 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void arena_init(struct arena *a)
{
	a->head = NULL;
}

static struct arena_chunk *chunk_new(size_t size)
{
	struct arena_chunk *c = malloc(sizeof(*c) + size);

	if (!c)
		return NULL;
	c->next = NULL;
	c->size = size;
	c->used = 0;
	return c;
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->head;
	size_t need = (size + 15) & ~(size_t)15;
	void *p;

	if (need < size)
		return NULL;
	if (!c || c->size - c->used < need) {
		struct arena_chunk *n = chunk_new(need > ARENA_CHUNK ? need : ARENA_CHUNK);

		if (!n)
			return NULL;
		/* Keep the first (reused) chunk at the tail of the list. */
		n->next = c;
		a->head = n;
		c = n;
	}
	p = c->data + c->used;
	c->used += need;
	memset(p, 0, size);
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s);
	p = arena_alloc(a, n + 1);
	if (p)
		memcpy(p, s, n + 1);
	return p;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/*
 * A request that needed several chunks (a script check: the reader's
 * output alone is 160 KiB) leaves one chunk of their total size, up to
 * ARENA_KEEP, for the next: otherwise every check mallocs and frees those
 * sizes again, and glibc hands the pages back and faults them in anew
 * (a tenth of the daemon's time per check under job_submit's serial load,
 * issue 31).  A larger one is freed down to the first chunk.
 */
#define ARENA_KEEP (1024 * 1024)

void arena_reset(struct arena *a)
{
	struct arena_chunk *c = a->head;
	size_t total = 0;

	if (!c)
		return;
	if (!c->next) {
		c->used = 0;
		return;
	}
	for (struct arena_chunk *k = c; k; k = k->next)
		total += k->size;
	while (c->next) {
		struct arena_chunk *n = c->next;

		free(c);
		c = n;
	}
	c->used = 0;
	a->head = c;
	if (total <= ARENA_KEEP && total > c->size) {
		struct arena_chunk *big = chunk_new(total);

		if (big) {
			free(c);
			a->head = big;
		}
	}
}

void arena_destroy(struct arena *a)
{
	struct arena_chunk *c = a->head;

	while (c) {
		struct arena_chunk *n = c->next;

		free(c);
		c = n;
	}
	a->head = NULL;
}
