/*
 * test_scripttext.c - a batch script read up to Slurm's bound and compacted
 * for the reader (common/wire/scripttext.c, issue 27): the same bytes give
 * the same text however they are read, lines keep their numbers, #! and
 * Slurm's directives stay, comments (here-documents' too) cost a byte a
 * line, and a text that cannot hold the whole script says how much of it
 * it stands for and why.  Real files in a scratch directory.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"
#include "util.h"
#include "wire/scripttext.h"

static size_t count_lines(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

/* Line no (1-based) of s, without its newline, in buf. */
static const char *line_at(const char *s, int no, char *buf, size_t len)
{
	for (int i = 1; i < no && s; i++) {
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	assert_non_null(s);
	adv_snprintf(buf, len, "%.*s", (int)strcspn(s, "\n"), s);
	return buf;
}

/* The text of script through memory and through a file must be the same bytes. */
static void same_both_ways(const char *name, const char *script, size_t len,
			   struct scripttext *mem)
{
	struct scripttext file;
	char path[PATH_MAX];

	assert_int_equal(scripttext_set(mem, script, len), 0);
	scratch_write(name, script, len);
	scratch_path(path, sizeof(path), name);
	assert_int_equal(scripttext_read(&file, path, 0, SCRIPTTEXT_SLURM_DEFAULT, 0), 0);
	assert_int_equal(file.len, mem->len);
	assert_memory_equal(file.text, mem->text, mem->len);
	assert_int_equal(file.size, mem->size);
	assert_int_equal(file.read, mem->read);
	assert_int_equal(file.cut, mem->cut);
	assert_int_equal(mem->text[mem->len], '\0');
	scripttext_free(&file);
}

static void test_limit(void **state)
{
	(void)state;
	assert_int_equal(scripttext_limit(NULL), 4194304);
	assert_int_equal(scripttext_limit(""), 4194304);
	assert_int_equal(scripttext_limit("bf_continue,max_script_size=1048576"), 1048576);
	/* slurmctld finds it in any case (xstrcasestr) and reads a number (atoi). */
	assert_int_equal(scripttext_limit("MAX_SCRIPT_SIZE=2000000,defer"), 2000000);
	assert_int_equal(scripttext_limit("max_script_size=8388608x"), 8388608);
	assert_int_equal(scripttext_limit("max_script_size=abc"), SCRIPTTEXT_SLURM_DEFAULT);
	assert_int_equal(scripttext_limit("max_script_size=0"), SCRIPTTEXT_SLURM_DEFAULT);
	assert_int_equal(scripttext_limit("max_script_size=99999999999999"), SCRIPTTEXT_SLURM_MAX);
}

static void test_compaction(void **state)
{
	static const char script[] =
		"#!/bin/bash\n"                               /* 1 kept */
		"# a Llama 3 70B job\n"                       /* 2 empty */
		"#SBATCH -N 4   # four nodes\n"               /* 3 kept */
		"#SBATCH --gres=gpu:h100:8\n"                 /* 4 kept */
		"   \t \n"                                    /* 5 empty */
		"#SLURM --time=1:00:00\n"                     /* 6 kept */
		"#PBS -l nodes=4\n"                           /* 7 kept */
		"#BSUB -n 32\n"                               /* 8 kept */
		"#sbatch -N 8 (lower case: a comment)\n"      /* 9 empty */
		"  # indented comment\n"                      /* 10 empty */
		"TP=3   # typo\n"                             /* 11 kept, comment and all */
		"srun torchrun pretrain_gpt.py \\\n"          /* 12 kept */
		"  --tensor-model-parallel-size $TP\n"        /* 13 kept */
		"# the end";                                  /* 14 empty, no newline */
	struct scripttext st;

	(void)state;
	same_both_ways("compaction.sbatch", script, strlen(script), &st);
	assert_int_equal(st.cut, JOBREAD_CUT_NONE);
	assert_int_equal(st.size, strlen(script));
	assert_int_equal(st.read, strlen(script));
	/* Line numbers stay: as many newlines. */
	assert_int_equal(count_lines(st.text, st.len), count_lines(script, strlen(script)));
	assert_string_equal(st.text,
			    "#!/bin/bash\n"
			    "\n"
			    "#SBATCH -N 4   # four nodes\n"
			    "#SBATCH --gres=gpu:h100:8\n"
			    "\n"
			    "#SLURM --time=1:00:00\n"
			    "#PBS -l nodes=4\n"
			    "#BSUB -n 32\n"
			    "\n"
			    "\n"
			    "TP=3   # typo\n"
			    "srun torchrun pretrain_gpt.py \\\n"
			    "  --tensor-model-parallel-size $TP\n");
	/* The same bytes again: the same text. */
	{
		struct scripttext again;

		assert_int_equal(scripttext_set(&again, script, strlen(script)), 0);
		assert_int_equal(again.len, st.len);
		assert_memory_equal(again.text, st.text, st.len);
		scripttext_free(&again);
	}
	scripttext_free(&st);
	scripttext_free(&st);   /* emptied: freeing twice is harmless */
}

/*
 * Here-documents: a '#' line in one is data to the shell, and a comment of
 * the Python or YAML it writes, so it goes; "#!" and directive lines stay
 * (a here-document writing another job script), as does the line that ends
 * a here-document whose word starts with '#'.  A '#' line that continues
 * the line before is part of a word and stays too.
 */
static void test_heredoc(void **state)
{
	static const char script[] =
		"#!/bin/bash\n"                                     /* 1 */
		"cat > train.py <<'EOF'\n"                          /* 2 */
		"#!/usr/bin/env python\n"                           /* 3 kept */
		"# tensor parallel 4\n"                             /* 4 empty */
		"import torch  # keep me\n"                         /* 5 kept */
		"EOF\n"                                             /* 6 */
		"cat > inner.sbatch <<-EOF\n"                       /* 7 */
		"\t#SBATCH -N 2\n"                                  /* 8 kept */
		"\t# a note\n"                                      /* 9 empty */
		"\tEOF\n"                                           /* 10 */
		"cat <<'#END' > notes.txt\n"                        /* 11 */
		"# a line of the notes\n"                           /* 12 empty */
		"#END\n"                                            /* 13 kept: ends it */
		"echo a\\\n"                                        /* 14 */
		"#b\n"                                              /* 15 kept: "a#b" */
		"# c \\\n"                                          /* 16 empty */
		"# d\n"                                             /* 17 empty */
		"x=$((1<<2))\n"                                     /* 18 kept */
		"cat <<<#here\n"                                    /* 19 a here-string... */
		"#here\n"                                           /* 20 ...opens nothing: empty */
		"srun python train.py --tensor-model-parallel-size 4\n";   /* 21 */
	struct scripttext st;

	(void)state;
	same_both_ways("heredoc.sbatch", script, strlen(script), &st);
	assert_int_equal(count_lines(st.text, st.len), 21);
	assert_string_equal(st.text,
			    "#!/bin/bash\n"
			    "cat > train.py <<'EOF'\n"
			    "#!/usr/bin/env python\n"
			    "\n"
			    "import torch  # keep me\n"
			    "EOF\n"
			    "cat > inner.sbatch <<-EOF\n"
			    "\t#SBATCH -N 2\n"
			    "\n"
			    "\tEOF\n"
			    "cat <<'#END' > notes.txt\n"
			    "\n"
			    "#END\n"
			    "echo a\\\n"
			    "#b\n"
			    "\n"
			    "\n"
			    "x=$((1<<2))\n"
			    "cat <<<#here\n"
			    "\n"
			    "srun python train.py --tensor-model-parallel-size 4\n");
	scripttext_free(&st);
}

/* The probe of issue 27: 300 KiB of comments before a broken launch line. */
static void test_long_comments(void **state)
{
	static const char head[] = "#!/bin/bash\n#SBATCH -N 4\n#SBATCH --gres=gpu:h100:8\n";
	static const char tail[] = "srun python pretrain_gpt.py --tensor-model-parallel-size 3\n";
	size_t cap = 300 * 1024 + 4096, n = 0, lines = 3;
	char *script = malloc(cap), buf[128];
	struct scripttext st;

	(void)state;
	assert_non_null(script);
	n += adv_snprintf(script + n, cap - n, "%s", head);
	while (n < 300 * 1024) {
		n += adv_snprintf(script + n, cap - n, "# %05zu: notes on the data mix and the "
				  "tokenizer, kept for the record\n", lines);
		lines++;
	}
	n += adv_snprintf(script + n, cap - n, "%s", tail);
	same_both_ways("probe.sbatch", script, n, &st);
	assert_int_equal(st.cut, JOBREAD_CUT_NONE);
	assert_int_equal(st.size, n);
	/* About a byte a line of comment. */
	assert_true(st.len < strlen(head) + lines + strlen(tail));
	assert_int_equal(count_lines(st.text, st.len), lines + 1);
	assert_string_equal(line_at(st.text, (int)lines + 1, buf, sizeof(buf)),
			    "srun python pretrain_gpt.py --tensor-model-parallel-size 3");
	scripttext_free(&st);
	free(script);
}

/*
 * More commands than the reader takes: the text ends after the last whole
 * line that fits, and says how much of the script it stands for.  A line
 * that is already too long stops the read at once.
 */
static void test_cut_ship(void **state)
{
	size_t n = 600 * 1024, k = 0;
	char *script = malloc(n), path[PATH_MAX];
	struct scripttext st, mem;

	(void)state;
	assert_non_null(script);
	while (k + 64 <= n) {
		k += adv_snprintf(script + k, n - k, "LOG_%06zu=${HOME}/logs/run_%06zu       "
				  "     # log dir\n", k / 64, k / 64);
	}
	n = k;
	same_both_ways("ship.sbatch", script, n, &mem);
	assert_int_equal(mem.cut, JOBREAD_CUT_SHIP);
	assert_true(mem.len <= JOBREAD_MAX_BYTES && mem.len > JOBREAD_MAX_BYTES - 64);
	assert_int_equal(mem.text[mem.len - 1], '\n');
	assert_int_equal(mem.read, mem.len);   /* no comment lines: as many bytes */
	assert_int_equal(mem.size, n);
	assert_memory_equal(mem.text, script, mem.len);
	scripttext_free(&mem);

	/* One 400 KiB command line after a short one. */
	memset(script, 'x', n);
	memcpy(script, "#!/bin/sh\nA=", 12);
	script[400 * 1024] = '\n';
	scratch_write("longline.sbatch", script, 400 * 1024 + 1);
	scratch_path(path, sizeof(path), "longline.sbatch");
	assert_int_equal(scripttext_read(&st, path, 0, SCRIPTTEXT_SLURM_DEFAULT, 0), 0);
	assert_int_equal(st.cut, JOBREAD_CUT_SHIP);
	assert_int_equal(st.len, 10);
	assert_int_equal(st.read, 10);
	assert_int_equal(st.size, 400 * 1024 + 1);
	assert_string_equal(st.text, "#!/bin/sh\n");
	scripttext_free(&st);
	free(script);
}

/* A script over Slurm's bound is read up to it; a time bound cuts at a line. */
static void test_cut_limit_time(void **state)
{
	size_t n = 4 * 1024 * 1024, k = 0;
	char *script = malloc(n + 64), path[PATH_MAX];
	struct scripttext st, whole;

	(void)state;
	assert_non_null(script);
	k += adv_snprintf(script, n, "#!/bin/bash\n");
	while (k + 40 <= n)
		k += adv_snprintf(script + k, n - k, "# comment line of forty bytes, padded.\n");
	memset(script + k, '#', n - k);
	script[n - 1] = '\n';
	scratch_write("max.sbatch", script, n);
	scratch_path(path, sizeof(path), "max.sbatch");
	/* Exactly at the limit: whole. */
	assert_int_equal(scripttext_read(&whole, path, 0, n, 0), 0);
	assert_int_equal(whole.cut, JOBREAD_CUT_NONE);
	assert_int_equal(whole.read, n);
	assert_int_equal(count_lines(whole.text, whole.len), count_lines(script, n));
	/* One byte under: over Slurm's bound, read to it. */
	assert_int_equal(scripttext_read(&st, path, 0, n - 1, 0), 0);
	assert_int_equal(st.cut, JOBREAD_CUT_LIMIT);
	assert_int_equal(st.size, n);
	assert_true(st.read < n && st.read >= n - 64);
	scripttext_free(&st);
	/* A millisecond: whole, or cut at a line with what it read so far. */
	assert_int_equal(scripttext_read(&st, path, 0, n, 1), 0);
	if (st.cut == JOBREAD_CUT_TIME) {
		assert_true(st.read < n);
		assert_true(st.len <= whole.len);
		assert_memory_equal(st.text, whole.text, st.len);
		assert_int_equal(script[st.read - 1], '\n');
	} else {
		assert_int_equal(st.cut, JOBREAD_CUT_NONE);
		assert_int_equal(st.len, whole.len);
	}
	scripttext_free(&st);
	scripttext_free(&whole);
	free(script);
}

/* slurmd's spool copy (plugin/remote.c): a regular file, never through a link. */
static void test_spool(void **state)
{
	char p[PATH_MAX], link[PATH_MAX], fifo[PATH_MAX];
	struct scripttext st;

	(void)state;
	scratch_write("slurm_script", "#!/bin/sh\nsrun true\n", 20);
	scratch_path(p, sizeof(p), "slurm_script");
	assert_int_equal(scripttext_read(&st, p, SCRIPTTEXT_SPOOL, SCRIPTTEXT_SLURM_DEFAULT, 300), 0);
	assert_int_equal(st.len, 20);
	assert_string_equal(st.text, "#!/bin/sh\nsrun true\n");
	scripttext_free(&st);
	/* A link planted in its place is not followed. */
	scratch_path(link, sizeof(link), "link_script");
	assert_int_equal(symlink(p, link), 0);
	assert_int_equal(scripttext_read(&st, link, SCRIPTTEXT_SPOOL, SCRIPTTEXT_SLURM_DEFAULT, 0),
			 -1);
	assert_int_equal(errno, ELOOP);
	assert_null(st.text);
	/* The submit side follows it, as sbatch does. */
	assert_int_equal(scripttext_read(&st, link, 0, SCRIPTTEXT_SLURM_DEFAULT, 0), 0);
	assert_int_equal(st.len, 20);
	scripttext_free(&st);
	/* A FIFO with no writer neither blocks nor is read; nor a directory. */
	scratch_path(fifo, sizeof(fifo), "fifo_script");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(scripttext_read(&st, fifo, SCRIPTTEXT_SPOOL, SCRIPTTEXT_SLURM_DEFAULT, 0),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(scripttext_read(&st, fifo, 0, SCRIPTTEXT_SLURM_DEFAULT, 0), 0);
	assert_int_equal(st.len, 0);
	scripttext_free(&st);
	assert_int_equal(scripttext_read(&st, scratch, SCRIPTTEXT_SPOOL, SCRIPTTEXT_SLURM_DEFAULT, 0),
			 -1);
	scratch_path(p, sizeof(p), "missing_script");
	assert_int_equal(scripttext_read(&st, p, 0, SCRIPTTEXT_SLURM_DEFAULT, 0), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_compaction),
		cmocka_unit_test(test_heredoc),
		cmocka_unit_test(test_long_comments),
		cmocka_unit_test(test_cut_ship),
		cmocka_unit_test(test_cut_limit_time),
		cmocka_unit_test(test_spool),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
