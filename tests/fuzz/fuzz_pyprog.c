/*
 * fuzz_pyprog.c - libFuzzer target for the program a job runs, read as
 * text (issue 28): the Python scanner (common/jobread/pyscan.c), then the
 * reader of the program (common/jobread/fw/fw_python.c) through the whole
 * job reader and the engine.
 *
 * Input: a Python program.  pyscan_run reads it; then a fixed batch script
 * runs it ("python prog.py --model_name X --bs 2", one node of 8 H100)
 * and every file the reader asks for (the program, a DeepSpeed JSON it
 * names, a model's config.json) is served the same input.
 * Assertions: the scan keeps within its bounds; every argument belongs to
 * a call kept, a nested call's index is a call kept after its owner,
 * every line lies within the text's lines, every kept text is
 * NUL-terminated; the reader ends with at most JOBREAD_MAX_FILES files
 * asked, every value with a NUL-terminated source, and the engine's answer
 * on what was read is well-formed.
 */
#include "config/catalog.h"
#include "config/policy.h"
#include "engine/engine.h"
#include "engine_check.h"
#include "fuzz.h"
#include "jobread/jobread.h"
#include "jobread/pyscan.h"

static catalog_t *cat;
static struct adv_policy pol;

struct input {
	const char *text;
	size_t len;
};

static int serve(void *arg, const char *path, const char **text, size_t *len)
{
	const struct input *in = arg;

	(void)path;
	*text = in->text;
	*len = in->len;
	return JOBREAD_FILE_OK;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];
	const char *top = getenv("ADVISOR_TOP");
	char path[4096];

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/etc/catalog.yaml", top ? top : ".");
	cat = catalog_create();
	if (!cat || catalog_load(cat, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_pyprog: %s (set ADVISOR_TOP to the source tree)\n", err);
		abort();
	}
	policy_defaults(&pol);
	return 0;
}

static void check_scan(const struct pyscan_run *s)
{
	FUZZ_ASSERT(s->n_calls >= 0 && s->n_calls <= PY_MAX_CALLS);
	FUZZ_ASSERT(s->n_args >= 0 && s->n_args <= PY_MAX_ARGS);
	FUZZ_ASSERT(s->n_assign >= 0 && s->n_assign <= PY_MAX_ASSIGN);
	FUZZ_ASSERT(s->lines >= 0);
	for (int c = 0; c < s->n_calls; c++) {
		FUZZ_ASSERT(memchr(s->calls[c].name, '\0', sizeof(s->calls[c].name)));
		FUZZ_ASSERT(s->calls[c].line >= 1 && s->calls[c].line <= s->lines + 1);
	}
	for (int i = 0; i < s->n_args; i++) {
		const struct py_arg *a = &s->args[i];

		FUZZ_ASSERT(a->call >= 0 && a->call < s->n_calls);
		FUZZ_ASSERT(memchr(a->kw, '\0', sizeof(a->kw)) && memchr(a->text, '\0', sizeof(a->text)));
		FUZZ_ASSERT(a->kind >= PY_OTHER && a->kind < PY_KIND_COUNT);
		FUZZ_ASSERT(a->kind != PY_CALL || a->sub == -1 || (a->sub > a->call && a->sub < s->n_calls));
		FUZZ_ASSERT(a->line >= 0 && a->line <= s->lines + 1);
		FUZZ_ASSERT(a->kw[0] ? a->pos == -1 : a->pos >= 0);
	}
	FUZZ_ASSERT(s->n_imports >= 0 && s->n_imports <= PY_MAX_IMPORTS);
	for (int i = 0; i < s->n_imports; i++)
		FUZZ_ASSERT(memchr(s->imports[i].name, '\0', sizeof(s->imports[i].name)) &&
			    s->imports[i].name[0]);
	for (int i = 0; i < s->n_assign; i++) {
		const struct py_assign *a = &s->assign[i];

		FUZZ_ASSERT(memchr(a->name, '\0', sizeof(a->name)) && a->name[0]);
		FUZZ_ASSERT(memchr(a->text, '\0', sizeof(a->text)));
		FUZZ_ASSERT(a->kind != PY_CALL || a->sub == -1 || (a->sub >= 0 && a->sub < s->n_calls));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pyscan_run scan;
	static struct jobread_out out;
	static struct adv_result res;
	static char *const argv[] = { "--model_name", "meta-llama/Meta-Llama-3-8B", "--bs", "2", NULL };
	static const char script[] = "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\n"
				     "python prog.py \"$@\"\n";
	struct input in_text = { (const char *)data, size };
	struct jobread_input in;
	struct adv_finding pre[16];
	struct adv_request req;

	pyscan_run((const char *)data, size, NULL, NULL, &scan);
	check_scan(&scan);

	memset(&in, 0, sizeof(in));
	in.tool = JOBREAD_SBATCH;
	in.script_name = "job.sbatch";
	in.script = script;
	in.script_len = sizeof(script) - 1;
	in.argv = argv;
	in.argc = 4;
	in.cwd = "/home/u/run";
	snprintf(in.res.gpu, sizeof(in.res.gpu), "h100");
	in.res.gpus = 8;
	in.res.nodes = 1;
	in.res.gpus_per_node = 8;
	in.files.open = serve;
	in.files.arg = &in_text;
	jobread_read(cat, &in, &out);
	FUZZ_ASSERT(out.n_need >= 0 && out.n_need <= JOBREAD_MAX_FILES);
	FUZZ_ASSERT(out.n_notes >= 0 && out.n_notes <= JOBREAD_MAX_NOTES);
	FUZZ_ASSERT(memchr(out.program_why, '\0', sizeof(out.program_why)));
	for (int f = 0; f < JR_FIELD_COUNT; f++) {
		FUZZ_ASSERT(memchr(out.v[f].s, '\0', sizeof(out.v[f].s)));
		FUZZ_ASSERT(memchr(out.v[f].src.file, '\0', sizeof(out.v[f].src.file)));
		FUZZ_ASSERT(memchr(out.v[f].src.key, '\0', sizeof(out.v[f].src.key)));
	}
	engine_request_init(&req);
	req.res = in.res;
	req.n_pre = jobread_apply(cat, &out, &req, pre, 16);
	FUZZ_ASSERT(req.n_pre >= 0 && req.n_pre <= 16);
	req.pre = pre;
	engine_check(cat, &pol, &req, &res);
	jobread_annotate(&out, &req, &res);
	fuzz_check_result(&res);
	FUZZ_ASSERT(res.n_sources >= 0 && res.n_sources <= ADV_MAX_SOURCES);
	return 0;
}
