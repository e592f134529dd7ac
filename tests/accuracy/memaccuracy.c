/*
 * memaccuracy.c - the engine's memory figures held against what GPUs
 * measured (issue 19, "Evidence").
 *
 * Input: JSON arrays of published measurements (tests/accuracy/memory-
 * measured.json, and memory-heldout.json, which no constant is ever tuned
 * on).  Each row names its group and gives the figure exactly as
 * published, its unit, whether the source reports allocated or reserved
 * memory, and the configuration as stated (null where the source does not
 * state it; "assumed" holds the value the checker uses instead and why).
 * The sources: Megatron-LM's functional-test golden values
 * (mem-max-allocated-bytes, the last rank's torch.cuda peak), torchtitan's
 * benchmark tables (max_memory_reserved, maximum over GPUs) and vLLM and
 * SGLang start-up logs pasted in GitHub issues.
 *
 * Each row is judged as `advisorctl check` judges a job with that model
 * (catalog name or inline architecture) and layout, through
 * engine_evaluate(), and compared per group:
 *   serving-weights    memory.weights_gib (one GPU of the most loaded stage)
 *                      against the published GiB; tolerance 10%;
 *   serving-kv-tokens  serving.kv_capacity_tokens (memory.c, "Serving pool":
 *                      the row's gpu-memory-utilization or mem-fraction-
 *                      static share, kv-cache-dtype); vLLM blocks are
 *                      converted with the row's block size; tolerance 15%;
 *   training-peak      memory.per_gpu_gib - memory.overhead_gib (weights,
 *                      gradients, optimizer states and activations: the
 *                      policy's overhead stands for CUDA context and NCCL
 *                      memory that torch's allocated and reserved counters
 *                      never see) against the published peak; 15%.  A row
 *                      that measured allocated memory is compared without
 *                      the caching allocator's margin (memory.allocator_gib,
 *                      policy allocator_margin), one that measured reserved
 *                      memory with it.
 * Inputs the engine cannot take yet (torch.compile, float8 linears) are
 * left out; when the engine gains them, set them in request_of().  A
 * serving row's max_num_seqs, where it states one, is the profile run's
 * sampler rows (memory.c); else the server's default applies.  Rows added
 * by issue 29 name their "source"; the split between the measured set and
 * the hold-out is by source.  memory-unscored.json holds rows whose GPU
 * count is not published (reported, never judged).
 *
 * With --min-weights/--min-kv/--min-train F the program exits 1 when a
 * group's share within tolerance falls below F (make check:
 * test_memaccuracy.sh).
 *
 * usage: memaccuracy [--catalog FILE] [--min-weights F] [--min-kv F]
 *                    [--min-train F] [--verbose] FILE.json...
 */
#include "config.h"

#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/catalog.h"
#include "config/policy.h"
#include "engine/engine.h"
#include "engine/evaluate.h"
#include "engine/memory.h"
#include "util.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

#define GIB_BYTES (1024.0 * 1024.0 * 1024.0)
#define GPUS_PER_NODE 8

enum group { G_WEIGHTS, G_KV, G_TRAIN, G_COUNT };
static const char *const group_name[G_COUNT] = { "serving-weights", "serving-kv-tokens",
						 "training-peak" };
/* The tolerances per group. */
static const double group_tol[G_COUNT] = { 0.10, 0.15, 0.15 };

struct totals {
	int rows[G_COUNT], within[G_COUNT], nofigure[G_COUNT];
};

static json_object *jget(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

/* The stated value, else the assumed one (row.assumed.KEY.value). */
static json_object *jval(json_object *r, const char *key, bool *assumed)
{
	json_object *v = jget(r, key), *a;

	if (v)
		return v;
	a = jget(jget(r, "assumed"), key);
	if (a && (v = jget(a, "value")) && assumed)
		*assumed = true;
	return v;
}

static const char *jstr(json_object *r, const char *key, bool *assumed)
{
	json_object *v = jval(r, key, assumed);

	return v ? json_object_get_string(v) : "";
}

static double jnum(json_object *r, const char *key, double def, bool *assumed)
{
	json_object *v = jval(r, key, assumed);

	return v ? json_object_get_double(v) : def;
}

static int jint1(json_object *r, const char *key, bool *assumed)
{
	int v = (int)jnum(r, key, 1, assumed);

	return v > 0 ? v : 1;
}

static bool has(const char *s, const char *what)
{
	return strcasestr(s, what) != NULL;
}

static void arch_of(json_object *a, const char *id, struct adv_model *m)
{
	const char *mlp = jstr(a, "mlp", NULL);

	memset(m, 0, sizeof(*m));
	adv_strlcpy(m->name, id, sizeof(m->name));
	m->layers = (int)jnum(a, "layers", 0, NULL);
	m->hidden = (int)jnum(a, "hidden", 0, NULL);
	m->heads = (int)jnum(a, "heads", 0, NULL);
	m->kv_heads = (int)jnum(a, "kv_heads", m->heads, NULL);
	m->head_dim = (int)jnum(a, "head_dim", m->heads > 0 ? m->hidden / m->heads : 0, NULL);
	m->ffn_hidden = (int)jnum(a, "ffn_hidden", 0, NULL);
	m->vocab = (int)jnum(a, "vocab", 0, NULL);
	/* "swiglu (--swiglu ...)" is gated, "gelu (no --swiglu ...)" is not:
	 * the row's mlp names its function first. */
	m->gated_mlp = !strncasecmp(mlp, "swiglu", 6) || !strncasecmp(mlp, "geglu", 5);
	m->norm = m->gated_mlp ? ADV_NORM_RMSNORM : ADV_NORM_LAYERNORM;
	m->tied_embeddings = jget(a, "tied") && json_object_get_boolean(jget(a, "tied"));
	m->sliding_window = (int)jnum(a, "sliding_window", 0, NULL);
	m->sliding_layers = m->sliding_window > 0 ? (int)jnum(a, "sliding_layers", m->layers, NULL) : 0;
	if (jnum(a, "moe_experts", 0, NULL) > 0) {
		m->has_moe = true;
		m->moe.experts = (int)jnum(a, "moe_experts", 0, NULL);
		m->moe.top_k = (int)jnum(a, "moe_topk", 1, NULL);
		m->moe.expert_ffn_hidden = (int)jnum(a, "moe_ffn_hidden", m->ffn_hidden, NULL);
		m->moe.shared_experts = (int)jnum(a, "moe_shared_experts", 0, NULL);
	}
}

static enum group group_of(json_object *r)
{
	const char *g = jstr(r, "group", NULL);
	int i;

	for (i = 0; i < G_COUNT; i++)
		if (!strcmp(g, group_name[i]))
			return (enum group)i;
	return G_COUNT;
}

static const char *gpu_of(const char *key)
{
	if (!*key)
		return NULL;
	if (!strcmp(key, "h100"))
		return "h100-sxm";
	if (!strcmp(key, "a100"))
		return "a100-80gb";
	return key;       /* h200, gb200: the catalog's names */
}

/*
 * The request advisorctl check would build for the row.  Returns false
 * (with why) when the engine cannot take the row at all.
 */
static bool request_of(json_object *r, enum group g, const catalog_t *cat,
		       struct adv_request *req, bool *assumed, char *why, size_t whylen)
{
	const char *gpu = gpu_of(jstr(r, "gpu_key", assumed)), *cm = jstr(r, "catalog_model", NULL);
	const char *z = jstr(r, "zero_fsdp", assumed), *fw = jstr(r, "framework", NULL), *q;
	int gpus;

	engine_request_init(req);
	if (*cm) {
		if (!catalog_find_model(cat, cm)) {
			adv_snprintf(why, whylen, "model %s not in the catalog", cm);
			return false;
		}
		adv_strlcpy(req->wl.model, cm, sizeof(req->wl.model));
	} else if (jget(r, "arch")) {
		req->wl.has_arch = true;
		arch_of(jget(r, "arch"), jstr(r, "id", NULL), &req->wl.arch);
	} else {
		adv_snprintf(why, whylen, "no model");
		return false;
	}
	/* Weights per GPU do not depend on the GPU: a row that does not
	 * name one is judged on an H100 (weights only). */
	if (!gpu && g == G_WEIGHTS)
		gpu = "h100-sxm";
	if (!gpu) {
		adv_snprintf(why, whylen, "GPU '%s' not in the catalog", jstr(r, "gpu", NULL));
		return false;
	}
	adv_strlcpy(req->res.gpu, gpu, sizeof(req->res.gpu));
	req->wl.layout.tp = jint1(r, "tp", assumed);
	req->wl.layout.pp = jint1(r, "pp", assumed);
	req->wl.layout.cp = jint1(r, "cp", assumed);
	req->wl.layout.ep = jint1(r, "ep", assumed);
	req->wl.layout.vpp = jint1(r, "vpp", assumed);
	/* Sequence parallelism as the row states it (Megatron's default is
	 * off; the engine's own default with TP is on). */
	if (jget(r, "sequence_parallel"))
		req->wl.layout.sp = json_object_get_boolean(jget(r, "sequence_parallel")) ? 1 : 0;
	gpus = (int)jnum(r, "num_gpus", 0, assumed);
	if (gpus <= 0)
		gpus = req->wl.layout.tp * req->wl.layout.pp * req->wl.layout.cp;
	req->wl.layout.dp = gpus / (req->wl.layout.tp * req->wl.layout.pp * req->wl.layout.cp);
	req->res.gpus = gpus;
	req->res.gpus_per_node = GPUS_PER_NODE;
	req->wl.precision = has(jstr(r, "precision", assumed), "fp8") ? ADV_PREC_FP8
			  : has(jstr(r, "precision", assumed), "fp16") ? ADV_PREC_FP16 : ADV_PREC_BF16;
	if (g != G_TRAIN) {
		req->wl.task = ADV_TASK_INFER;
		req->wl.seq = (int)jnum(r, "max_model_len", 4096, assumed);
		/* max_num_seqs where the row states it, else the server's
		 * default (the profile run's sampler rows, memory.c). */
		req->wl.mbs = jnum(r, "max_num_seqs", 0, assumed) > 0
			      ? (int)jnum(r, "max_num_seqs", 0, assumed) : ADV_UNSET;
		/* The pool (issue 19): vLLM's --gpu-memory-utilization, SGLang's
		 * --mem-fraction-static (static: weights and KV cache only). */
		if (jnum(r, "gpu_memory_utilization", 0, assumed) > 0)
			req->wl.mem_share = (int)lround(1000 * jnum(r, "gpu_memory_utilization", 0, assumed));
		if (jnum(r, "mem_fraction_static", 0, assumed) > 0) {
			req->wl.mem_share = (int)lround(1000 * jnum(r, "mem_fraction_static", 0, assumed));
			req->wl.share_static = true;
		}
		if (has(jstr(r, "kv_cache_dtype", assumed), "fp8"))
			req->wl.kv_dtype = ADV_PREC_FP8;
		/* The stored weight format, as the reader takes it from
		 * --quantization or the checkpoint's quantization_config. */
		q = jstr(r, "quantization", assumed);
		if (has(q, "mxfp4"))
			req->wl.weights = ADV_WEIGHTS_MXFP4;
		else if (has(q, "awq") || has(q, "gptq") || has(q, "int4"))
			req->wl.weights = ADV_WEIGHTS_INT4;
		else if (has(q, "int8") || has(q, "w8a8"))
			req->wl.weights = ADV_WEIGHTS_INT8;
		if (jnum(r, "max_num_batched_tokens", 0, assumed) > 0)
			req->wl.prefill_chunk = (int)jnum(r, "max_num_batched_tokens", 0, assumed);
		return true;
	}
	req->wl.task = ADV_TASK_TRAIN;
	req->wl.seq = (int)jnum(r, "seq", 2048, assumed);
	req->wl.mbs = jint1(r, "micro_batch", assumed);
	req->wl.gbs = (int)jnum(r, "global_batch", ADV_UNSET, assumed);
	req->wl.recompute = has(jstr(r, "recompute", assumed), "full") ? ADV_RECOMPUTE_FULL
			  : has(jstr(r, "recompute", assumed), "selective") ? ADV_RECOMPUTE_SELECTIVE
			  : ADV_RECOMPUTE_NONE;
	/* Megatron-LM's --attention-backend unfused (and the local
	 * implementation's DotProductAttention) keep the scores; flash,
	 * fused and auto do not (memory.c, "Attention scores"). */
	req->wl.attention = has(jstr(r, "attention", NULL), "unfused") ? ADV_ATTN_EAGER
			  : ADV_ATTN_FLASH;
	if (has(fw, "torchtitan") || has(z, "FSDP")) {
		req->wl.framework = ADV_FW_FSDP;
		req->wl.zero = 3;
	} else {
		req->wl.framework = ADV_FW_MEGATRON;
		req->wl.zero = has(z, "distributed optimizer") ? 1 : 0;
	}
	return true;
}

/*
 * A row measured on the last pipeline stage's rank (Megatron-LM's
 * tensorboard writer lives on rank world_size-1) is compared with that
 * stage, not with the most loaded one.
 */
static void last_stage(const catalog_t *cat, const struct adv_policy *pol,
		       const struct adv_request *req, struct adv_result *res)
{
	struct adv_job job;

	if (engine_resolve(cat, req, policy_find_partition(pol, req->res.partition), &job, NULL))
		return;
	memory_estimate_stage(&job, pol, job.lay.pp - 1, &res->memory);
}

/* The published figure in the group's unit: GiB, or tokens. */
static double measured(json_object *r, bool *assumed)
{
	const char *unit = jstr(r, "unit", NULL);
	double v = jnum(r, "figure", 0, NULL);

	if (has(unit, "bytes"))
		return v / GIB_BYTES;
	if (has(unit, "blocks"))
		return v * jnum(r, "block_size", 16, assumed);
	/* Megatron's report_memory "MB" divides bytes by 1024 x 1024. */
	if (!strcmp(unit ? unit : "", "MB") || !strcmp(unit ? unit : "", "MiB"))
		return v / 1024;
	return v;         /* GiB, vLLM's GB (= GiB), tokens */
}

static void run_file(const char *path, const catalog_t *cat, const struct adv_policy *pol,
		     bool verbose, struct totals *t)
{
	json_object *all = json_object_from_file(path);
	size_t i, n;

	memset(t, 0, sizeof(*t));
	if (!all || !json_object_is_type(all, json_type_array)) {
		fprintf(stderr, "memaccuracy: %s: not a JSON array of rows (%s)\n", path,
			json_util_get_last_err() ? json_util_get_last_err() : "unreadable");
		exit(2);
	}
	n = json_object_array_length(all);
	printf("%s: %zu rows\n", path, n);
	printf("%-40s %-17s %12s %12s %6s  %s\n", "id", "group", "engine", "measured", "ratio", "");
	for (i = 0; i < n; i++) {
		json_object *r = json_object_array_get_idx(all, i);
		enum group g = group_of(r);
		struct adv_request req;
		struct adv_result *res;
		bool assumed = false;
		char why[160] = "";
		double meas, est = 0, ratio;

		if (g == G_COUNT) {
			fprintf(stderr, "memaccuracy: %s: row %zu: unknown group '%s'\n", path, i,
				jstr(r, "group", NULL));
			exit(2);
		}
		t->rows[g]++;
		meas = measured(r, &assumed);
		if (!request_of(r, g, cat, &req, &assumed, why, sizeof(why))) {
			printf("%-40.40s %-17s %12s %12.2f %6s  no engine figure: %s\n", jstr(r, "id", NULL),
			       group_name[g], "-", meas, "-", why);
			t->nofigure[g]++;
			continue;
		}
		if (!(res = calloc(1, sizeof(*res)))) {
			perror("memaccuracy");
			exit(2);
		}
		engine_evaluate(cat, pol, &req, res);
		if (res->has_memory && g == G_TRAIN && has(jstr(r, "rank", NULL), "last pipeline stage"))
			last_stage(cat, pol, &req, res);
		if (!res->has_memory) {
			printf("%-40.40s %-17s %12s %12.2f %6s  no engine figure: no memory estimate\n",
			       jstr(r, "id", NULL), group_name[g], "-", meas, "-");
			t->nofigure[g]++;
			free(res);
			continue;
		}
		if (g == G_WEIGHTS) {
			est = res->memory.weights_gib;
		} else if (g == G_KV) {
			est = res->serving.kv_capacity_tokens;
		} else {
			/* The counter the row measured: the reserved peak holds the
			 * caching allocator's margin, the allocated one does not. */
			est = res->memory.per_gpu_gib - res->memory.overhead_gib;
			if (has(jstr(r, "measure", NULL), "reserved"))
				est += res->memory.allocator_gib;
			/* nvidia-smi also counts what torch never sees (the
			 * policy's overhead: CUDA context, NCCL). */
			if (has(jstr(r, "measure", NULL), "nvidia-smi"))
				est += res->memory.overhead_gib;
		}
		ratio = meas > 0 ? est / meas : 0;
		t->within[g] += fabs(ratio - 1) <= group_tol[g];
		printf("%-40.40s %-17s %12.2f %12.2f %6.2f  %s%s\n", jstr(r, "id", NULL), group_name[g],
		       est, meas, ratio, fabs(ratio - 1) <= group_tol[g] ? "ok" : "MISS",
		       assumed ? " (assumed inputs)" : "");
		if (verbose)
			printf("        weights %.2f grads %.2f optimizer %.2f activations %.2f kv %.2f "
			       "overhead %.2f usable %.2f GiB; %s\n", res->memory.weights_gib,
			       res->memory.grads_gib, res->memory.optimizer_gib,
			       res->memory.activations_gib, res->memory.kv_cache_gib,
			       res->memory.overhead_gib, res->memory.usable_gib, jstr(r, "measure", NULL));
		free(res);
	}
	json_object_put(all);
	for (int g = 0; g < G_COUNT; g++) {
		int judged = t->rows[g] - t->nofigure[g];

		if (t->rows[g])
			printf("%s: %s: %d of %d rows within %.0f%% (%.0f%%)%s\n", path, group_name[g],
			       t->within[g], judged, 100 * group_tol[g],
			       judged ? 100.0 * t->within[g] / judged : 0,
			       t->nofigure[g] ? ", some rows without an engine figure" : "");
	}
	printf("\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memaccuracy [--catalog FILE] [--min-weights F] [--min-kv F] [--min-train F]\n"
		   "                   [--verbose] FILE.json...\n"
		   "  --catalog FILE   catalog (default: the source tree's etc/catalog.yaml)\n"
		   "  --min-weights F  exit 1 when fewer than F (0..1) of a file's serving-weights\n"
		   "                   rows with an engine figure are within 10%%\n"
		   "  --min-kv F       the same for serving-kv-tokens rows (15%%)\n"
		   "  --min-train F    the same for training-peak rows (15%%)\n"
		   "  --verbose        print the engine's memory breakdown for each row\n");
}

static bool fraction(const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	if (*end || *out < 0 || *out > 1) {
		fprintf(stderr, "memaccuracy: '%s' is not a fraction between 0 and 1\n", arg);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "catalog", required_argument, NULL, 'c' },
		{ "min-weights", required_argument, NULL, 'w' },
		{ "min-kv", required_argument, NULL, 'k' },
		{ "min-train", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *catalog_path = SRCDIR "/etc/catalog.yaml";
	double min[G_COUNT] = { -1, -1, -1 };
	bool verbose = false, failed = false;
	struct adv_policy pol;
	catalog_t *cat;
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "c:w:k:t:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			catalog_path = optarg;
			break;
		case 'w':
		case 'k':
		case 't':
			if (!fraction(optarg, &min[c == 'w' ? G_WEIGHTS : c == 'k' ? G_KV : G_TRAIN]))
				return 2;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cat = catalog_create();
	if (!cat || catalog_load(cat, catalog_path, err, sizeof(err)) != 0) {
		fprintf(stderr, "memaccuracy: %s\n", cat ? err : "out of memory");
		catalog_destroy(cat);
		return 2;
	}
	policy_defaults(&pol);
	for (; optind < argc; optind++) {
		struct totals t;

		run_file(argv[optind], cat, &pol, verbose, &t);
		for (int g = 0; g < G_COUNT; g++) {
			int judged = t.rows[g] - t.nofigure[g];

			if (min[g] < 0 || t.rows[g] == 0)
				continue;
			if (judged == 0 || (double)t.within[g] / judged < min[g] - 1e-9) {
				fprintf(stderr, "memaccuracy: %s: %s: %d of %d rows within %.0f%%, "
					"fewer than the floor %.0f%%\n", argv[optind], group_name[g],
					t.within[g], judged, 100 * group_tol[g], 100 * min[g]);
				failed = true;
			}
		}
	}
	catalog_destroy(cat);
	return failed ? 1 : 0;
}
