/*
 * jobship.c - ships a job's own text to advisord's job reader (issue 11):
 * the batch script or the command, the submission environment without its
 * secrets, the submit directory, and, round after round, the files the
 * reader asks for (CheckResponse.need_files), read here as the user.
 *
 * The daemon never opens a user's file: sbatch and srun run as the user,
 * so the client reads what the user can read, as sbatch itself reads the
 * batch script (Slurm's src/sbatch/sbatch.c, _get_script_buffer: the
 * script is read by the client and sent with the job).  Everything is
 * bounded by the reader's own limits (common/jobread/jobread.h):
 * JOBREAD_MAX_BYTES of content in all, script included, and
 * JOBREAD_MAX_FILES files.  A FIFO or device named by a hostile script
 * never blocks (O_NONBLOCK, regular files only) and a file is read up to
 * the size fstat() gave, so /proc files come back empty.  The script
 * comes read and compacted by scripttext.c (issue 27), with how much of
 * it the text stands for (JobText.script_size, script_read, script_cut).
 *
 * Allocation-light, for the plugin that runs in every sbatch and srun:
 * one malloc for the state (well under glibc's mmap threshold) and one per
 * file read; the script, argv and environment strings are borrowed.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobship.h"
#include "util.h"

/* Environment bounds: a huge variable (LS_COLORS, an exported bash
 * function) says nothing about the workload. */
#define JOBSHIP_ENV_ENTRY_MAX 4096
#define JOBSHIP_ENV_MAX (64 * 1024)
#define JOBSHIP_ENV_COUNT_MAX 1024
#define JOBSHIP_ARGV_MAX 4096

struct jobship {
	Advisor__JobText msg;
	size_t bytes;                 /* content shipped, script included */
	char script_name[JOBREAD_PATH_MAX];
	char cwd[JOBREAD_PATH_MAX];
	Advisor__JobFile files[JOBREAD_MAX_FILES];
	Advisor__JobFile *file_ptrs[JOBREAD_MAX_FILES];
	char paths[JOBREAD_MAX_FILES][JOBREAD_PATH_MAX];
	/* argv and env pointer arrays follow the struct (one allocation). */
	char *ptrs[];
};

/* Case-insensitive: does word w (n bytes) contain needle (upper case)? */
static bool jobship_word_has(const char *w, size_t n, const char *needle)
{
	size_t k = strlen(needle), i, j;

	for (i = 0; i + k <= n; i++) {
		for (j = 0; j < k && toupper((unsigned char)w[i + j]) == needle[j]; j++)
			;
		if (j == k)
			return true;
	}
	return false;
}

static bool jobship_word_ends(const char *w, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && jobship_word_has(w + n - k, k, suffix);
}

static bool jobship_word_is(const char *w, size_t n, const char *word)
{
	return n == strlen(word) && jobship_word_has(w, n, word);
}

bool jobship_env_secret(const char *env)
{
	static const char *const contains[] = {
		"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE", "COOKIE",
	};
	size_t len = strcspn(env, "="), start = 0;

	while (start < len) {
		const char *w = env + start;
		size_t n = strcspn(w, "_=");
		size_t i;

		if (n > len - start)
			n = len - start;
		for (i = 0; i < ADV_ARRAY_SIZE(contains); i++)
			if (jobship_word_has(w, n, contains[i]))
				return true;
		if (jobship_word_ends(w, n, "TOKEN") || jobship_word_ends(w, n, "KEY") ||
		    jobship_word_ends(w, n, "KEYS") || jobship_word_is(w, n, "PASS") ||
		    jobship_word_is(w, n, "AUTH"))
			return true;
		/* MYSQL_PWD is a password; PWD itself is the directory. */
		if (start > 0 && jobship_word_is(w, n, "PWD"))
			return true;
		start += n + 1;
	}
	return false;
}

/* Whether an environment entry is shipped. */
static bool jobship_env_keep(const char *e)
{
	size_t n = strlen(e);

	if (n > JOBSHIP_ENV_ENTRY_MAX || !strchr(e, '=') || e[0] == '=')
		return false;
	if (strncmp(e, "BASH_FUNC_", 10) == 0)
		return false;
	return !jobship_env_secret(e);
}

struct jobship *jobship_new(enum jobread_tool tool, const char *script_name,
			    const struct scripttext *script, int argc, char *const argv[],
			    char *const env[], const char *cwd, int ntasks, int ntasks_per_node)
{
	struct jobship *js;
	size_t n_env = 0, n_argv, env_bytes = 0, i;

	if (argc < 0 || !argv)
		argc = 0;
	n_argv = (size_t)argc > JOBSHIP_ARGV_MAX ? JOBSHIP_ARGV_MAX : (size_t)argc;
	for (i = 0; env && env[i] && n_env < JOBSHIP_ENV_COUNT_MAX; i++)
		n_env++;
	js = malloc(sizeof(*js) + (n_argv + n_env + 1) * sizeof(char *));
	if (!js)
		return NULL;
	advisor__job_text__init(&js->msg);
	js->msg.has_tool = 1;
	js->msg.tool = (int32_t)tool;
	adv_strlcpy(js->script_name, script_name ? script_name : "", sizeof(js->script_name));
	if (js->script_name[0])
		js->msg.script_name = js->script_name;
	js->bytes = 0;
	if (script && script->text) {
		js->bytes = script->len > JOBREAD_MAX_BYTES ? JOBREAD_MAX_BYTES : script->len;
		js->msg.has_script = 1;
		js->msg.script.data = (uint8_t *)script->text;
		js->msg.script.len = js->bytes;
		js->msg.has_script_size = 1;
		js->msg.script_size = script->size;
		js->msg.has_script_read = 1;
		js->msg.script_read = script->read;
		if (script->cut != JOBREAD_CUT_NONE) {
			js->msg.has_script_cut = 1;
			js->msg.script_cut = (int32_t)script->cut;
		}
	}
	for (i = 0; i < n_argv; i++)
		js->ptrs[i] = argv[i];
	js->msg.n_argv = n_argv;
	js->msg.argv = n_argv ? js->ptrs : NULL;
	js->msg.env = js->ptrs + n_argv;
	for (i = 0; i < n_env; i++) {
		size_t n;

		if (!jobship_env_keep(env[i]))
			continue;
		n = strlen(env[i]);
		if (env_bytes + n > JOBSHIP_ENV_MAX)
			continue;
		env_bytes += n;
		js->msg.env[js->msg.n_env++] = env[i];
	}
	if (!js->msg.n_env)
		js->msg.env = NULL;
	if (cwd && cwd[0]) {
		adv_strlcpy(js->cwd, cwd, sizeof(js->cwd));
		js->msg.cwd = js->cwd;
	}
	if (ntasks > 0) {
		js->msg.has_ntasks = 1;
		js->msg.ntasks = ntasks;
	}
	if (ntasks_per_node > 0) {
		js->msg.has_ntasks_per_node = 1;
		js->msg.ntasks_per_node = ntasks_per_node;
	}
	js->msg.n_files = 0;
	js->msg.files = js->file_ptrs;
	return js;
}

void jobship_free(struct jobship *js)
{
	size_t i;

	if (!js)
		return;
	for (i = 0; i < js->msg.n_files; i++)
		free(js->files[i].content.data);
	free(js);
}

Advisor__JobText *jobship_text(struct jobship *js, bool final)
{
	js->msg.has_final = final;
	js->msg.final = final;
	return &js->msg;
}

size_t jobship_bytes(const struct jobship *js)
{
	return js->bytes;
}

/* Paths never read: kernel interfaces, not configuration. */
static bool jobship_path_refused(const char *p)
{
	static const char *const dirs[] = { "/proc", "/sys", "/dev" };
	size_t i;

	for (i = 0; i < ADV_ARRAY_SIZE(dirs); i++) {
		size_t n = strlen(dirs[i]);

		if (strncmp(p, dirs[i], n) == 0 && (p[n] == '/' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* Reads one file into f (path already set); returns -1 only when out of memory. */
static int jobship_read(struct jobship *js, Advisor__JobFile *f)
{
	size_t budget = JOBREAD_MAX_BYTES > js->bytes ? JOBREAD_MAX_BYTES - js->bytes : 0;
	size_t size, got = 0;
	struct stat st;
	uint8_t *buf;
	int fd;

	f->has_status = 1;
	f->status = 2;
	if (f->path[0] != '/' || jobship_path_refused(f->path))
		return 0;
	fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			f->status = 1;
		return 0;
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		f->has_is_dir = 1;
		f->is_dir = 1;
		f->status = 0;
		return 0;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > budget) {
		close(fd);
		return 0;
	}
	size = (size_t)st.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return -1;
	}
	/* Up to the size fstat() gave: a file that grows meanwhile is cut,
	 * the budget holds, and /proc files (size 0) come back empty. */
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			close(fd);
			return 0;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	f->status = 0;
	f->has_content = 1;
	f->content.data = buf;
	f->content.len = got;
	js->bytes += got;
	return 0;
}

static bool jobship_has(const struct jobship *js, const char *path)
{
	size_t i;

	for (i = 0; i < js->msg.n_files; i++)
		if (strcmp(js->paths[i], path) == 0)
			return true;
	return false;
}

int jobship_fetch(struct jobship *js, char *const paths[], size_t n)
{
	size_t i;

	for (i = 0; i < n && js->msg.n_files < JOBREAD_MAX_FILES; i++) {
		size_t k = js->msg.n_files;
		Advisor__JobFile *f = &js->files[k];

		if (!paths[i] || !paths[i][0] || strlen(paths[i]) >= JOBREAD_PATH_MAX ||
		    jobship_has(js, paths[i]))
			continue;
		advisor__job_file__init(f);
		adv_strlcpy(js->paths[k], paths[i], sizeof(js->paths[k]));
		f->path = js->paths[k];
		js->file_ptrs[k] = f;
		js->msg.n_files = k + 1;
		if (jobship_read(js, f) != 0)
			return -1;
	}
	return 0;
}
