/*
 * scripttext.c - a batch script read up to Slurm's own bound and compacted
 * for advisord's reader (issue 27; the rules are in scripttext.h).
 *
 * It follows Slurm 22.05 (SchedMD/slurm, tag slurm-22-05-8-1): sbatch
 * reads the whole script (src/sbatch/sbatch.c, _get_script_buffer) and
 * slurmctld refuses one longer than max_script_size
 * (src/slurmctld/job_mgr.c, _test_job_desc_fields: 4 MiB unless
 * SchedulerParameters says "max_script_size=N", found with xstrcasestr and
 * read with atoi; src/common/read_config.c refuses more than 512 MB);
 * slurmd writes what it got as the batch step's script
 * (src/slurmd/slurmstepd/mgr.c, _make_batch_script).  The directives kept
 * are those sbatch reads: #SBATCH and #SLURM at the start of a line
 * (src/sbatch/opt.c, _opt_batch_script), #PBS and #BSUB
 * (src/sbatch/xlate.c).
 *
 * The file is read in chunks into one buffer compacted in place, line by
 * line, as it fills (a shipped line is never longer than the line it comes
 * from): the buffer holds the text so far and the line being read, so a
 * 4 MiB script of comments is read through 64 KiB.  One function handles a
 * line (scripttext_line), whether the script comes from a file or from
 * memory, so the text depends on the script's bytes only, not on how the
 * reads split them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scripttext.h"
#include "util.h"

#define SCRIPTTEXT_FIRST 4096           /* the smallest buffer */
#define SCRIPTTEXT_CHUNK (64 * 1024)    /* the largest first one: under glibc's mmap threshold */
#define SCRIPTTEXT_DELIM_MAX 64

/* The compaction's state from line to line. */
struct scripttext_pass {
	char *out;                    /* the text (in place: the buffer read into) */
	size_t len;                   /* bytes of text */
	size_t done;                  /* bytes of script consumed, whole lines */
	bool continued;               /* the last kept line ends in an escaping backslash */
	bool full;                    /* a line did not fit: the text ends before it */
	size_t delim_len;             /* a here-document word that starts with '#', or 0 */
	char delim[SCRIPTTEXT_DELIM_MAX];
};

size_t scripttext_limit(const char *sched_params)
{
	static const char key[] = "max_script_size=";
	const char *p = sched_params ? strcasestr(sched_params, key) : NULL;
	char *end;
	long long v;

	if (!p)
		return SCRIPTTEXT_SLURM_DEFAULT;
	p += sizeof(key) - 1;
	v = strtoll(p, &end, 10);
	if (end == p || v <= 0)
		return SCRIPTTEXT_SLURM_DEFAULT;
	return (unsigned long long)v > SCRIPTTEXT_SLURM_MAX ? SCRIPTTEXT_SLURM_MAX : (size_t)v;
}

static bool scripttext_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether a line (n bytes) ends in a backslash that escapes its newline. */
static bool scripttext_escapes_newline(const char *line, size_t n)
{
	size_t k = 0;

	while (k < n && line[n - 1 - k] == '\\')
		k++;
	return k % 2 == 1;
}

/*
 * Remembers the word of a here-document a kept line opens ("<<#END",
 * "<<- '#END'") when it starts with '#': the line that ends that
 * here-document reads as a comment and must stay.  The last such word
 * counts; a word longer than SCRIPTTEXT_DELIM_MAX is not remembered.
 */
static void scripttext_heredocs(struct scripttext_pass *ps, const char *line, size_t n)
{
	const char *p = line, *end = line + n;

	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		char word[SCRIPTTEXT_DELIM_MAX], quote = 0;
		size_t w = 0, at = 0;
		bool fits = true;

		if (end - p < 3 || p[1] != '<' || p[2] == '<') {
			p += p + 1 < end && p[1] == '<' ? 2 : 1;   /* "<<<" is a here-string */
			while (p < end && *p == '<')
				p++;
			continue;
		}
		p += 2;
		if (p < end && *p == '-')
			p++;
		while (p < end && scripttext_blank(*p))
			p++;
		for (; p < end; p++) {
			char c = *p;

			if (quote && c == quote) {
				quote = 0;
				continue;
			}
			if (!quote && (c == '\'' || c == '"')) {
				quote = c;
				continue;
			}
			if (!quote && c == '\\' && p + 1 < end)
				c = *++p;
			else if (!quote && (scripttext_blank(c) || strchr(";&|<>()", c)))
				break;
			if (w < sizeof(word))
				word[w++] = c;
			else
				fits = false;
		}
		while (at < w && scripttext_blank(word[at]))
			at++;
		if (fits && at < w && word[at] == '#') {
			memcpy(ps->delim, word, w);
			ps->delim_len = w;
		}
	}
}

/* Whether a comment line (n bytes, its '#' at at) is shipped as it is. */
static bool scripttext_keep_comment(const struct scripttext_pass *ps, const char *line, size_t n,
				    size_t at)
{
	static const struct {
		const char *word;
		size_t len;
	} kept[] = { { "#!", 2 }, { "#SBATCH", 7 }, { "#SLURM", 6 }, { "#PBS", 4 }, { "#BSUB", 5 } };
	size_t i, tabs = 0;

	if (ps->continued)
		return true;
	/* Most comments are prose: one look at the byte after '#' says so. */
	if (n - at > 1 && memchr("!SPB", line[at + 1], 4))
		for (i = 0; i < ADV_ARRAY_SIZE(kept); i++)
			if (n - at >= kept[i].len && memcmp(line + at, kept[i].word, kept[i].len) == 0)
				return true;
	if (!ps->delim_len)
		return false;
	/* The end of a here-document; "<<-" strips its leading tabs. */
	while (tabs < n && line[tabs] == '\t')
		tabs++;
	return (n == ps->delim_len && memcmp(line, ps->delim, n) == 0) ||
	       (n - tabs == ps->delim_len && memcmp(line + tabs, ps->delim, n - tabs) == 0);
}

/*
 * Appends one whole line of the script (n bytes; nl: a newline ends it) to
 * the text, as it is or empty.  false when it does not fit: the text is
 * full and ends before it.
 */
static bool scripttext_line(struct scripttext_pass *ps, const char *line, size_t n, bool nl)
{
	size_t at = 0, keep = n;
	bool comment, next;

	while (at < n && scripttext_blank(line[at]))
		at++;
	comment = at < n && line[at] == '#';
	if (at == n || (comment && !scripttext_keep_comment(ps, line, n, at)))
		keep = 0;
	if (ps->len + keep + nl > JOBREAD_MAX_BYTES) {
		ps->full = true;
		return false;
	}
	/* A backslash in a comment continues nothing. */
	next = keep && (!comment || ps->continued) && scripttext_escapes_newline(line, n);
	if (keep && !comment)
		scripttext_heredocs(ps, line, n);
	memmove(ps->out + ps->len, line, keep);
	ps->len += keep;
	if (nl)
		ps->out[ps->len++] = '\n';
	ps->done += n + nl;
	ps->continued = next;
	return true;
}

/* The whole lines of in (n bytes) into the text; returns the bytes consumed. */
static size_t scripttext_lines(struct scripttext_pass *ps, const char *in, size_t n)
{
	size_t off = 0;

	while (off < n) {
		const char *nl = memchr(in + off, '\n', n - off);

		if (!nl || !scripttext_line(ps, in + off, (size_t)(nl - in) - off, true))
			break;
		off = (size_t)(nl - in) + 1;
	}
	return off;
}

/* Whether the line begun at p (n bytes so far) is kept whatever follows. */
static bool scripttext_kept_anyway(const struct scripttext_pass *ps, const char *p, size_t n)
{
	size_t at = 0;

	while (at < n && scripttext_blank(p[at]))
		at++;
	return ps->continued || (at < n && p[at] != '#');
}

static void scripttext_finish(struct scripttext *st, struct scripttext_pass *ps, size_t size,
			      enum jobread_cut cut)
{
	ps->out[ps->len] = '\0';
	st->text = ps->out;
	st->len = ps->len;
	st->size = size;
	st->read = ps->done;
	st->cut = cut;
}

int scripttext_set(struct scripttext *st, const char *script, size_t len)
{
	struct scripttext_pass ps;
	size_t off;

	memset(st, 0, sizeof(*st));
	memset(&ps, 0, sizeof(ps));
	ps.out = malloc((len < JOBREAD_MAX_BYTES ? len : JOBREAD_MAX_BYTES) + 1);
	if (!ps.out)
		return -1;
	off = scripttext_lines(&ps, script, len);
	if (!ps.full && off < len)
		scripttext_line(&ps, script + off, len - off, false);
	scripttext_finish(st, &ps, len, ps.full ? JOBREAD_CUT_SHIP : JOBREAD_CUT_NONE);
	return 0;
}

/* The first buffer: the file's size and a byte to see its end, within bounds. */
static size_t scripttext_first_cap(size_t fsize)
{
	if (fsize < SCRIPTTEXT_FIRST)
		return SCRIPTTEXT_FIRST;
	return fsize < SCRIPTTEXT_CHUNK ? fsize + 1 : SCRIPTTEXT_CHUNK;
}

int scripttext_read(struct scripttext *st, const char *path, unsigned flags, size_t limit,
		    int timeout_ms)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
			    (flags & SCRIPTTEXT_SPOOL ? O_NOFOLLOW : 0));
	long long deadline = timeout_ms > 0 ? adv_now_ms() + timeout_ms : 0;
	enum jobread_cut cut = JOBREAD_CUT_NONE;
	struct scripttext_pass ps;
	size_t cap, pend = 0, total = 0, fsize = 0;
	bool eof = false;
	struct stat sb;
	int err;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return -1;
	if (limit > SCRIPTTEXT_SLURM_MAX)
		limit = SCRIPTTEXT_SLURM_MAX;
	if (fstat(fd, &sb) != 0)
		err = errno;
	else
		err = !S_ISREG(sb.st_mode) && (flags & SCRIPTTEXT_SPOOL) ? EINVAL : 0;
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	if (S_ISREG(sb.st_mode) && sb.st_size > 0)
		fsize = (uint64_t)sb.st_size > SIZE_MAX / 4 ? SIZE_MAX / 4 : (size_t)sb.st_size;
	memset(&ps, 0, sizeof(ps));
	cap = scripttext_first_cap(fsize);
	ps.out = malloc(cap + 1);
	if (!ps.out) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	while (total <= limit) {
		size_t used = ps.len + pend, want, avail, took;
		char *in = ps.out + ps.len;
		ssize_t n;

		/* Out of time, with more to read (a file read to its size only
		 * looks for its end). */
		if (deadline && total > 0 && (!fsize || total < fsize) && adv_now_ms() >= deadline) {
			cut = JOBREAD_CUT_TIME;
			break;
		}
		/* Room to read: grow when none is left, or little while more is
		 * to come (a regular file read to its size only looks for its end). */
		if (used == cap || (cap - used < SCRIPTTEXT_FIRST && (!fsize || total < fsize))) {
			char *nbuf = realloc(ps.out, cap * 2 + 1);

			if (!nbuf) {
				err = ENOMEM;
				goto fail;
			}
			ps.out = nbuf;
			cap *= 2;
			in = ps.out + ps.len;
		}
		want = cap - used < limit + 1 - total ? cap - used : limit + 1 - total;
		n = read(fd, ps.out + used, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			err = errno;
			goto fail;
		}
		if (n <= 0) {   /* the end, or all a FIFO has now */
			eof = true;
			break;
		}
		total += (size_t)n;
		/* The byte past the limit only says the script is over it. */
		avail = pend + (size_t)n - (total > limit ? total - limit : 0);
		took = scripttext_lines(&ps, in, avail);
		if (ps.full)
			break;
		pend = avail - took;
		memmove(ps.out + ps.len, in + took, pend);
		/* A line that stays and is already too long: the text is full. */
		if (ps.len + pend > JOBREAD_MAX_BYTES && scripttext_kept_anyway(&ps, ps.out + ps.len, pend)) {
			ps.full = true;
			break;
		}
	}
	close(fd);
	if (eof && pend)
		scripttext_line(&ps, ps.out + ps.len, pend, false);
	if (total > fsize)
		fsize = total;
	if (fsize > limit)
		cut = JOBREAD_CUT_LIMIT;
	else if (ps.full)
		cut = JOBREAD_CUT_SHIP;
	scripttext_finish(st, &ps, fsize, cut);
	return 0;
fail:
	close(fd);
	free(ps.out);
	errno = err;
	return -1;
}

void scripttext_free(struct scripttext *st)
{
	if (!st)
		return;
	free(st->text);
	memset(st, 0, sizeof(*st));
}
