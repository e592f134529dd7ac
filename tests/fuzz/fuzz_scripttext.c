/*
 * fuzz_scripttext.c - libFuzzer target for the batch script as the clients
 * read and ship it (common/wire/scripttext.c, issue 27).
 *
 * Input: byte 0 bits 0-3 repeat the rest 2^n times (bounded to 768 KiB, so
 * that texts over the reader's 256 KiB are cut), bit 4 reads the file with
 * a limit of half its size (a script over max_script_size); the rest is
 * the script.  Checked, beyond no crash:
 *  - the text fits JOBREAD_MAX_BYTES, is NUL-terminated and stands for
 *    the first `read` bytes of the script, whole lines (all of it when not
 *    cut); it has as many lines as those bytes, each one empty or the
 *    script's own line;
 *  - the text is the compaction of those bytes alone, and compacting it
 *    again changes nothing;
 *  - the script read from a file (in chunks, as the plugin reads it)
 *    ships the same bytes as from memory.
 */
#include "config.h"   /* _GNU_SOURCE: memfd_create */

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "wire/scripttext.h"

#define FUZZ_SCRIPT_MAX (768 * 1024)

static size_t count_nl(const char *s, size_t n)
{
	size_t k = 0;

	for (const char *p = s; (p = memchr(p, '\n', n - (size_t)(p - s))); p++)
		k++;
	return k;
}

/* Each line of text is empty or the same line of script. */
static void check_lines(const char *text, size_t len, const char *script)
{
	size_t t = 0, s = 0;

	while (t < len) {
		const char *te = memchr(text + t, '\n', len - t);
		const char *se = strchr(script + s, '\n');
		size_t tn = te ? (size_t)(te - text) - t : len - t;
		size_t sn = se ? (size_t)(se - script) - s : strlen(script + s);

		FUZZ_ASSERT(tn == 0 || (tn == sn && memcmp(text + t, script + s, tn) == 0));
		t += tn + 1;
		s += sn + 1;
	}
}

static void check_same(const struct scripttext *a, const struct scripttext *b)
{
	FUZZ_ASSERT(a->len == b->len);
	FUZZ_ASSERT(memcmp(a->text, b->text, a->len) == 0);
	FUZZ_ASSERT(a->read == b->read);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scripttext mem, file, again;
	size_t n, rep, limit;
	char *script, path[64];
	int fd;

	if (size < 1)
		return 0;
	rep = (size_t)1 << (data[0] & 15);
	while (rep > 1 && (size - 1) * rep > FUZZ_SCRIPT_MAX)
		rep /= 2;
	n = (size - 1) * rep;
	script = malloc(n + 1);
	if (!script)
		abort();
	for (size_t i = 0; i < rep; i++)
		memcpy(script + i * (size - 1), data + 1, size - 1);
	script[n] = '\0';

	FUZZ_ASSERT(scripttext_set(&mem, script, n) == 0);
	FUZZ_ASSERT(mem.len <= JOBREAD_MAX_BYTES && mem.text[mem.len] == '\0');
	FUZZ_ASSERT(mem.size == n && mem.read <= n);
	FUZZ_ASSERT((mem.cut == JOBREAD_CUT_NONE) == (mem.read == n));
	FUZZ_ASSERT(mem.cut == JOBREAD_CUT_NONE || mem.cut == JOBREAD_CUT_SHIP);
	FUZZ_ASSERT(mem.read == n || mem.read == 0 || script[mem.read - 1] == '\n');
	FUZZ_ASSERT(count_nl(mem.text, mem.len) == count_nl(script, mem.read));
	/* Lines are compared up to a NUL byte of the script (strchr). */
	if (!memchr(script, '\0', n))
		check_lines(mem.text, mem.len, script);
	/* The text is what those bytes alone give, and a fixed point. */
	FUZZ_ASSERT(scripttext_set(&again, script, mem.read) == 0);
	FUZZ_ASSERT(again.cut == JOBREAD_CUT_NONE);
	check_same(&again, &mem);
	scripttext_free(&again);
	FUZZ_ASSERT(scripttext_set(&again, mem.text, mem.len) == 0);
	FUZZ_ASSERT(again.len == mem.len && memcmp(again.text, mem.text, mem.len) == 0);
	scripttext_free(&again);

	/* From a file, in the plugin's chunks. */
	fd = memfd_create("fuzz_scripttext", MFD_CLOEXEC);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, script, n) == (ssize_t)n);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	limit = data[0] & 16 ? n / 2 : SCRIPTTEXT_SLURM_DEFAULT;
	FUZZ_ASSERT(scripttext_read(&file, path, 0, limit, 0) == 0);
	FUZZ_ASSERT(file.size == n && file.len <= JOBREAD_MAX_BYTES);
	if (limit >= n) {
		FUZZ_ASSERT(file.cut == mem.cut);
		check_same(&file, &mem);
	} else {
		/* Over the limit: the whole lines within it, said so. */
		FUZZ_ASSERT(file.cut == JOBREAD_CUT_LIMIT && file.read <= limit);
		FUZZ_ASSERT(scripttext_set(&again, script, file.read) == 0);
		check_same(&again, &file);
		scripttext_free(&again);
	}
	scripttext_free(&file);
	close(fd);
	scripttext_free(&mem);
	free(script);
	return 0;
}
