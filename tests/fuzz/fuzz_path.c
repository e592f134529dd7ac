/*
 * fuzz_path.c - libFuzzer target for the whole path of a job's text to
 * every output (issue 27: "No job text can crash any output").  A probe
 * crashed `advisorctl --json --local check --script` on two public
 * Megatron scripts: a table of print.c was read past its end.  The path is
 * the one advisorctl --local and advisord run, in-process:
 *
 *   1. resources: sbatch's command line and the script's #SBATCH lines, as
 *      the plugin reads them (jobreq_build); --llm-* words through
 *      options_apply, as the plugin's SPANK options;
 *   2. the request: a CheckRequest (convert_request_to_pb) carrying the
 *      job's text (jobship_new: the script, the environment less its
 *      secrets, the submit directory), packed and unpacked as on the wire,
 *      then service_check on the shipped catalog and policy: the job
 *      reader (common/jobread), the engine (engine_check), the annotation.
 *      The files the reader asks for are shipped, round after round as
 *      advisorctl's check_call does (the last round final), each with the
 *      input's script as its content, so that a config the script names
 *      feeds the config parsers; a path under /missing/ is missing, one
 *      under /denied/ unreadable, one under /dir/ a directory;
 *   3. the wire answer: service_check_answer (convert.c), packed, unpacked
 *      and converted back, which is what advisorctl prints;
 *   4. every printer of a check: print_check, text and --json;
 *   5. the decision log: the check's detail lines (handler_log_detail,
 *      dlog_detail.c) read back into the Decision that show prints
 *      (handler_decision_pb), printed by print_show and print_history,
 *      text and --json.
 *
 * Input: SCRIPT, then optionally a NUL byte and WORDS, one a line: the
 * words of sbatch's command line before the script's name ("--gpus=8",
 * "-N", "2", "--llm-layout=tp4,pp2"); the lines after a line "--" are the
 * script's own arguments ($1, $2, ...).  The environment has HOME, MODEL,
 * NNODES and a secret (HF_TOKEN, which the client must not ship); the job
 * is submitted from /home/u/run.  A command line sbatch refuses ends the
 * run (advisorctl exits 64 on it, printing nothing).
 *
 * Assertions, beyond no crash, leak or sanitizer report:
 *   - the daemon decodes and takes every request the client built, and
 *     answers the final round without asking for files;
 *   - the result is well formed (engine_check.h) and survives the wire:
 *     printed before and after the round trip, text and JSON, it reads
 *     the same;
 *   - every JSON output is one object that json-c parses, valid UTF-8
 *     already (adv_json_utf8 leaves it as it is); check's and show's name
 *     the result's verdict;
 *   - no line of a text output needs escaping (issue 20's rule,
 *     adv_text_needs_escape): no job text reaches a terminal raw;
 *   - show has every finding and every source of the result, in order, or
 *     counts them as left out (the log's bound).
 */
#include <json-c/json.h>

#include "advisor.pb-c.h"
#include "ctl/print.h"
#include "dlog/dlog_rec.h"
#include "engine_check.h"
#include "fuzz.h"
#include "handler.h"
#include "msg_stub.h"
#include "service/arena.h"
#include "service/service.h"
#include "service/snapshot.h"
#include "util.h"
#include "wire/convert.h"
#include "wire/jobreq.h"
#include "wire/jobship.h"
#include "wire/scripttext.h"

#ifndef FUZZ_TOP_SRCDIR
#define FUZZ_TOP_SRCDIR "."
#endif

#define MAX_WORDS 64
#define DECISION_ID "d-fuzz-path"
#define SCRIPT_NAME "job.sbatch"
#define CWD "/home/u/run"

static struct snapshot *snap;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *catalogs[1];
	static char cat_path[4096], pol_path[4096];
	const char *top = getenv("ADVISOR_TOP");
	struct snapshot_files files;
	char err[ADV_ERR_MAX];

	(void)argc;
	(void)argv;
	/* No Slurm to ask for the default partition or a partition's GPU type. */
	setenv("ADVISOR_NO_SLURM", "1", 1);
	snprintf(cat_path, sizeof(cat_path), "%s/etc/catalog.yaml", top ? top : FUZZ_TOP_SRCDIR);
	snprintf(pol_path, sizeof(pol_path), "%s/etc/policy.yaml", top ? top : FUZZ_TOP_SRCDIR);
	catalogs[0] = cat_path;
	files = (struct snapshot_files){ catalogs, 1, pol_path };
	if (snapshot_load(&files, &snap, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_path: %s (set ADVISOR_TOP to the source tree)\n", err);
		abort();
	}
	return 0;
}

/* ---- the input ------------------------------------------------------------------ */

struct job {
	const char *script;
	size_t len;
	char *words;                    /* a copy of WORDS, cut into the vectors */
	char *argv[MAX_WORDS + 2];      /* "sbatch", the words, the script's name */
	int argc;
	char *args[MAX_WORDS];          /* the script's arguments */
	int n_args;
};

static void job_parse(const uint8_t *data, size_t size, struct job *j)
{
	const uint8_t *nul = memchr(data, '\0', size);
	bool after_dashes = false;
	char *save = NULL;

	memset(j, 0, sizeof(*j));
	j->script = (const char *)data;
	j->len = nul ? (size_t)(nul - data) : size;
	j->argv[j->argc++] = "sbatch";
	if (nul) {
		size_t n = size - j->len - 1;

		j->words = fuzz_cstr(nul + 1, n);
		/* Further NULs separate words as the line ends do. */
		for (size_t i = 0; i < n; i++)
			if (j->words[i] == '\0')
				j->words[i] = '\n';
		for (char *w = strtok_r(j->words, "\n", &save); w; w = strtok_r(NULL, "\n", &save)) {
			if (!after_dashes && !strcmp(w, "--"))
				after_dashes = true;
			else if (after_dashes && j->n_args < MAX_WORDS)
				j->args[j->n_args++] = w;
			else if (!after_dashes && j->argc < MAX_WORDS + 1)
				j->argv[j->argc++] = w;
		}
	}
	j->argv[j->argc++] = SCRIPT_NAME;
}

static const char *no_env(const char *name, void *arg)
{
	(void)name;
	(void)arg;
	return NULL;
}

/* The request's resources and workload from the command line over the
 * script's #SBATCH lines; -1 where sbatch refuses the command line. */
static int job_request(const struct job *j, struct adv_request *req, int *ntasks, int *ntpn)
{
	struct jobreq r;
	char err[256];

	engine_request_init(req);
	memset(&r, 0, sizeof(r));
	if (jobreq_build(JOBREQ_SBATCH, j->argc, j->argv, j->script, j->len, no_env, NULL, &r, err,
			 sizeof(err)) != 0)
		return -1;
	adv_strlcpy(req->res.gpu, r.gpu_type, sizeof(req->res.gpu));
	adv_strlcpy(req->res.partition, r.partition, sizeof(req->res.partition));
	req->res.gpus = r.gpus;
	req->res.nodes = r.nodes;
	req->res.gpus_per_node = r.gpus_per_node;
	*ntasks = r.opt.ntasks;
	*ntpn = r.opt.ntasks_per_node;
	/* The plugin's SPANK options; one it refuses is left out, as sbatch
	 * would stop at it. */
	for (int i = 1; i < j->argc - 1; i++) {
		char name[64], *eq = strchr(j->argv[i], '=');

		if (strncmp(j->argv[i], "--llm-", 6) != 0 || !eq)
			continue;
		adv_snprintf(name, sizeof(name), "%.*s", (int)(eq - j->argv[i] - 2), j->argv[i] + 2);
		(void)options_apply(&req->wl, name, eq + 1, err, sizeof(err));
	}
	return 0;
}

/* ---- the request, round after round ------------------------------------------- */

struct shipped {
	Advisor__JobFile file[JOBREAD_MAX_FILES];
	Advisor__JobFile *ptr[JOBREAD_MAX_FILES];
	char path[JOBREAD_MAX_FILES][JOBREAD_PATH_MAX];
	size_t n;
};

/* A file the reader asked for, shipped as the client would: the script's
 * text, or missing, unreadable or a directory by its path. */
static void ship(struct shipped *sh, const char *path, const struct job *j)
{
	Advisor__JobFile *f;

	if (sh->n >= JOBREAD_MAX_FILES)
		return;
	f = &sh->file[sh->n];
	advisor__job_file__init(f);
	adv_strlcpy(sh->path[sh->n], path, JOBREAD_PATH_MAX);
	f->path = sh->path[sh->n];
	f->has_status = 1;
	f->status = !strncmp(path, "/missing/", 9) ? 1 : !strncmp(path, "/denied/", 8) ? 2 : 0;
	if (f->status == 0 && !strncmp(path, "/dir/", 5)) {
		f->has_is_dir = 1;
		f->is_dir = 1;
	} else if (f->status == 0) {
		f->has_content = 1;
		f->content.data = (uint8_t *)(uintptr_t)j->script;
		f->content.len = j->len;
	}
	sh->ptr[sh->n++] = f;
}

/* msg packed and unpacked as the wire carries it; the copy is the caller's. */
static ProtobufCMessage *over_wire(const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(n ? n : 1);
	ProtobufCMessage *copy;

	FUZZ_ASSERT(buf);
	FUZZ_ASSERT(protobuf_c_message_pack(msg, buf) == n);
	copy = protobuf_c_message_unpack(msg->descriptor, NULL, n, buf);
	free(buf);
	FUZZ_ASSERT(copy);
	return copy;
}

/*
 * The check through service_check, the files shipped between the rounds;
 * the last request the daemon decoded in *last (the caller frees it).
 * false when the daemon refuses the request (a value out of the wire's
 * range: advisorctl exits 64 on it).
 */
static bool check_rounds(const struct job *j, struct adv_request *ar, int ntasks, int ntpn,
			 struct arena *a, struct adv_result *res, Advisor__CheckRequest **last)
{
	static char *const env[] = { "HOME=/home/u", "MODEL=llama3-8b", "NNODES=2",
				     "HF_TOKEN=hf_secret", NULL };
	static struct shipped sh;
	struct convert_request_pb buf;
	Advisor__CheckRequest *m = convert_request_to_pb(ar, ADV_CTX_ADVISORCTL, 0, NULL, &buf);
	struct scripttext st = { 0 };
	struct jobship *js;
	bool ok = true;

	/* Shipped as every client ships a script (scripttext.h: compacted, cut). */
	FUZZ_ASSERT(scripttext_set(&st, j->script, j->len) == 0);
	js = jobship_new(JOBREAD_SCRIPT, SCRIPT_NAME, &st, j->n_args, j->args, env, CWD, ntasks,
			 ntpn);
	FUZZ_ASSERT(js);
	sh.n = 0;
	*last = NULL;
	for (int round = 0; round < JOBREAD_MAX_ROUNDS; round++) {
		bool final = round + 1 >= JOBREAD_MAX_ROUNDS;
		Advisor__JobText jt = *jobship_text(js, final);
		struct service_check_io io = { .arena = a };
		struct adv_request req;
		char err[ADV_ERR_MAX];

		jt.files = sh.ptr;
		jt.n_files = sh.n;
		m->job = &jt;
		if (*last)
			advisor__check_request__free_unpacked(*last, NULL);
		*last = (Advisor__CheckRequest *)over_wire(&m->base);
		/* What crossed the wire is the compacted text, whole. */
		FUZZ_ASSERT(!(*last)->job->has_script || (*last)->job->script.len == st.len);
		for (size_t k = 0; k < (*last)->job->n_env; k++)
			FUZZ_ASSERT(!jobship_env_secret((*last)->job->env[k]));
		if (service_check(snap, *last, "fuzz", &req, res, &io, err, sizeof(err)) != 0) {
			ok = false;
			break;
		}
		if (io.n_need == 0)
			break;
		FUZZ_ASSERT(!final && io.n_need <= JOBREAD_MAX_FILES);
		for (int i = 0; i < io.n_need; i++)
			ship(&sh, io.need[i], j);
	}
	jobship_free(js);
	scripttext_free(&st);
	return ok;
}

/* ---- the outputs --------------------------------------------------------------- */

struct out {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *out_open(struct out *o)
{
	o->text = NULL;
	o->len = 0;
	o->f = open_memstream(&o->text, &o->len);
	FUZZ_ASSERT(o->f);
	return o->f;
}

static char *out_close(struct out *o)
{
	FUZZ_ASSERT(fclose(o->f) == 0);
	return o->text;
}

/* No line of a text output needs escaping: no job text reaches a terminal raw. */
static void text_ok(const char *what, char *text)
{
	char *line = text;

	while (line && *line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (adv_text_needs_escape(line)) {
			fprintf(stderr, "fuzz_path: %s prints a line that needs escaping: %s\n", what,
				ADV_TEXT(line));
			abort();
		}
		if (nl)
			*nl = '\n';
		line = nl ? nl + 1 : NULL;
	}
}

/* One JSON object of valid UTF-8, parsed; the caller puts it. */
static json_object *json_ok(const char *what, const char *text)
{
	char *again = adv_json_utf8_dup(text);
	enum json_tokener_error e = json_tokener_success;
	json_object *o = json_tokener_parse_verbose(text, &e);

	FUZZ_ASSERT(again);
	if (strcmp(again, text) != 0 || !o || !json_object_is_type(o, json_type_object)) {
		fprintf(stderr, "fuzz_path: %s printed no JSON object of valid UTF-8 (%s):\n%s\n",
			what, json_tokener_error_desc(e), text);
		abort();
	}
	free(again);
	return o;
}

static const char *json_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
	       ? json_object_get_string(v) : NULL;
}

static size_t json_len(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array)
	       ? json_object_array_length(v) : 0;
}

/* print_check of res, text or JSON, as a malloc'ed string. */
static char *check_printed(const struct adv_result *res, bool json)
{
	struct out o;

	print_check(out_open(&o), res, DECISION_ID, json);
	return out_close(&o);
}

/* Check's printers on the answer advisorctl gets, and the same printed from
 * the daemon's own result: the wire must lose nothing they show. */
static void check_outputs(const struct adv_result *res, const struct adv_result *got)
{
	for (int json = 0; json <= 1; json++) {
		char *a = check_printed(got, json), *b = check_printed(res, json);

		if (strcmp(a, b) != 0) {
			fprintf(stderr, "fuzz_path: check%s prints the wire's answer otherwise than "
				"the daemon's result:\n--- after the wire\n%s--- before\n%s",
				json ? " --json" : "", a, b);
			abort();
		}
		if (json) {
			json_object *o = json_ok("check --json", a);
			const char *v = json_str(o, "verdict");

			FUZZ_ASSERT(v && !strcmp(v, engine_verdict_name(got->verdict)));
			FUZZ_ASSERT(json_len(o, "findings") == (size_t)got->n_findings);
			json_object_put(o);
		} else {
			text_ok("check", a);
		}
		free(a);
		free(b);
	}
}

/* The check as the log keeps it and show prints it back. */
static void log_outputs(const Advisor__CheckRequest *m, const struct adv_result *res,
			struct arena *a)
{
	static struct dlog_rec rec;
	Advisor__HistoryResponse hr = ADVISOR__HISTORY_RESPONSE__INIT;
	Advisor__Decision *d;

	memset(&rec, 0, sizeof(rec));
	adv_strlcpy(rec.id, DECISION_ID, sizeof(rec.id));
	adv_strlcpy(rec.user, "fuzz", sizeof(rec.user));
	adv_strlcpy(rec.model, res->model, sizeof(rec.model));
	rec.verdict = (int)res->verdict;
	rec.query = true;
	handler_log_detail(m, res, &rec);
	d = handler_decision_pb(a, &rec, true);
	FUZZ_ASSERT(d);
	/* Every finding and source, in order, or counted as left out. */
	FUZZ_ASSERT(d->n_findings + d->findings_left_out == (size_t)res->n_findings);
	for (size_t i = 0; i < d->n_findings; i++)
		FUZZ_ASSERT(d->findings[i]->code && !strcmp(d->findings[i]->code, res->findings[i].code));
	FUZZ_ASSERT(d->n_sources + d->sources_left_out == (size_t)res->n_sources);
	hr.n_decisions = 1;
	hr.decisions = &d;
	for (int json = 0; json <= 1; json++) {
		struct out o;
		char *text;

		print_show(out_open(&o), &hr, json);
		text = out_close(&o);
		if (json) {
			json_object *x = json_ok("show --json", text);
			const char *v = json_str(x, "verdict");

			FUZZ_ASSERT(v && !strcmp(v, engine_verdict_name(res->verdict)));
			FUZZ_ASSERT(json_len(x, "findings") == d->n_findings);
			json_object_put(x);
		} else {
			text_ok("show", text);
		}
		free(text);
		print_history(out_open(&o), &hr, json);
		text = out_close(&o);
		if (json)
			json_object_put(json_ok("history --json", text));
		else
			text_ok("history", text);
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct adv_result res, got;
	Advisor__CheckRequest *last = NULL;
	Advisor__CheckResponse *answer, *back;
	struct adv_request ar;
	struct arena a;
	struct job j;
	int ntasks = 0, ntpn = 0;

	job_parse(data, size, &j);
	arena_init(&a);
	if (job_request(&j, &ar, &ntasks, &ntpn) == 0 &&
	    check_rounds(&j, &ar, ntasks, ntpn, &a, &res, &last)) {
		fuzz_check_result(&res);
		answer = service_check_answer(&a, &res, DECISION_ID);
		FUZZ_ASSERT(answer);
		back = (Advisor__CheckResponse *)over_wire(&answer->base);
		convert_result_from_pb(back, &got);
		advisor__check_response__free_unpacked(back, NULL);
		check_outputs(&res, &got);
		/* The daemon logs its own result, as do_check does. */
		log_outputs(last, &res, &a);
	}
	if (last)
		advisor__check_request__free_unpacked(last, NULL);
	arena_destroy(&a);
	free(j.words);
	return 0;
}
