/*
 * test_jobreq.c - the submission-time resource parser against a table of
 * real sbatch/salloc/srun command lines, batch scripts and environments.
 *
 * Expected values are what Slurm 22.05 allocates for the same request on
 * the private test cluster (scripts/cluster: 8 GPUs per node), checked
 * there with `scontrol show job` (TRES gres/gpu=, NumNodes=).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <unistd.h>
#include <cmocka.h>

#include "wire/jobreq.h"

struct row {
	const char *what;
	enum jobreq_tool tool;
	const char *cmdline;      /* words separated by single spaces */
	const char *script;       /* NULL: none */
	const char *env;          /* "NAME=VALUE;NAME=VALUE" */
	int gpus, nodes, gpn;
	const char *type;
	const char *partition;
	int llm;                  /* --llm-* options seen */
};

static const struct row rows[] = {
	{ "gres per node x nodes", JOBREQ_SBATCH, "sbatch -N4 --gres=gpu:8 job.sh", NULL, "",
	  32, 4, 8, "", "", 0 },
	{ "gres with type, separate values", JOBREQ_SBATCH, "sbatch -N 2 --gres gpu:h100:8 -p h100 job.sh", NULL, "",
	  16, 2, 8, "h100", "h100", 0 },
	{ "long --nodes=", JOBREQ_SBATCH, "sbatch --nodes=8 --gres=gpu:h100:8 job.sh", NULL, "",
	  64, 8, 8, "h100", "", 0 },
	{ "node range takes min", JOBREQ_SBATCH, "sbatch --nodes=2-4 --gpus-per-node=8 job.sh", NULL, "",
	  16, 2, 8, "", "", 0 },
	{ "--gpus total with nodes", JOBREQ_SBATCH, "sbatch -N2 --gpus=16 job.sh", NULL, "",
	  16, 2, 8, "", "", 0 },
	{ "-G short attached with type", JOBREQ_SBATCH, "sbatch -Gh200:8 -p h200 job.sh", NULL, "",
	  8, 0, 0, "h200", "h200", 0 },
	{ "-G separate, no nodes", JOBREQ_SALLOC, "salloc -G 32", NULL, "",
	  32, 0, 0, "", "", 0 },
	{ "gpus-per-node with type", JOBREQ_SBATCH, "sbatch -N4 --gpus-per-node=h100:8 job.sh", NULL, "",
	  32, 4, 8, "h100", "", 0 },
	{ "gpus-per-task with ntasks", JOBREQ_SBATCH, "sbatch -n 16 --ntasks-per-node=8 --gpus-per-task=1 job.sh", NULL, "",
	  16, 2, 8, "", "", 0 },
	{ "gres list with other gres and prefix", JOBREQ_SBATCH, "sbatch -N2 --gres=shard:2,gres:gpu:a100:4 job.sh", NULL, "",
	  8, 2, 4, "a100", "", 0 },
	{ "gres/ prefix (newer Slurm)", JOBREQ_SBATCH, "sbatch -N1 --gres=gres/gpu:8 job.sh", NULL, "",
	  8, 1, 8, "", "", 0 },
	{ "bare gpu gres is one", JOBREQ_SBATCH, "sbatch --gres=gpu job.sh", NULL, "",
	  1, 1, 1, "", "", 0 },
	/* Issue 20: the whole list, for the strictest of their modes. */
	{ "partition list kept whole", JOBREQ_SBATCH, "sbatch -p h200,h100 --gres=gpu:8 job.sh", NULL, "",
	  8, 1, 8, "", "h200,h100", 0 },
	{ "no GPUs at all", JOBREQ_SBATCH, "sbatch -N2 -n4 --wrap=hostname", NULL, "",
	  0, 2, 0, "", "", 0 },
	{ "script only", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/bash\n#SBATCH -N 4\n#SBATCH --gres=gpu:h100:8\n#SBATCH --partition=h100\nsrun train.py\n", "",
	  32, 4, 8, "h100", "h100", 0 },
	{ "script stops at first command", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/sh\n\n# comment\n#SBATCH -N2 --gpus-per-node=8\necho hi\n#SBATCH -N 64\n", "",
	  16, 2, 8, "", "", 0 },
	{ "script with quotes, comments, CRLF", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/sh\r\n#SBATCH --job-name \"my job\" # trailing comment\r\n#SBATCH -N 3 --gres=gpu:4\r\nrun\r\n", "",
	  12, 3, 4, "", "", 0 },
	{ "command line beats script", JOBREQ_SBATCH, "sbatch -N8 job.sh",
	  "#!/bin/sh\n#SBATCH -N 2\n#SBATCH --gres=gpu:8\n", "",
	  64, 8, 8, "", "", 0 },
	{ "env beats script", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/sh\n#SBATCH -N 2\n#SBATCH -p debug\n#SBATCH --gres=gpu:8\n", "SBATCH_PARTITION=h100",
	  16, 2, 8, "", "h100", 0 },
	{ "command line beats env", JOBREQ_SBATCH, "sbatch -p debug --gres=gpu:8 job.sh", NULL,
	  "SBATCH_PARTITION=h100;SBATCH_GRES=gpu:2",
	  8, 1, 8, "", "debug", 0 },
	{ "env-only GPU request", JOBREQ_SBATCH, "sbatch -N 2 job.sh", NULL, "SBATCH_GPUS_PER_NODE=h100:8",
	  16, 2, 8, "h100", "", 0 },
	{ "salloc env names", JOBREQ_SALLOC, "salloc -N2", NULL, "SALLOC_GRES=gpu:8;SALLOC_PARTITION=h200;SBATCH_PARTITION=no",
	  16, 2, 8, "", "h200", 0 },
	{ "script path after options; script args ignored", JOBREQ_SBATCH, "sbatch -o out.txt -J x job.sh -N 99", NULL, "",
	  0, 0, 0, "", "", 0 },
	{ "llm options counted, both forms", JOBREQ_SBATCH, "sbatch --llm-model=llama3-70b --llm-layout tp8,pp4 -N4 --gres=gpu:8 job.sh", NULL, "",
	  32, 4, 8, "", "", 2 },
	{ "llm options in #SBATCH lines", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/sh\n#SBATCH --llm-model=llama3-8b\n#SBATCH -N1 --gres=gpu:8\n", "",
	  8, 1, 8, "", "", 1 },
	{ "unknown options skipped", JOBREQ_SBATCH, "sbatch --container-image=foo --exclusive --mem=0 -N2 --gres=gpu:8 job.sh", NULL, "",
	  16, 2, 8, "", "", 0 },
	{ "abbreviated long option", JOBREQ_SBATCH, "sbatch --nodes=2 --gpus-per-n=4 --partit=h100 job.sh", NULL, "",
	  8, 2, 4, "", "h100", 0 },
	{ "srun plain", JOBREQ_SRUN, "srun -N4 --gres=gpu:8 -l python train.py -N 1", NULL, "",
	  32, 4, 8, "", "", 0 },
	{ "srun in salloc with -G", JOBREQ_SRUN, "srun python train.py", NULL,
	  "SLURM_JOB_ID=12;SLURM_GPUS=16;SLURM_JOB_NUM_NODES=2;SLURM_NNODES=2;SLURM_JOB_PARTITION=h100",
	  16, 2, 8, "", "h100", 0 },
	{ "srun in batch job uses the allocation", JOBREQ_SRUN, "srun --llm-model=llama3-70b python x.py", NULL,
	  "SLURM_JOB_ID=7;SLURM_JOB_NUM_NODES=4;SLURM_NNODES=4;SLURM_GPUS_ON_NODE=8;SLURM_JOB_PARTITION=debug",
	  32, 4, 8, "", "debug", 1 },
	{ "srun step narrower than the allocation", JOBREQ_SRUN, "srun -N1 --gres=gpu:2 hostname", NULL,
	  "SLURM_JOB_ID=7;SLURM_JOB_NUM_NODES=4;SLURM_NNODES=4;SLURM_GPUS_ON_NODE=8",
	  2, 1, 2, "", "", 0 },
	{ "srun allocation with SLURM_JOB_GPUS list", JOBREQ_SRUN, "srun hostname", NULL,
	  "SLURM_JOB_ID=9;SLURM_JOB_NUM_NODES=1;SLURM_JOB_GPUS=0-3,6",
	  5, 1, 5, "", "", 0 },
	{ "srun -W takes a value (sbatch -W does not)", JOBREQ_SRUN, "srun -W 5 -N2 --gpus-per-node=4 cmd", NULL, "",
	  8, 2, 4, "", "", 0 },
	{ "sbatch --wrap has no script", JOBREQ_SBATCH, "sbatch --wrap true -N1 --gres=gpu:1", NULL, "",
	  1, 1, 1, "", "", 0 },
	/* Node counts as sbatch 22.05.8 reads them (verify_node_count). */
	{ "node count with k suffix", JOBREQ_SBATCH, "sbatch -N 1k --gpus-per-node=8 job.sh", NULL, "",
	  8192, 1024, 8, "", "", 0 },
	{ "node range without minimum is 1", JOBREQ_SBATCH, "sbatch -N -4 --gpus-per-node=8 job.sh", NULL, "",
	  8, 1, 8, "", "", 0 },
	{ "node range 0- is 1", JOBREQ_SBATCH, "sbatch --nodes=0-2 --gpus-per-node=8 job.sh", NULL, "",
	  8, 1, 8, "", "", 0 },
	{ "#SBATCH without a blank before the option", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/sh\n#SBATCH-N 2\n#SBATCH --gres=gpu:8\n", "",
	  16, 2, 8, "", "", 0 },
	{ "another plugin's option with its value in #SBATCH", JOBREQ_SBATCH, "sbatch job.sh",
	  "#!/bin/sh\n#SBATCH --container-image nvcr.io/x -N 2\n#SBATCH --gres=gpu:8\n", "",
	  16, 2, 8, "", "", 0 },
	{ "--mem=224GB and --mem-per-gpu=80gb", JOBREQ_SBATCH, "sbatch --mem=224GB --mem-per-gpu=80gb -N1 --gres=gpu:8 job.sh", NULL, "",
	  8, 1, 8, "", "", 0 },
};

static const char *row_getenv(const char *name, void *arg)
{
	/* Several lookups may be alive at once, as with getenv(3). */
	static char values[16][256];
	static unsigned next;
	char *value = values[next++ % 16];
	const char *env = arg;
	size_t n = strlen(name);

	while (env && *env) {
		const char *end = strchr(env, ';');
		size_t len = end ? (size_t)(end - env) : strlen(env);

		if (len > n && strncmp(env, name, n) == 0 && env[n] == '=') {
			snprintf(value, sizeof(values[0]), "%.*s", (int)(len - n - 1), env + n + 1);
			return value;
		}
		env = end ? end + 1 : NULL;
	}
	return NULL;
}

static int split(const char *s, char *buf, size_t len, char **argv, int max)
{
	int n = 0;

	snprintf(buf, len, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < max - 1;
	     t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	argv[n] = NULL;
	return n;
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		char buf[512], err[256] = "";
		char *argv[64];
		int argc = split(w->cmdline, buf, sizeof(buf), argv, 64);
		struct jobreq r;
		int rc;

		rc = jobreq_build(w->tool, argc, argv, w->script, w->script ? strlen(w->script) : 0,
				  row_getenv, (void *)w->env, &r, err, sizeof(err));
		print_message("row %zu: %s -> gpus %d nodes %d gpn %d type '%s' part '%s' llm %d %s\n",
			      i, w->what, r.gpus, r.nodes, r.gpus_per_node, r.gpu_type, r.partition,
			      r.llm_options, err);
		assert_int_equal(rc, 0);
		assert_int_equal(r.gpus, w->gpus);
		assert_int_equal(r.nodes, w->nodes);
		assert_int_equal(r.gpus_per_node, w->gpn);
		assert_string_equal(r.gpu_type, w->type);
		assert_string_equal(r.partition, w->partition);
		assert_int_equal(r.llm_options, w->llm);
	}
}

static void test_script_path(void **state)
{
	char buf[256], err[128] = "";
	char *argv[16];
	int argc = split("sbatch -N 2 --output=x.out /home/u/train.sbatch --epochs 3", buf, sizeof(buf), argv, 16);
	struct jobreq_opts o;

	(void)state;
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_string_equal(o.script, "/home/u/train.sbatch");
	assert_int_equal(o.nodes, 2);

	argc = split("sbatch -N 2 --wrap hostname", buf, sizeof(buf), argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_string_equal(o.script, "");
	assert_true(o.wrap);
}

/* The host program's getopt state must survive the plugin's parse. */
static void test_getopt_state_restored(void **state)
{
	char buf[128], err[128];
	char *argv[8];
	int argc = split("sbatch -N 2 job.sh", buf, sizeof(buf), argv, 8);
	struct jobreq_opts o;

	(void)state;
	optind = 5;
	opterr = 1;
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_int_equal(optind, 5);
	assert_int_equal(opterr, 1);
}

static void test_bad_values(void **state)
{
	static const char *const bad[] = {
		"sbatch -N abc job.sh",
		"sbatch --gres=gpu:h100:x job.sh",
		"sbatch --gpus=-3 job.sh",
		"sbatch --mem=12Q job.sh",
		"sbatch --ntasks-per-node= job.sh",
		/* sbatch 22.05.8 refuses each of these before it submits */
		"sbatch -N 4-2 job.sh",
		"sbatch -N 2-4:2 job.sh",
		"sbatch -N 2- job.sh",
		"sbatch -N 2x job.sh",
		"sbatch -n 0 job.sh",
		"sbatch --ntasks-per-node=0 job.sh",
		"sbatch --mem=224B job.sh",
		"sbatch --mem=224GiB job.sh",
		"sbatch --mem=1.5G job.sh",
		"sbatch --mem-per-gpu=80P job.sh",
	};
	static const char *const named[] = { "--nodes", "--gres", "--gpus", "--mem", "--ntasks-per-node",
					     "--nodes", "--nodes", "--nodes", "--nodes", "--ntasks",
					     "--ntasks-per-node", "--mem", "--mem", "--mem", "--mem-per-gpu" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[128], err[256] = "";
		char *argv[8];
		int argc = split(bad[i], buf, sizeof(buf), argv, 8);
		struct jobreq r;

		assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv, (void *)"",
					      &r, err, sizeof(err)), -1);
		assert_non_null(strstr(err, named[i]));
	}
}

/* sbatch: "Invalid directive found in batch script: <SLURM" and no job. */
static void test_invalid_directive(void **state)
{
	static const char *const scripts[] = {
		"#!/bin/bash\n#SBATCH -N 2\n\n#SBATCH <SLURM OPTIONS>\nsrun true\n",
		"#!/bin/bash\n#SBATCH -N 2\n\n#SBATCH --gres=gpu:8 extra\nsrun true\n",
	};
	static const char *const word[] = { "'<SLURM'", "'extra'" };

	(void)state;
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		struct jobreq_opts o;
		char err[256] = "";

		jobreq_opts_init(&o);
		assert_int_equal(jobreq_parse_script(scripts[i], strlen(scripts[i]), &o, NULL, err,
						     sizeof(err)), -1);
		assert_non_null(strstr(err, "line 4"));
		assert_non_null(strstr(err, word[i]));
		assert_non_null(strstr(err, "Invalid directive found in batch script"));
	}
}

/* #SBATCH hetjob / packjob: components parsed each on its own (nothing
 * carried over), an invalid directive in any refuses the script, and the
 * union sums nodes and GPUs. */
static void test_hetjob(void **state)
{
	static const char script[] =
		"#!/bin/bash\n"
		"#SBATCH -p h100 -N 2 --gpus-per-node=h100:8 --ntasks-per-node=1\n"
		"#SBATCH hetjob\n"
		"#SBATCH -N 1 --gres=gpu:8\n"
		"#SBATCH packjob\n"
		"#SBATCH --gpus=4\n"
		"srun --het-group=1 true\n";
	static const char bad[] =
		"#!/bin/bash\n#SBATCH -N 2\n#SBATCH hetjob\n#SBATCH -N 1 oops\nsrun true\n";
	struct jobreq_opts comp[JOBREQ_HET_MAX], one;
	struct jobreq u;
	char err[256] = "";
	int n = 0;

	(void)state;
	assert_int_equal(jobreq_parse_script_het(script, strlen(script), comp, JOBREQ_HET_MAX, &n,
						 NULL, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(comp[0].nodes, 2);
	assert_int_equal(comp[0].gpus_per_node, 8);
	assert_string_equal(comp[0].partition, "h100");
	assert_int_equal(comp[1].nodes, 1);
	assert_int_equal(comp[1].gres_gpus, 8);
	assert_string_equal(comp[1].partition, "");   /* not propagated */
	assert_int_equal(comp[1].ntasks_per_node, 0);
	assert_int_equal(comp[2].gpus, 4);
	jobreq_het_union(comp, n, &u);
	assert_int_equal(u.nodes, 4);                  /* 2 + 1 + 1 (no -N: one) */
	assert_int_equal(u.gpus, 28);
	assert_int_equal(u.gpus_per_node, 0);          /* 8, 8, 4: uneven */
	jobreq_het_union(comp, 2, &u);
	assert_int_equal(u.nodes, 3);
	assert_int_equal(u.gpus, 24);
	assert_int_equal(u.gpus_per_node, 8);
	/* jobreq_parse_script: the first component. */
	jobreq_opts_init(&one);
	assert_int_equal(jobreq_parse_script(script, strlen(script), &one, NULL, err, sizeof(err)), 0);
	assert_int_equal(one.nodes, 2);
	/* Only two kept: the third is still counted. */
	assert_int_equal(jobreq_parse_script_het(script, strlen(script), comp, 2, &n, NULL, err,
						 sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(jobreq_parse_script_het(bad, strlen(bad), comp, JOBREQ_HET_MAX, &n, NULL,
						 err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 4"));
	assert_non_null(strstr(err, "'oops'"));
}

/* --gpus with GPUs per node, as sbatch 22.05.8 refused and took them on
 * the test cluster. */
static void test_check_gpus(void **state)
{
	static const struct {
		const char *argv[6];
		int rc;
		const char *why;
	} cases[] = {
		{ { "sbatch", "-N2", "--gpus=8", "--gpus-per-node=8", NULL }, -1, "needs 1 node" },
		{ { "sbatch", "-N1", "--gpus=16", "--gpus-per-node=8", NULL }, -1, "needs 2 nodes" },
		{ { "sbatch", "-N2", "--gpus=12", "--gpus-per-node=8", NULL }, -1, "not a multiple" },
		{ { "sbatch", "-N2", "--gpus=16", "--gres=gpu:4", NULL }, -1, "asks 2" },
		{ { "sbatch", "-N2-4", "--gpus=16", "--gres=gpu:4", NULL }, 0, NULL },
		{ { "sbatch", "-N2-3", "--gpus=32", "--gres=gpu:8", NULL }, -1, "asks 2-3" },
		{ { "sbatch", "--gpus=16", "--gpus-per-node=8", NULL }, 0, NULL },
		{ { "sbatch", "-N2", "--gpus=16", "--gpus-per-node=8", NULL }, 0, NULL },
		{ { "sbatch", "-N2", "--gpus=7", NULL }, 0, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jobreq_opts o;
		char err[256] = "";
		int argc = 0;

		while (cases[i].argv[argc])
			argc++;
		jobreq_opts_init(&o);
		assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, (char *const *)cases[i].argv,
						   &o, NULL, err, sizeof(err)), 0);
		assert_int_equal(jobreq_check_gpus(&o, err, sizeof(err)), cases[i].rc);
		if (cases[i].why)
			assert_non_null(strstr(err, cases[i].why));
	}
}

/* -D/--chdir: the last one wins; the work directory is it when absolute,
 * the current directory joined with it when relative (slurm_opt.c). */
static void test_chdir_workdir(void **state)
{
	static const char script[] = "#!/bin/bash\n#SBATCH -D /tmp/a\n#SBATCH --chdir=run\nsrun true\n";
	struct jobreq_opts o;
	char err[256] = "", cwd[4096], want[4200], wd[4200];

	(void)state;
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_script(script, strlen(script), &o, NULL, err, sizeof(err)), 0);
	assert_string_equal(o.chdir, "run");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "%s/run", strcmp(cwd, "/") ? cwd : "");
	jobreq_workdir(&o, wd, sizeof(wd));
	assert_string_equal(wd, want);
	strcpy(o.chdir, "/scratch/job");
	jobreq_workdir(&o, wd, sizeof(wd));
	assert_string_equal(wd, "/scratch/job");
	/* Too long for the buffer: nothing rather than a cut path. */
	jobreq_workdir(&o, wd, 5);
	assert_string_equal(wd, "");
	o.chdir[0] = '\0';
	jobreq_workdir(&o, wd, sizeof(wd));
	assert_string_equal(wd, cwd);
}

static void test_bad_env_names_variable(void **state)
{
	char buf[64], err[256] = "";
	char *argv[4];
	int argc = split("sbatch job.sh", buf, sizeof(buf), argv, 4);
	struct jobreq r;

	(void)state;
	assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv,
				      (void *)"SBATCH_GPUS=lots", &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "SBATCH_GPUS"));
}

/*
 * Issue 20: the account reaches the daemon (policy exempt: accounts) from
 * -A/--account, the tool's input variable and #SBATCH lines, with Slurm's
 * precedence, and srun inside a job takes the job's; a partition list too
 * long for the field keeps whole names only.
 */
static void test_account(void **state)
{
	static const struct {
		enum jobreq_tool tool;
		const char *cmdline, *script, *env, *account;
	} acct[] = {
		{ JOBREQ_SBATCH, "sbatch -A llm-free job.sh", NULL, "", "llm-free" },
		{ JOBREQ_SBATCH, "sbatch --account=llm-free job.sh", NULL, "", "llm-free" },
		{ JOBREQ_SBATCH, "sbatch job.sh", NULL, "SBATCH_ACCOUNT=llm-free", "llm-free" },
		{ JOBREQ_SBATCH, "sbatch job.sh", "#!/bin/sh\n#SBATCH -A llm-free\nsrun x\n", "", "llm-free" },
		{ JOBREQ_SBATCH, "sbatch job.sh", "#!/bin/sh\n#SBATCH --account llm-free\n",
		  "SBATCH_ACCOUNT=other", "other" },
		{ JOBREQ_SBATCH, "sbatch -A cli job.sh", NULL, "SBATCH_ACCOUNT=other", "cli" },
		{ JOBREQ_SALLOC, "salloc -A llm-free -N1", NULL, "", "llm-free" },
		{ JOBREQ_SALLOC, "salloc -N1", NULL, "SALLOC_ACCOUNT=llm-free", "llm-free" },
		{ JOBREQ_SRUN, "srun --account llm-free -N1 x", NULL, "", "llm-free" },
		{ JOBREQ_SRUN, "srun -N1 x", NULL, "SLURM_ACCOUNT=llm-free", "llm-free" },
		{ JOBREQ_SRUN, "srun -N1 x", NULL, "SLURM_JOB_ID=7;SLURM_JOB_ACCOUNT=llm-free", "llm-free" },
		{ JOBREQ_SBATCH, "sbatch job.sh", NULL, "", "" },
	};
	char buf[256], err[256] = "";
	char *argv[16];
	struct jobreq r;

	(void)state;
	for (size_t i = 0; i < sizeof(acct) / sizeof(acct[0]); i++) {
		int argc = split(acct[i].cmdline, buf, sizeof(buf), argv, 16);

		assert_int_equal(jobreq_build(acct[i].tool, argc, argv, acct[i].script,
					      acct[i].script ? strlen(acct[i].script) : 0, row_getenv,
					      (void *)acct[i].env, &r, err, sizeof(err)), 0);
		if (strcmp(r.opt.account, acct[i].account) != 0)
			fail_msg("%s | %s: account '%s', want '%s'", acct[i].cmdline, acct[i].env,
				 r.opt.account, acct[i].account);
	}
	/* 63 bytes fit: the third name does not, and is left out whole. */
	{
		int argc = split("sbatch -p partition-number-one,partition-number-two,partition-number-three job.sh",
				 buf, sizeof(buf), argv, 16);

		assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv,
					      (void *)"", &r, err, sizeof(err)), 0);
		assert_string_equal(r.partition, "partition-number-one,partition-number-two");
	}
}

static void test_mem(void **state)
{
	(void)state;
	assert_int_equal(jobreq_parse_mem_mb("4000"), 4000);
	assert_int_equal(jobreq_parse_mem_mb("64G"), 65536);
	assert_int_equal(jobreq_parse_mem_mb("512m"), 512);
	assert_int_equal(jobreq_parse_mem_mb("1T"), 1048576);
	assert_int_equal(jobreq_parse_mem_mb("2048K"), 2);
	/* Slurm's str_to_mbytes: a trailing B after the unit, either case; K rounds up */
	assert_int_equal(jobreq_parse_mem_mb("224GB"), 224 * 1024);
	assert_int_equal(jobreq_parse_mem_mb("224gb"), 224 * 1024);
	assert_int_equal(jobreq_parse_mem_mb("224Gb"), 224 * 1024);
	assert_int_equal(jobreq_parse_mem_mb("512MB"), 512);
	assert_int_equal(jobreq_parse_mem_mb("1TB"), 1048576);
	assert_int_equal(jobreq_parse_mem_mb("2049KB"), 3);
	assert_int_equal(jobreq_parse_mem_mb("1k"), 1);
	assert_int_equal(jobreq_parse_mem_mb("+64G"), 65536);
	assert_int_equal(jobreq_parse_mem_mb("0"), 0);
	assert_int_equal(jobreq_parse_mem_mb("224B"), -1);
	assert_int_equal(jobreq_parse_mem_mb("224GiB"), -1);
	assert_int_equal(jobreq_parse_mem_mb("224GBB"), -1);
	assert_int_equal(jobreq_parse_mem_mb("224 "), -1);
	assert_int_equal(jobreq_parse_mem_mb("1.5G"), -1);
	assert_int_equal(jobreq_parse_mem_mb("224P"), -1);
	assert_int_equal(jobreq_parse_mem_mb("-1"), -1);
	assert_int_equal(jobreq_parse_mem_mb("0x10"), -1);
	assert_int_equal(jobreq_parse_mem_mb("G"), -1);
	assert_int_equal(jobreq_parse_mem_mb(""), -1);
	/* fuzz regression (tests/fuzz/regress/fuzz_jobreq/mem-overflow-T):
	 * v * 1024 * 1024 overflowed a long, undefined behaviour */
	assert_int_equal(jobreq_parse_mem_mb("9999999999999T"), -1);
	assert_int_equal(jobreq_parse_mem_mb("9223372036854775807G"), -1);
	assert_int_equal(jobreq_parse_mem_mb("8796093022207T"), 8796093022207L * 1048576L);
}

static void test_mem_and_constraint_fields(void **state)
{
	char buf[256], err[128] = "";
	char *argv[16];
	int argc = split("sbatch -C h100&ib --mem=64G --mem-per-gpu=80G --exclusive -N1 --gres=gpu:8 j.sh",
			 buf, sizeof(buf), argv, 16);
	struct jobreq r;

	(void)state;
	assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv, (void *)"",
				      &r, err, sizeof(err)), 0);
	assert_string_equal(r.opt.constraint, "h100&ib");
	assert_int_equal(r.opt.mem_mb, 65536);
	assert_int_equal(r.opt.mem_per_gpu_mb, 81920);
	assert_int_equal(r.opt.exclusive, 1);
}

/*
 * fuzz regressions (tests/fuzz/regress/fuzz_jobreq/gpus-product-overflow-*):
 * per-node and per-task GPU counts times a million nodes overflowed an int.
 */
static void test_gpu_products_saturate(void **state)
{
	char buf[256], err[128] = "";
	char *argv[16];
	int argc = split("sbatch --nodes=1000000 --gpus-per-node=1000000 j.sh",
			 buf, sizeof(buf), argv, 16);
	struct jobreq r;

	(void)state;
	assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv, (void *)"",
				      &r, err, sizeof(err)), 0);
	assert_int_equal(r.gpus, INT_MAX);
	argc = split("sbatch --nodes=1000000 --ntasks-per-node=1000000 --gpus-per-task=1000000 j.sh",
		     buf, sizeof(buf), argv, 16);
	assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv, (void *)"",
				      &r, err, sizeof(err)), 0);
	assert_int_equal(r.gpus, INT_MAX);
	argc = split("sbatch --nodes=1000001 --gpus-per-node=8 j.sh", buf, sizeof(buf), argv, 16);
	assert_int_equal(jobreq_build(JOBREQ_SBATCH, argc, argv, NULL, 0, row_getenv, (void *)"",
				      &r, err, sizeof(err)), -1);
}

/*
 * Another SPANK plugin's option given as "--opt value": Slurm consumed the
 * value (it knows the option takes one) and says so in the environment as
 * _SLURM_SPANK_OPTION_<plugin>_<opt>=value; the script is the next word.
 */
static void test_other_spank_option_value(void **state)
{
	char *const spank_env[] = {
		(char *)"PATH=/usr/bin",
		(char *)"_SLURM_SPANK_OPTION_pyxis_container_image=nvcr.io/nvidia/pytorch:24.01",
		(char *)"_SLURM_SPANK_OPTION_other_flag=",
		(char *)"_SLURM_SPANK_OPTION_advisor_llm_model=llama3-70b",
		NULL,
	};
	char buf[256], err[128] = "";
	char *argv[16];
	int argc = split("sbatch --container-image nvcr.io/nvidia/pytorch:24.01 --flag -N 2 train.sh arg",
			 buf, sizeof(buf), argv, 16);
	struct jobreq_opts o;
	struct jobreq r;

	(void)state;
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv_spank(JOBREQ_SBATCH, argc, argv, spank_env, &o, NULL, err,
						 sizeof(err)), 0);
	assert_string_equal(o.script, "train.sh");
	assert_int_equal(o.nodes, 2);

	/* Without the environment the value is taken for the script, as before. */
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_string_equal(o.script, "nvcr.io/nvidia/pytorch:24.01");

	/* A flag (empty value) does not eat the next word; nor does a value
	 * that differs from the word, nor the "--opt=value" form. */
	argc = split("sbatch --flag job.sh", buf, sizeof(buf), argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv_spank(JOBREQ_SBATCH, argc, argv, spank_env, &o, NULL, err,
						 sizeof(err)), 0);
	assert_string_equal(o.script, "job.sh");
	argc = split("sbatch --container-image job.sh", buf, sizeof(buf), argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv_spank(JOBREQ_SBATCH, argc, argv, spank_env, &o, NULL, err,
						 sizeof(err)), 0);
	assert_string_equal(o.script, "job.sh");
	argc = split("sbatch --container-image=nvcr.io/nvidia/pytorch:24.01 run.sh", buf, sizeof(buf),
		     argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv_spank(JOBREQ_SBATCH, argc, argv, spank_env, &o, NULL, err,
						 sizeof(err)), 0);
	assert_string_equal(o.script, "run.sh");

	/* Through jobreq_build, the GPUs after the other plugin's option count. */
	argc = split("sbatch --container-image nvcr.io/nvidia/pytorch:24.01 -N4 --gres=gpu:8 j.sh",
		     buf, sizeof(buf), argv, 16);
	assert_int_equal(jobreq_build_spank(JOBREQ_SBATCH, argc, argv, spank_env, NULL, 0, row_getenv,
					    (void *)"", &r, err, sizeof(err)), 0);
	assert_int_equal(r.gpus, 32);
	assert_string_equal(r.opt.script, "j.sh");
}

/* Where the options stop: the script and its arguments, srun's command, --wrap. */
static void test_first_arg_and_wrap(void **state)
{
	char buf[256], err[128] = "";
	char *argv[16];
	struct jobreq_opts o;
	int argc, llm = 0;

	(void)state;
	argc = split("sbatch -N 2 --output=x.out /home/u/train.sbatch --epochs 3", buf, sizeof(buf),
		     argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_int_equal(o.first_arg, 4);
	assert_string_equal(argv[o.first_arg], "/home/u/train.sbatch");
	assert_null(o.wrap_text);

	argc = split("srun -N2 --gres=gpu:8 --llm-zero=1 python train.py --tp 3", buf, sizeof(buf),
		     argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SRUN, argc, argv, &o, &llm, err, sizeof(err)), 0);
	assert_string_equal(argv[o.first_arg], "python");
	assert_int_equal(argc - o.first_arg, 4);
	assert_int_equal(llm, 1);

	argc = split("srun -N2 hostname", buf, sizeof(buf), argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SRUN, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_string_equal(argv[o.first_arg], "hostname");

	/* No command at all: first_arg is argc. */
	argc = split("salloc -N2", buf, sizeof(buf), argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SALLOC, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_int_equal(o.first_arg, argc);

	/* Past a bad value the script and the --llm-* options are still found;
	 * the first error is the one reported. */
	argc = split("sbatch --nodes=abc --mem=zz --llm-seq=4096 -G 8 run.sbatch 1", buf, sizeof(buf),
		     argv, 16);
	jobreq_opts_init(&o);
	llm = 0;
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, &llm, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--nodes"));
	assert_string_equal(o.script, "run.sbatch");
	assert_int_equal(o.first_arg, 6);
	assert_int_equal(llm, 1);
	assert_int_equal(o.gpus, 8);
	assert_int_equal(o.nodes, 0);

	argc = split("sbatch -N 2 --wrap=torchrun", buf, sizeof(buf), argv, 16);
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &o, NULL, err, sizeof(err)), 0);
	assert_true(o.wrap);
	assert_string_equal(o.wrap_text, "torchrun");
}

/*
 * Values as slurm_option_get_next_set() printed them in sbatch and srun on
 * Slurm 22.05.8 (plugin/slurmopt.c), and the TRES form of newer releases.
 */
static void test_apply_named(void **state)
{
	static const char *const set[][2] = {
		{ "gres", "gres:gpu:h100:8" }, { "mem-per-gpu", "10G" }, { "nodes", "2-4" },
		{ "output", "/dev/null" }, { "partition", "debug,h100" }, { "exclusive", "unset" },
		{ "ntasks-per-node", "8" }, { "wrap", "srun python x.py" }, { "account", "llm-free" },
	};
	struct jobreq_opts o, cmd;
	struct jobreq r, p;
	char buf[256], err[128] = "";
	char *argv[16];
	int argc;

	(void)state;
	jobreq_opts_init(&o);
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		assert_int_equal(jobreq_apply_named(&o, set[i][0], set[i][1], err, sizeof(err)), 0);
	assert_int_equal(o.gres_gpus, 8);
	assert_string_equal(o.gres_type, "h100");
	assert_int_equal(o.mem_per_gpu_mb, 10240);
	assert_int_equal(o.nodes, 2);
	assert_string_equal(o.partition, "debug,h100");
	assert_string_equal(o.account, "llm-free");
	assert_int_equal(o.exclusive, -1);
	assert_int_equal(o.ntasks_per_node, 8);
	assert_false(o.wrap);   /* not a resource: the plugin reads --wrap from argv */
	assert_int_equal(jobreq_apply_named(&o, "exclusive", "exclusive", err, sizeof(err)), 0);
	assert_int_equal(o.exclusive, 1);
	/* 26.05: srun --exclusive (without --exact) reads "allocation". */
	o.exclusive = -1;
	assert_int_equal(jobreq_apply_named(&o, "exclusive", "allocation", err, sizeof(err)), 0);
	assert_int_equal(o.exclusive, 1);
	assert_int_equal(jobreq_apply_named(&o, "exclusive", "oversubscribe", err, sizeof(err)), 0);
	assert_int_equal(o.exclusive, 0);

	/* Newer Slurm: "gres/gpu:TYPE:N"; --gpus in the same form. */
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_apply_named(&o, "gres", "gres/gpu:h200:4", err, sizeof(err)), 0);
	assert_int_equal(jobreq_apply_named(&o, "gpus", "gres/gpu:h200:16", err, sizeof(err)), 0);
	assert_int_equal(o.gres_gpus, 4);
	assert_int_equal(o.gpus, 16);
	assert_string_equal(o.gpus_type, "h200");
	/* A placeholder that slipped through is refused, not taken for a count. */
	assert_int_equal(jobreq_apply_named(&o, "ntasks-per-node", "-2", err, sizeof(err)), -1);
	assert_int_equal(jobreq_apply_named(&o, "no-such-option", "x", err, sizeof(err)), 0);
	assert_int_equal(jobreq_apply_named(&o, NULL, "x", err, sizeof(err)), 0);

	/* The resolved layer gives what the parse of the same command line gives. */
	jobreq_opts_init(&o);
	assert_int_equal(jobreq_apply_named(&o, "ntasks", "32", err, sizeof(err)), 0);
	assert_int_equal(jobreq_apply_named(&o, "ntasks-per-node", "8", err, sizeof(err)), 0);
	assert_int_equal(jobreq_apply_named(&o, "gpus-per-task", "1", err, sizeof(err)), 0);
	jobreq_build_resolved(JOBREQ_SBATCH, &o, 0, row_getenv, (void *)"", &r);
	argc = split("sbatch -n 32 --ntasks-per-node=8 --gpus-per-task=1 j.sh", buf, sizeof(buf),
		     argv, 16);
	jobreq_opts_init(&cmd);
	assert_int_equal(jobreq_parse_argv(JOBREQ_SBATCH, argc, argv, &cmd, NULL, err, sizeof(err)), 0);
	assert_int_equal(jobreq_build_parsed(JOBREQ_SBATCH, &cmd, 0, NULL, 0, row_getenv, (void *)"",
					     &p, err, sizeof(err)), 0);
	assert_int_equal(r.gpus, 32);
	assert_int_equal(r.nodes, 4);
	assert_int_equal(r.gpus, p.gpus);
	assert_int_equal(r.nodes, p.nodes);
	assert_int_equal(r.gpus_per_node, p.gpus_per_node);

	/* srun inside an allocation: the allocation fills what the step lacks. */
	jobreq_opts_init(&o);
	jobreq_build_resolved(JOBREQ_SRUN, &o, 1, row_getenv,
			      (void *)"SLURM_JOB_ID=12;SLURM_JOB_NUM_NODES=2;SLURM_GPUS_ON_NODE=8", &r);
	assert_true(r.in_allocation);
	assert_int_equal(r.job_id, 12);
	assert_int_equal(r.gpus, 16);
	assert_int_equal(r.llm_options, 1);
}

static void test_launcher_words(void **state)
{
	static const char *const yes[] = {
		"srun python pretrain_gpt.py", "torchrun --nproc_per_node 8 train.py",
		"deepspeed --num_gpus 8 x.py", "accelerate launch x.py", "vllm serve m",
		"python3 -m sglang.launch_server", "tune run lora_finetune_single_device",
		"axolotl train c.yaml", "mpirun -np 8 ./a.out",
	};
	static const char *const no[] = { "", "true", "hostname", "./a.out --iters 5", "sleep 60" };

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(jobreq_mentions_launcher(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(jobreq_mentions_launcher(no[i], strlen(no[i])));
	assert_false(jobreq_mentions_launcher(NULL, 10));
	/* Bounded by len, not by a terminator. */
	assert_false(jobreq_mentions_launcher("srun", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_script_path),
		cmocka_unit_test(test_getopt_state_restored),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_invalid_directive),
		cmocka_unit_test(test_hetjob),
		cmocka_unit_test(test_check_gpus),
		cmocka_unit_test(test_bad_env_names_variable),
		cmocka_unit_test(test_mem),
		cmocka_unit_test(test_mem_and_constraint_fields),
		cmocka_unit_test(test_other_spank_option_value),
		cmocka_unit_test(test_gpu_products_saturate),
		cmocka_unit_test(test_first_arg_and_wrap),
		cmocka_unit_test(test_apply_named),
		cmocka_unit_test(test_account),
		cmocka_unit_test(test_launcher_words),
		cmocka_unit_test(test_chdir_workdir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
