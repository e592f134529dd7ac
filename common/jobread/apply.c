/*
 * apply.c - from what the job reader found to the engine's request, and
 * from the engine's findings back to the job's own terms.
 *
 * Precedence is Slurm's rule for its own options (command line over
 * #SBATCH): an explicit --llm-* option wins over the job's configuration,
 * and where the two disagree a SCRIPT_CONFLICT warning names both values
 * and where each came from.  Values the reader could not know statically
 * become SCRIPT_UNKNOWN infos naming the option that would supply them.
 *
 * Afterwards every --llm-* fix that changes a value the job states is
 * rewritten in the job's terms ("--tensor-model-parallel-size 4
 * (train.sbatch line 6, TP=3)"), in the style the job wrote it (a flag, a
 * YAML or TOML key, a Hydra override), so that the user edits the line
 * that is wrong instead of adding an option.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine/findings.h"
#include "engine/names.h"
#include "engine/options.h"
#include "engine/provenance.h"
#include "jobread.h"
#include "util.h"

/* The vocabulary an inline architecture gets when the job does not say
 * (Megatron reads it from the tokenizer at run time): Llama 2's 32000, the
 * smallest in common use, so that memory is never over-estimated. */
#define JR_DEFAULT_VOCAB 32000

static const char *const jr_field_names[JR_FIELD_COUNT] = {
	[JR_MODEL] = "model", [JR_TP] = "tp", [JR_PP] = "pp", [JR_CP] = "cp", [JR_EP] = "ep",
	[JR_ETP] = "etp", [JR_VPP] = "vpp", [JR_DP] = "dp", [JR_SP] = "sp", [JR_ZERO] = "zero",
	[JR_PRECISION] = "precision", [JR_SEQ] = "seq", [JR_MBS] = "mbs", [JR_GBS] = "gbs",
	[JR_GAS] = "gas", [JR_RECOMPUTE] = "recompute", [JR_TASK] = "task",
	[JR_FRAMEWORK] = "framework", [JR_CKPT_STEPS] = "ckpt_steps",
	[JR_CKPT_TIME] = "ckpt_time", [JR_CKPT_OFF] = "ckpt_off", [JR_WORLD] = "world",
	[JR_NODES] = "nodes", [JR_NPROC_PER_NODE] = "nproc_per_node",
	[JR_LAYOUT_EXACT] = "layout_exact", [JR_ARCH_LAYERS] = "layers",
	[JR_ARCH_HIDDEN] = "hidden", [JR_ARCH_HEADS] = "heads", [JR_ARCH_KV_HEADS] = "kv_heads",
	[JR_ARCH_HEAD_DIM] = "head_dim", [JR_ARCH_FFN] = "ffn_hidden", [JR_ARCH_VOCAB] = "vocab",
	[JR_ARCH_GATED] = "gated_mlp", [JR_ARCH_NORM] = "norm", [JR_ARCH_TIED] = "tied_embeddings",
	[JR_ARCH_MAX_SEQ] = "max_seq", [JR_ARCH_EXPERTS] = "experts", [JR_ARCH_TOPK] = "top_k",
	[JR_ARCH_EXPERT_FFN] = "expert_ffn_hidden", [JR_ARCH_SHARED_EXPERTS] = "shared_experts",
	[JR_ARCH_DENSE_LAYERS] = "dense_layers", [JR_ARCH_Q_LORA] = "q_lora_rank",
	[JR_ARCH_KV_LORA] = "kv_lora_rank", [JR_ARCH_QK_ROPE] = "qk_rope_dim",
	[JR_ARCH_QK_HEAD] = "qk_head_dim", [JR_ARCH_V_HEAD] = "v_head_dim",
	[JR_MAX_SEQS] = "max_seqs", [JR_PREFILL_CHUNK] = "prefill_chunk",
	[JR_ATTENTION] = "attention", [JR_GRAD_DTYPE] = "grad_dtype",
	[JR_OPTIM_BYTES] = "optim_bytes", [JR_FP8_PARAMS] = "fp8_params",
	[JR_MEM_SHARE] = "mem_share", [JR_WEIGHTS] = "weights",
};
/* Designated rows: a field left out is a NULL row, which test_tables
 * finds; the size is the enum's (issue 27). */
_Static_assert(ADV_ARRAY_SIZE(jr_field_names) == JR_FIELD_COUNT, "a name for each field");

const char *jobread_field_name(enum jobread_field f)
{
	return (unsigned)f < JR_FIELD_COUNT && jr_field_names[f] ? jr_field_names[f] : "?";
}

void jobread_src_string(const struct jobread_src *s, char *buf, size_t len)
{
	if (!s->file[0])
		adv_snprintf(buf, len, "%s", s->key);
	else if (s->line > 0)
		adv_snprintf(buf, len, "%s:%d%s%s", s->file, s->line, s->key[0] ? " " : "", s->key);
	else
		adv_snprintf(buf, len, "%s%s%s%s", s->file, s->key[0] ? " " : "", s->key,
			     s->fw_default ? " (framework default)" : "");
}

/* Any --llm-* option of engine/optlist.h (the SPANK ones: --tokens is
 * advisorctl's alone and makes no job an LLM job). */
bool jobread_options_given(const struct adv_workload *wl)
{
	for (int id = 0; id < OPTIONS_COUNT; id++)
		if (options_table[id].sbatch && options_is_set(wl, (enum options_id)id))
			return true;
	return false;
}

/* The int fields of the workload the reader fills, with their ranges
 * (those of options.c, so that a job's value is held to the same bounds
 * as the option's). */
struct int_map {
	enum jobread_field f;
	size_t off;          /* offsetof in struct adv_workload */
	long min, max;
	const char *name;    /* as in the --llm-* option */
};

#define WL(m) offsetof(struct adv_workload, m)

/* The enum fields are bounded by their enum's count: the value comes from
 * the job's text and indexes the names tables (names.c) when printed. */
static const struct int_map int_fields[] = {
	{ JR_TP, WL(layout.tp), 1, 1 << 16, "tp" },
	{ JR_PP, WL(layout.pp), 1, 1 << 16, "pp" },
	{ JR_CP, WL(layout.cp), 1, 1 << 16, "cp" },
	{ JR_EP, WL(layout.ep), 1, 1 << 16, "ep" },
	{ JR_ETP, WL(layout.etp), 1, 1 << 16, "etp" },
	{ JR_VPP, WL(layout.vpp), 1, 1 << 16, "vpp" },
	{ JR_DP, WL(layout.dp), 1, 1 << 24, "dp" },
	{ JR_SP, WL(layout.sp), 0, 1, "sp" },
	{ JR_ZERO, WL(zero), 0, 3, "zero" },
	{ JR_PRECISION, WL(precision), 0, ADV_PREC_COUNT - 1, "precision" },
	{ JR_SEQ, WL(seq), 1, 1 << 24, "seq" },
	{ JR_MBS, WL(mbs), 1, 1 << 16, "mbs" },
	{ JR_GBS, WL(gbs), 1, 1 << 26, "gbs" },
	{ JR_RECOMPUTE, WL(recompute), 0, ADV_RECOMPUTE_COUNT - 1, "recompute" },
	{ JR_TASK, WL(task), 0, ADV_TASK_COUNT - 1, "task" },
	{ JR_FRAMEWORK, WL(framework), 0, ADV_FW_COUNT - 1, "framework" },
	{ JR_ATTENTION, WL(attention), 0, ADV_ATTN_COUNT - 1, "attention" },
	{ JR_GRAD_DTYPE, WL(grad_dtype), 0, ADV_PREC_COUNT - 1, "grad-dtype" },
	/* fp8 master weights and moments at the least, fp32 at the most. */
	{ JR_OPTIM_BYTES, WL(optim_bytes), 3, 12, "optim_bytes" },
	/* A server's sequences at once (vLLM --max-num-seqs, SGLang
	 * --max-running-requests) are what --llm-mbs says for task infer:
	 * KV_CAPACITY_LOW holds them against the KV cache. */
	{ JR_MAX_SEQS, WL(mbs), 1, 1 << 16, "mbs" },
	/* The bounds of SGLang's and vLLM's own: a positive token count. */
	{ JR_PREFILL_CHUNK, WL(prefill_chunk), 1, 1 << 24, "prefill_chunk" },
	{ JR_MEM_SHARE, WL(mem_share), 1, 1000, "mem-share" },
	{ JR_WEIGHTS, WL(weights), 0, ADV_WEIGHTS_COUNT - 1, "weights" },
};

/* The engine's name for a field the reader fills (provenance.c), or
 * ADV_F_COUNT for one no finding rests on by itself. */
static enum adv_field engine_field(enum jobread_field f)
{
	switch (f) {
	case JR_MODEL: return ADV_F_MODEL;
	case JR_TP: return ADV_F_TP;
	case JR_PP: return ADV_F_PP;
	case JR_CP: return ADV_F_CP;
	case JR_EP: return ADV_F_EP;
	case JR_ETP: return ADV_F_ETP;
	case JR_VPP: return ADV_F_VPP;
	case JR_DP: return ADV_F_DP;
	case JR_SP: return ADV_F_SP;
	case JR_ZERO: return ADV_F_ZERO;
	case JR_PRECISION: return ADV_F_PRECISION;
	case JR_SEQ: return ADV_F_SEQ;
	case JR_MBS: case JR_MAX_SEQS: return ADV_F_MBS;
	case JR_GBS: case JR_GAS: return ADV_F_GBS;
	case JR_RECOMPUTE: return ADV_F_RECOMPUTE;
	case JR_TASK: return ADV_F_TASK;
	case JR_FRAMEWORK: return ADV_F_FRAMEWORK;
	case JR_ATTENTION: return ADV_F_ATTENTION;
	case JR_GRAD_DTYPE: return ADV_F_GRAD_DTYPE;
	case JR_CKPT_STEPS: case JR_CKPT_TIME: case JR_CKPT_OFF: return ADV_F_CKPT;
	case JR_WORLD: case JR_NODES: case JR_NPROC_PER_NODE: return ADV_F_WORLD;
	default: return ADV_F_COUNT;
	}
}

/* What the job states is ADV_FROM_JOB, and a framework's documented
 * default that the reader filled in (src.fw_default) ADV_FROM_FRAMEWORK,
 * unless the launch it was read from runs only under a condition not
 * known at submission (the walk found no launch outside one, jobread.c):
 * then whether the job runs it at all is
 * a guess, and the engine judges it as assumed (no reject rests on it). */
static void mark(struct adv_request *req, const struct jobread_out *out, enum jobread_field f,
		 enum adv_origin o)
{
	enum adv_field e = engine_field(f);

	if (o == ADV_FROM_JOB && (unsigned)f < JR_FIELD_COUNT && out->v[f].src.fw_default)
		o = ADV_FROM_FRAMEWORK;
	if (o != ADV_FROM_ASSUMED && out->launch_uncertain)
		o = ADV_FROM_ASSUMED;

	if (e < ADV_F_COUNT)
		req->wl.from[e] = (unsigned char)o;
}

static int *wl_int(struct adv_workload *wl, const struct int_map *m)
{
	return (int *)(void *)((char *)wl + m->off);
}

/* A value as the user reads it: enums by name. */
static void value_name(enum jobread_field f, long long v, char *buf, size_t len)
{
	switch (f) {
	case JR_PRECISION: case JR_GRAD_DTYPE:
		adv_strlcpy(buf, engine_precision_name((int)v), len);
		break;
	case JR_RECOMPUTE:
		adv_strlcpy(buf, engine_recompute_name((int)v), len);
		break;
	case JR_TASK:
		adv_strlcpy(buf, engine_task_name((int)v), len);
		break;
	case JR_FRAMEWORK:
		adv_strlcpy(buf, engine_framework_name((int)v), len);
		break;
	case JR_ATTENTION:
		adv_strlcpy(buf, engine_attention_name((int)v), len);
		break;
	case JR_SP:
		adv_strlcpy(buf, v ? "on" : "off", len);
		break;
	case JR_WEIGHTS:
		adv_strlcpy(buf, v >= 0 && v < ADV_WEIGHTS_COUNT ? options_weights_names[v] : "?", len);
		break;
	default:
		adv_snprintf(buf, len, "%lld", v);
	}
}

static struct adv_finding *pre_slot(struct adv_finding *pre, int max, int *n, const char *code,
				    enum adv_severity sev)
{
	struct adv_finding *f;

	if (*n >= max)
		return NULL;
	f = &pre[(*n)++];
	memset(f, 0, sizeof(*f));
	adv_strlcpy(f->code, code, sizeof(f->code));
	f->severity = sev;
	return f;
}

/* A finding of the reader's own, with the code's default severity. */
static struct adv_finding *pre_add(struct adv_finding *pre, int max, int *n, enum adv_code code)
{
	return pre_slot(pre, max, n, engine_code_name(code), engine_code_severity(code));
}

static void conflict(struct adv_finding *pre, int max, int *n, const char *what,
		     const char *opt_value, const char *job_value, const struct jobread_src *src)
{
	struct adv_finding *f = pre_add(pre, max, n, ADV_CODE_SCRIPT_CONFLICT);
	char where[ADV_SOURCE_MAX];

	if (!f)
		return;
	jobread_src_string(src, where, sizeof(where));
	adv_snprintf(f->message, sizeof(f->message),
		     "the --llm-* option gives %s %s but the job's own configuration gives %s (%s); "
		     "the option wins", what, opt_value, job_value, where);
	adv_snprintf(f->fix, sizeof(f->fix), "make them agree, or drop the option");
}

static void apply_model(const catalog_t *cat, struct jobread_out *out, struct adv_request *req,
			struct adv_finding *pre, int max, int *n)
{
	struct jobread_value *v = &out->v[JR_MODEL];

	if (!v->set || v->unknown)
		return;
	if (req->wl.model[0]) {
		const struct adv_model *a = catalog_find_model(cat, req->wl.model);
		const struct adv_model *b = catalog_find_model(cat, v->s);

		v->overridden = true;
		if (a ? a != b : strcasecmp(req->wl.model, v->s) != 0)
			conflict(pre, max, n, "model", req->wl.model, v->s, &v->src);
		return;
	}
	adv_strlcpy(req->wl.model, v->s, sizeof(req->wl.model));
	req->wl.model_read = true;
	mark(req, out, JR_MODEL, ADV_FROM_JOB);
}

static long long arch_int(const struct jobread_out *out, enum jobread_field f, long long dflt)
{
	const struct jobread_value *v = &out->v[f];

	return v->set && !v->unknown ? v->i : dflt;
}

/* The job's own architecture, when it names no catalog model. */
static void apply_arch(const catalog_t *cat, const struct jobread_out *out, struct adv_request *req,
		       struct adv_finding *pre, int max, int *n)
{
	struct adv_model *m = &req->wl.arch;
	struct adv_finding *f;
	long long layers = arch_int(out, JR_ARCH_LAYERS, 0), hidden = arch_int(out, JR_ARCH_HIDDEN, 0);
	long long heads = arch_int(out, JR_ARCH_HEADS, 0);
	long long kv, ffn, vocab;
	bool gated = arch_int(out, JR_ARCH_GATED, 0) != 0;

	if (req->wl.model[0] && catalog_find_model(cat, req->wl.model))
		return;
	if (layers <= 0 || hidden <= 0 || heads <= 0)
		return;
	kv = arch_int(out, JR_ARCH_KV_HEADS, heads);
	if (kv <= 0 || heads % kv != 0 || layers > 100000 || hidden > (1 << 20) || heads > 65536) {
		f = pre_add(pre, max, n, ADV_CODE_SCRIPT_UNKNOWN);
		if (f) {
			adv_snprintf(f->message, sizeof(f->message),
				     "the job's architecture (%lld layers, hidden %lld, %lld heads, %lld KV heads) "
				     "is not one the engine can cost; memory is not checked",
				     layers, hidden, heads, kv);
			adv_strlcpy(f->fix, "--llm-model=NAME", sizeof(f->fix));
		}
		return;
	}
	/* Megatron's default for SwiGLU: 4h * 2/3 rounded down to a multiple
	 * of 64 (arguments.py); 4h otherwise. */
	ffn = arch_int(out, JR_ARCH_FFN, gated ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden);
	vocab = arch_int(out, JR_ARCH_VOCAB, 0);
	if (vocab <= 0) {
		vocab = JR_DEFAULT_VOCAB;
		f = pre_add(pre, max, n, ADV_CODE_SCRIPT_ASSUMED);
		if (f)
			adv_snprintf(f->message, sizeof(f->message),
				     "the job does not state its vocabulary (it comes from the tokenizer at run "
				     "time); %d tokens assumed for memory and estimates", JR_DEFAULT_VOCAB);
	}
	memset(m, 0, sizeof(*m));
	/* What the engine's messages call it ("the 64 attention heads of
	 * the job's model"); the JSON's "model" says "inline". */
	adv_strlcpy(m->name, "the job's model", sizeof(m->name));
	m->layers = (int)layers;
	m->hidden = (int)hidden;
	m->heads = (int)heads;
	m->kv_heads = (int)kv;
	m->head_dim = (int)arch_int(out, JR_ARCH_HEAD_DIM, hidden / heads);
	m->ffn_hidden = ffn > 0 && ffn < (1 << 24) ? (int)ffn : (int)(4 * hidden);
	m->vocab = vocab < (1 << 24) ? (int)vocab : JR_DEFAULT_VOCAB;
	m->gated_mlp = gated;
	m->norm = arch_int(out, JR_ARCH_NORM, ADV_NORM_LAYERNORM) ? ADV_NORM_LAYERNORM : ADV_NORM_RMSNORM;
	m->tied_embeddings = arch_int(out, JR_ARCH_TIED, 0) != 0;
	/* Not stated (Megatron with RoPE needs no --max-position-embeddings):
	 * the job's own sequence, so that it is not judged too long. */
	m->max_seq = (int)arch_int(out, JR_ARCH_MAX_SEQ, arch_int(out, JR_SEQ, 0));
	if (m->max_seq <= 0 || m->max_seq > (1 << 24))
		m->max_seq = 1 << 24;
	if (arch_int(out, JR_ARCH_EXPERTS, 0) > 1) {
		m->has_moe = true;
		m->moe.experts = (int)arch_int(out, JR_ARCH_EXPERTS, 0);
		if (m->moe.experts > 65536)
			m->moe.experts = 65536;
		m->moe.top_k = (int)arch_int(out, JR_ARCH_TOPK, 2);
		if (m->moe.top_k < 1 || m->moe.top_k > m->moe.experts)
			m->moe.top_k = 2 <= m->moe.experts ? 2 : 1;
		m->moe.expert_ffn_hidden = (int)arch_int(out, JR_ARCH_EXPERT_FFN, m->ffn_hidden);
		if (m->moe.expert_ffn_hidden <= 0 || m->moe.expert_ffn_hidden >= (1 << 24))
			m->moe.expert_ffn_hidden = m->ffn_hidden;
		m->moe.shared_experts = (int)arch_int(out, JR_ARCH_SHARED_EXPERTS, 0);
		if (m->moe.shared_experts < 0 || m->moe.shared_experts > 64)
			m->moe.shared_experts = 0;
		m->moe.dense_layers = (int)arch_int(out, JR_ARCH_DENSE_LAYERS, 0);
		if (m->moe.dense_layers < 0 || m->moe.dense_layers > m->layers)
			m->moe.dense_layers = 0;
	}
	if (arch_int(out, JR_ARCH_KV_LORA, 0) > 0) {
		m->has_mla = true;
		m->mla.q_lora_rank = (int)arch_int(out, JR_ARCH_Q_LORA, 0);
		m->mla.kv_lora_rank = (int)arch_int(out, JR_ARCH_KV_LORA, 0);
		m->mla.qk_rope_dim = (int)arch_int(out, JR_ARCH_QK_ROPE, 64);
		m->mla.qk_head_dim = (int)arch_int(out, JR_ARCH_QK_HEAD, 128);
		m->mla.v_head_dim = (int)arch_int(out, JR_ARCH_V_HEAD, 128);
	}
	req->wl.has_arch = true;
	req->wl.model[0] = '\0';
	mark(req, out, JR_MODEL, ADV_FROM_JOB);
}

/* Enum fields hold engine.h's values; a reader that set the name instead
 * ("bf16", "full") is read through the option's own names. */
static void enum_by_name(struct jobread_value *v, enum jobread_field f)
{
	const char *const *names = f == JR_PRECISION || f == JR_GRAD_DTYPE ? options_precision_names
				 : f == JR_RECOMPUTE ? options_recompute_names
				 : f == JR_TASK ? options_task_names
				 : f == JR_FRAMEWORK ? options_framework_names
				 : f == JR_ATTENTION ? options_attention_names : NULL;
	int e;

	if (!names || !v->s[0] || (v->s[0] >= '0' && v->s[0] <= '9'))
		return;
	if (options_parse_enum("value", v->s, names, &e, NULL, 0) == 0)
		v->i = e;
	else
		v->unknown = true;
}

static void apply_ints(struct jobread_out *out, struct adv_request *req, struct adv_finding *pre,
		       int max, int *n)
{
	for (size_t k = 0; k < ADV_ARRAY_SIZE(int_fields); k++) {
		const struct int_map *m = &int_fields[k];
		struct jobread_value *v = &out->v[m->f];
		int *dst = wl_int(&req->wl, m);
		char a[32], b[32];

		if (v->set && !v->unknown)
			enum_by_name(v, m->f);
		if (!v->set || v->unknown)
			continue;
		if (v->i < m->min || v->i > m->max) {
			struct adv_finding *f = pre_add(pre, max, n, ADV_CODE_SCRIPT_UNKNOWN);
			char where[ADV_SOURCE_MAX];

			jobread_src_string(&v->src, where, sizeof(where));
			if (f)
				adv_snprintf(f->message, sizeof(f->message),
					     "%s = %lld (%s) is out of range (%ld..%ld); ignored",
					     m->name, v->i, where, m->min, m->max);
			v->unknown = true;
			continue;
		}
		if (*dst != ADV_UNSET) {
			v->overridden = true;
			if (*dst != v->i) {
				value_name(m->f, *dst, a, sizeof(a));
				value_name(m->f, v->i, b, sizeof(b));
				conflict(pre, max, n, m->name, a, b, &v->src);
			}
			continue;
		}
		*dst = (int)v->i;
		mark(req, out, m->f, ADV_FROM_JOB);
	}
}

/* Global batch from micro-batch x accumulation x data parallel, when the
 * job states accumulation instead (DeepSpeed, HF, nanotron). */
static void apply_gas(const struct jobread_out *out, struct adv_request *req)
{
	const struct adv_layout *l = &req->wl.layout;
	long long gas = arch_int(out, JR_GAS, 0), world;
	long tpc;

	if (req->wl.gbs != ADV_UNSET || gas <= 0 || gas > (1 << 20) || req->wl.mbs == ADV_UNSET)
		return;
	world = req->wl.world > 0 ? req->wl.world : req->res.gpus;
	if (world <= 0 && req->res.nodes > 0 && req->res.gpus_per_node > 0)
		world = (long long)req->res.nodes * req->res.gpus_per_node;
	tpc = (long)(l->tp > 0 ? l->tp : 1) * (l->pp > 0 ? l->pp : 1) * (l->cp > 0 ? l->cp : 1);
	if (l->dp > 0)
		world = (long long)l->dp * tpc;
	if (world <= 0 || world % tpc != 0)
		return;
	if ((long long)req->wl.mbs * gas * (world / tpc) <= (1 << 26)) {
		req->wl.gbs = (int)(req->wl.mbs * gas * (world / tpc));
		mark(req, out, JR_GAS, ADV_FROM_JOB);
	}
}

static void apply_ckpt(struct jobread_out *out, struct adv_request *req)
{
	struct adv_ckpt_req *ck = &req->wl.ckpt;
	const struct jobread_value *off = &out->v[JR_CKPT_OFF], *t = &out->v[JR_CKPT_TIME];
	const struct jobread_value *st = &out->v[JR_CKPT_STEPS];

	if (ck->given) {
		out->v[JR_CKPT_OFF].overridden = off->set;
		out->v[JR_CKPT_TIME].overridden = t->set;
		out->v[JR_CKPT_STEPS].overridden = st->set;
		return;
	}
	if (off->set && !off->unknown && off->i) {
		ck->given = ck->off = true;
	} else if (t->set && !t->unknown && t->f > 0) {
		ck->given = true;
		ck->interval_s = t->f;
	} else if (st->set && !st->unknown && st->i > 0) {
		ck->given = true;
		ck->steps = (long)st->i;
	}
	if (ck->given)
		mark(req, out, JR_CKPT_STEPS, ADV_FROM_JOB);
}

/* The launch's Slurm step on part of the job: said, since what the other
 * nodes run is not judged. */
static void step_note(const struct jobread_out *out, const struct adv_request *req,
		      struct adv_finding *pre, int max, int *n)
{
	struct adv_finding *f;
	char where[ADV_SOURCE_MAX];

	if (!out->step_nodes && out->step_gpus > 0 && out->step_gpus < req->res.gpus) {
		f = pre_add(pre, max, n, ADV_CODE_STEP_SUBSET);
		if (!f)
			return;
		jobread_src_string(&out->step_src, where, sizeof(where));
		adv_snprintf(f->message, sizeof(f->message),
			     "the launch runs in a Slurm step that asks for %d of the job's %d GPUs "
			     "(%s): it sees only those and is judged against them", out->step_gpus,
			     req->res.gpus, where);
		return;
	}
	if (!out->step_nodes || (out->step_nodes > 0 && req->res.nodes > 0 &&
				 out->step_nodes >= req->res.nodes))
		return;
	f = pre_add(pre, max, n, ADV_CODE_STEP_SUBSET);
	if (!f)
		return;
	jobread_src_string(&out->step_src, where, sizeof(where));
	if (out->step_nodes > 0 && out->het_group > 0)
		adv_snprintf(f->message, sizeof(f->message),
			     "the launch runs in component %d of the heterogeneous job, on %d of the "
			     "job's %d nodes (%s): it is judged against that component; what the "
			     "others run is not judged", out->het_group - 1, out->step_nodes, req->res.nodes,
			     where);
	else if (out->step_nodes > 0)
		adv_snprintf(f->message, sizeof(f->message),
			     "the launch runs in a Slurm step on %d of the job's %d nodes (%s): it is "
			     "judged against those; what the other nodes run is not judged",
			     out->step_nodes, req->res.nodes, where);
	else
		adv_snprintf(f->message, sizeof(f->message),
			     "the launch runs in a Slurm step on a part of the job chosen at run time "
			     "(%s): its node count is not compared with the job's; what the other nodes "
			     "run is not judged", where);
}

/*
 * A job that asks Slurm for no GPU.  Slurm gives a job the GPUs (GRES) it
 * asks for and no others: with whole nodes (--exclusive) it holds their
 * GPUs too, and a step may ask for them; without, it holds none unless
 * the partition gives whole nodes (OverSubscribe=EXCLUSIVE), which the
 * submit host does not know, and a step that asks for GPUs is refused
 * ("Step requested GRES but job doesn't have GRES").  Both observed with
 * Slurm 22.05.8 (select/cons_tres) on the test cluster.  The engine then
 * takes the partition's GPUs per node: said, and in the second case
 * judged as assumed (what rests on the GPU count, DP and the world, is
 * no proof).
 */
static void gpus_note(const struct jobread_out *out, struct adv_request *req,
		      struct adv_finding *pre, int max, int *n)
{
	struct adv_finding *f;
	char where[ADV_SOURCE_MAX] = "";

	if (!out->no_gpu_asked || req->res.gpus > 0 || req->res.gpus_per_node > 0 || !out->is_llm)
		return;
	if (out->gpu_step)
		jobread_src_string(&out->gpu_step_src, where, sizeof(where));
	if (out->whole_nodes) {
		f = pre_add(pre, max, n, ADV_CODE_SCRIPT_ASSUMED);
		if (f)
			adv_snprintf(f->message, sizeof(f->message),
				     "the job asks for whole nodes (--exclusive) and no GPU: Slurm gives "
				     "it the nodes' GPUs with them; the partition's GPUs per node are "
				     "assumed");
		return;
	}
	f = pre_add(pre, max, n, ADV_CODE_NO_GPUS);
	if (!f)
		return;
	adv_snprintf(f->message, sizeof(f->message),
		     "the job asks Slurm for no GPU (no --gpus, --gres=gpu, --gpus-per-node or "
		     "--gpus-per-task, no --exclusive): it holds GPUs only where the partition gives "
		     "whole nodes, which is not known here, so the partition's GPUs per node are "
		     "assumed%s%s%s", where[0] ? "; the step at " : "", where,
		     where[0] ? " asks for GPUs of its own, which Slurm refuses in a job that holds "
				"none (\"Step requested GRES but job doesn't have GRES\")" : "");
	adv_snprintf(f->fix, sizeof(f->fix), "#SBATCH --gpus-per-node=N (the GPUs each node runs on)");
	/* DP and the world rest on the GPU count: not a proof either. */
	if (req->wl.layout.dp == ADV_UNSET)
		req->wl.from[ADV_F_DP] = ADV_FROM_ASSUMED;
	req->wl.from[ADV_F_WORLD] = ADV_FROM_ASSUMED;
}

/* RANK_EXPANDED_ONCE (launch.c): a reject only where the launch surely runs. */
static void rank_note(const struct jobread_out *out, struct adv_finding *pre, int max, int *n)
{
	struct adv_finding *f;
	enum adv_severity sev = out->rank_sev;

	if (!out->rank_once.message[0])
		return;
	if (sev == ADV_SEV_REJECT && out->launch_uncertain)
		sev = ADV_SEV_WARN;
	f = pre_slot(pre, max, n, out->rank_once.code, sev);
	if (!f)
		return;
	adv_strlcpy(f->message, out->rank_once.message, sizeof(f->message));
	adv_strlcpy(f->fix, out->rank_once.fix, sizeof(f->fix));
}

static void apply_world(const struct jobread_out *out, struct adv_request *req)
{
	/* A heterogeneous job: all its components' resources (jobtypes.h). */
	if (out->het_nodes > 0) {
		req->res.nodes = out->het_nodes;
		req->res.gpus = out->het_gpus;
		req->res.gpus_per_node = out->het_gpn;
	}
	const struct jobread_value *w = &out->v[JR_WORLD], *nd = &out->v[JR_NODES];

	if (w->set && !w->unknown && w->i > 0 && w->i <= (1 << 24)) {
		req->wl.world = (int)w->i;
		mark(req, out, JR_WORLD, ADV_FROM_JOB);
	}
	if (nd->set && !nd->unknown && nd->i > 0 && nd->i <= (1 << 20))
		req->wl.world_nodes = (int)nd->i;
	if (out->step_nodes == -1 || (out->step_nodes > 0 && out->step_nodes <= (1 << 20)))
		req->wl.step_nodes = out->step_nodes;
	if (out->step_nodes >= 0 && out->step_gpus > 0 && out->step_gpus <= (1 << 24))
		req->wl.step_gpus = out->step_gpus;
	req->wl.kv_fp8 = out->kv_fp8;
	req->wl.share_static = out->share_static;
	req->wl.layout_exact = arch_int(out, JR_LAYOUT_EXACT, 0) != 0;
}

static void apply_unknowns(const struct jobread_out *out, struct adv_request *req,
			   struct adv_finding *pre, int max, int *n)
{
	for (int f = 0; f < JR_FIELD_COUNT; f++) {
		const struct jobread_value *v = &out->v[f];
		struct adv_finding *fd;
		char where[ADV_SOURCE_MAX];
		enum adv_field e = engine_field((enum jobread_field)f);

		if (!v->set || !v->unknown || v->overridden)
			continue;
		/* The job states it, but not in a form known before it runs:
		 * whatever the engine takes instead is a guess (provenance.c). */
		if (e < ADV_F_COUNT && req->wl.from[e] == ADV_FROM_UNSET &&
		    !provenance_is_set(&req->wl, e))
			req->wl.from[e] = ADV_FROM_ASSUMED;
		/* The model is what matters; an unknown architecture key is
		 * reported once, through the model. */
		if (f == JR_MODEL && req->wl.model[0])
			continue;
		fd = pre_add(pre, max, n, ADV_CODE_SCRIPT_UNKNOWN);
		if (!fd)
			return;
		jobread_src_string(&v->src, where, sizeof(where));
		adv_snprintf(fd->message, sizeof(fd->message),
			     "the job's %s is not known before it runs (%s: %s)",
			     jobread_field_name((enum jobread_field)f), where, v->s);
		if (f == JR_WORLD || f == JR_NODES || f == JR_NPROC_PER_NODE)
			adv_strlcpy(fd->fix, "", sizeof(fd->fix));
		else if (f == JR_TP || f == JR_PP || f == JR_CP || f == JR_EP || f == JR_ETP ||
			 f == JR_VPP || f == JR_DP || f == JR_SP)
			adv_strlcpy(fd->fix, "--llm-layout=LIST", sizeof(fd->fix));
		else if (f == JR_ZERO)
			adv_strlcpy(fd->fix, "--llm-zero=0..3", sizeof(fd->fix));
		else if (f == JR_SEQ || f == JR_MBS || f == JR_GBS || f == JR_PRECISION)
			adv_snprintf(fd->fix, sizeof(fd->fix), "--llm-%s=...",
				     jobread_field_name((enum jobread_field)f));
		else if (f == JR_RECOMPUTE)
			adv_strlcpy(fd->fix, "--llm-recompute=none|selective|full", sizeof(fd->fix));
		else if (f == JR_GAS)
			adv_strlcpy(fd->fix, "--llm-gbs=...", sizeof(fd->fix));
		else if (f == JR_CKPT_STEPS || f == JR_CKPT_TIME || f == JR_CKPT_OFF)
			adv_strlcpy(fd->fix, "--llm-ckpt=DURATION", sizeof(fd->fix));
		else
			adv_strlcpy(fd->fix, "--llm-model=NAME", sizeof(fd->fix));
	}
}

#define CAN(f) ADV_USES(ADV_F_##f)
#define CAN_LAYOUT (CAN(TP) | CAN(PP) | CAN(CP) | CAN(EP) | CAN(VPP))
#define CAN_ALL (CAN_LAYOUT | CAN(ZERO) | CAN(RECOMPUTE))

/*
 * What each trainer's own flags and keys can set (issue 26: a fix offers
 * only what the job's framework has), whether its default is plain data
 * parallelism, and whether advisor models its activation memory.
 * - megatron, nemo: Megatron-Core's TP/PP/CP/EP and virtual stages
 *   (megatron/training/arguments.py), the distributed optimizer, recompute;
 *   --use-distributed-optimizer is off unless given (arguments.py).
 * - neox: GPT-NeoX's model/pipe parallel sizes and DeepSpeed ZeRO
 *   (neox_arguments/neox_args.py); no context parallelism, no virtual
 *   stages; zero_optimization.stage defaults to 0.
 * - nanotron: tp/pp/dp in its parallelism config (nanotron/config/
 *   parallelism_config.py), optimizer.zero_stage 0 by default; no
 *   virtual stages.
 * - hf, trl, axolotl: the HF Trainer (transformers TrainingArguments):
 *   DDP unless --deepspeed or --fsdp, gradient_checkpointing for
 *   recompute, no tensor, pipeline, context or expert parallelism.
 * - torchtitan: tensor, pipeline, context and expert parallel degrees and
 *   activation checkpointing in its job config
 *   (torchtitan/config/job_config.py), FSDP2 sharding.
 * - torchtune, llama-cookbook, olmo: FSDP training loops with activation
 *   checkpointing and no model parallel flags in their recipes.
 * - llm.c: train_gpt2cu is data parallel only; -z 1 shards the optimizer
 *   state (ZeRO-1, llmc/zero.cuh), -r recomputes GELU (and LayerNorm).
 * - levanter: JAX, its own rematerialisation (haliax), which advisor does
 *   not model: the least memory counts no activations.
 * - vllm, sglang: --tensor-parallel-size, --pipeline-parallel-size (vLLM
 *   engine/arg_utils.py; SGLang --tp/--pp server_args.py), expert
 *   parallelism; a server has no optimizer or recompute.
 * - trtllm: --tp_size, --pp_size, --cp_size, --ep_size (TensorRT-LLM
 *   commands/serve.py); tgi: --num-shard (tensor parallel); lmdeploy:
 *   --tp; llama.cpp, ollama, basaran and lm-eval-hf (lm_eval's
 *   transformers backend, parallelize=True): the layers spread over the
 *   visible GPUs, as pipeline stages, so more GPUs is their one layout
 *   change; lm-eval: vLLM's tensor_parallel_size in its model arguments
 *   (fw_serve.c, fw_lighteval.c).
 */
static const struct trainer_caps {
	const char *name;
	unsigned can;          /* ADV_USES bits of what its flags set */
	bool ddp_by_default;   /* no sharding unless the job names one */
	bool act_unmodeled;
} trainers[] = {
	{ "megatron", CAN_ALL, true, false },
	{ "nemo", CAN_ALL, false, false },
	{ "neox", CAN(TP) | CAN(PP) | CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "nanotron", CAN(TP) | CAN(PP) | CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "hf", CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "trl", CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "axolotl", CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "llamafactory", CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "openrlhf", CAN(ZERO) | CAN(RECOMPUTE), false, false },
	{ "torchtitan", CAN(TP) | CAN(PP) | CAN(CP) | CAN(EP) | CAN(ZERO) | CAN(RECOMPUTE),
	  false, false },
	{ "torchtune", CAN(RECOMPUTE), false, false },
	{ "llama-cookbook", CAN(RECOMPUTE), false, false },
	{ "olmo", CAN(RECOMPUTE), false, false },
	{ "llm.c", CAN(ZERO) | CAN(RECOMPUTE), true, false },
	{ "levanter", CAN(TP), false, true },
	{ "vllm", CAN(TP) | CAN(PP) | CAN(EP), false, false },
	{ "sglang", CAN(TP) | CAN(PP) | CAN(EP), false, false },
	{ "trtllm", CAN(TP) | CAN(PP) | CAN(CP) | CAN(EP), false, false },
	{ "tgi", CAN(TP), false, false },
	{ "lmdeploy", CAN(TP), false, false },
	{ "llama.cpp", CAN(PP), false, false },
	{ "ollama", CAN(PP), false, false },
	{ "basaran", CAN(PP), false, false },
	{ "lm-eval", CAN(TP), false, false },
	{ "lm-eval-hf", CAN(PP), false, false },
};

static const struct trainer_caps *trainer_caps(const char *name)
{
	for (size_t k = 0; k < ADV_ARRAY_SIZE(trainers); k++)
		if (!strcmp(name, trainers[k].name))
			return &trainers[k];
	return NULL;
}

/*
 * ZeRO where the trainer's own default is plain data parallelism and the
 * job names no sharding (trainers[] above): not when a config file the
 * job names could not be read, which might have said otherwise.  What the
 * trainer cannot change is fixed for fixes and plans (workload.fixed).
 */
static void apply_framework_defaults(const struct jobread_out *out, struct adv_request *req)
{
	const struct trainer_caps *t = trainer_caps(out->trainer);
	bool known = t && t->ddp_by_default;

	for (int i = 0; i < out->n_notes; i++)
		if (!strcmp(out->notes[i].code, engine_code_name(ADV_CODE_SCRIPT_CONFIG_ERROR)))
			known = false;
	if (known && req->wl.zero == ADV_UNSET && !out->v[JR_ZERO].set &&
	    req->wl.from[ADV_F_ZERO] == ADV_FROM_UNSET)
		req->wl.from[ADV_F_ZERO] = ADV_FROM_FRAMEWORK;
	if (t) {
		req->wl.fixed = CAN_ALL & ~t->can;
		req->wl.act_unmodeled = t->act_unmodeled;
	}
}

int jobread_apply(const catalog_t *cat, struct jobread_out *out, struct adv_request *req,
		  struct adv_finding *pre, int max)
{
	int n = 0;

	for (int i = 0; i < out->n_notes; i++) {
		/* A note is info, but for the codes whose meaning is a warning
		 * the reader states as a fact (SCRIPT_CONFLICT, GPUS_IDLE of a
		 * program read, fw_python.c); SCRIPT_NOT_FOLLOWED weighs as the
		 * policy says (engine.c). */
		enum adv_code c = engine_code_lookup(out->notes[i].code);
		enum adv_severity sev = c == ADV_CODE_SCRIPT_CONFLICT || c == ADV_CODE_GPUS_IDLE
					? engine_code_severity(c) : ADV_SEV_INFO;
		struct adv_finding *f = pre_slot(pre, max, &n, out->notes[i].code, sev);

		if (f) {
			adv_strlcpy(f->message, out->notes[i].message, sizeof(f->message));
			adv_strlcpy(f->fix, out->notes[i].fix, sizeof(f->fix));
		}
	}
	apply_model(cat, out, req, pre, max, &n);
	apply_arch(cat, out, req, pre, max, &n);
	apply_ints(out, req, pre, max, &n);
	if (out->v[JR_FP8_PARAMS].set && !out->v[JR_FP8_PARAMS].unknown && out->v[JR_FP8_PARAMS].i)
		req->wl.fp8_params = true;
	apply_world(out, req);
	step_note(out, req, pre, max, &n);
	rank_note(out, pre, max, &n);
	if (out->split_list.message[0]) {
		struct adv_finding *f = pre_slot(pre, max, &n, out->split_list.code,
						 out->split_uncertain || out->split_lines
						 ? ADV_SEV_WARN : ADV_SEV_REJECT);

		if (f) {
			adv_strlcpy(f->message, out->split_list.message, sizeof(f->message));
			adv_strlcpy(f->fix, out->split_list.fix, sizeof(f->fix));
		}
	}
	gpus_note(out, req, pre, max, &n);
	apply_gas(out, req);
	apply_ckpt(out, req);
	apply_unknowns(out, req, pre, max, &n);
	apply_framework_defaults(out, req);
	return n;
}

/* ---- after the engine -------------------------------------------------------------- */

static void add_source(struct adv_result *res, const char *field, const char *where)
{
	struct adv_source *s;

	if (res->n_sources >= ADV_MAX_SOURCES)
		return;
	s = &res->sources[res->n_sources++];
	adv_strlcpy(s->field, field, sizeof(s->field));
	adv_strlcpy(s->where, where, sizeof(s->where));
}

static void sources_of(const struct jobread_out *out, struct adv_result *res)
{
	for (int f = 0; f < JR_FIELD_COUNT; f++) {
		const struct jobread_value *v = &out->v[f];
		char where[ADV_SOURCE_MAX];

		if (!v->set || v->unknown || (!v->src.file[0] && !v->src.key[0]))
			continue;
		if (v->overridden)
			adv_snprintf(where, sizeof(where), "--llm-* option (the job's %s:%d %s overridden)",
				     v->src.file, v->src.line, v->src.key);
		else
			jobread_src_string(&v->src, where, sizeof(where));
		add_source(res, jobread_field_name((enum jobread_field)f), where);
	}
	for (int f = 0; f < JR_FIELD_COUNT && res->n_unknown < ADV_MAX_UNKNOWN; f++) {
		const struct jobread_value *v = &out->v[f];
		char where[ADV_SOURCE_MAX];

		if (!v->set || !v->unknown || v->overridden)
			continue;
		jobread_src_string(&v->src, where, sizeof(where));
		adv_snprintf(res->unknown[res->n_unknown++], ADV_SOURCE_MAX, "%s (%s)",
			     jobread_field_name((enum jobread_field)f), where);
	}
}

/* "KEY VALUE" as the job writes it. */
static void job_term(const struct jobread_src *s, const char *value, char *buf, size_t len)
{
	const char *leaf = strrchr(s->key, '.');

	leaf = leaf && (s->style == JR_STYLE_YAML || s->style == JR_STYLE_TOML ||
			s->style == JR_STYLE_JSON) ? leaf + 1 : s->key;
	switch (s->style) {
	case JR_STYLE_FLAG_EQ:
	case JR_STYLE_OVERRIDE:
	case JR_STYLE_ENV:
		adv_snprintf(buf, len, "%s=%s", s->key, value);
		break;
	case JR_STYLE_YAML:
		adv_snprintf(buf, len, "%s: %s", leaf, value);
		break;
	case JR_STYLE_JSON:
		adv_snprintf(buf, len, "\"%s\": %s", leaf, value);
		break;
	case JR_STYLE_TOML:
		adv_snprintf(buf, len, "%s = %s", leaf, value);
		break;
	case JR_STYLE_DERIVED:
		/* Nothing in the job to change: a derived value has no flag of
		 * its own there, nor a default the job left out. */
		buf[0] = '\0';
		break;
	case JR_STYLE_BOOL:
		/* A bare flag can only be taken away: "--use-distributed-optimizer"
		 * cannot say ZeRO-3, "--gradient_checkpointing" cannot say
		 * selective.  Other values have no form in the job's terms. */
		if (!strcmp(value, "off") || !strcmp(value, "0") || !strcmp(value, "none"))
			adv_snprintf(buf, len, "remove %s", s->key);
		else
			buf[0] = '\0';
		break;
	default:
		adv_snprintf(buf, len, "%s %s", s->key, value);
	}
}

static void upper(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (s[i] >= 'a' && s[i] <= 'z') ? (char)(s[i] - 32) : s[i];
	buf[i] = '\0';
}

/* Appends "<key value> (<file> line <n>, FIELD=old)" for one changed field. */
static void fix_field(const struct jobread_out *out, enum jobread_field f, const char *newval,
		      char *buf, size_t len)
{
	const struct jobread_value *v = &out->v[f];
	char term[ADV_MSG_MAX], name[32], old[64];
	size_t used = strlen(buf);

	if (!v->set || v->unknown || v->overridden || !v->src.key[0])
		return;
	value_name(f, v->i, old, sizeof(old));
	if (f == JR_MODEL || f == JR_CKPT_TIME)
		adv_strlcpy(old, v->s, sizeof(old));
	if (!strcmp(v->s, newval) || !strcmp(old, newval))
		return;
	job_term(&v->src, newval, term, sizeof(term));
	if (!term[0])
		return;
	upper(jobread_field_name(f), name, sizeof(name));
	if (v->src.line > 0 && v->src.val_line > 0)
		/* The value is a variable's: the line to edit is its assignment. */
		adv_snprintf(buf + used, len - used, "%s%s (%s line %d, %s=%s, set at %s line %d)",
			     used ? "; " : "", term, v->src.file, v->src.line, name, old,
			     v->src.val_file, v->src.val_line);
	else if (v->src.line > 0)
		adv_snprintf(buf + used, len - used, "%s%s (%s line %d, %s=%s)", used ? "; " : "",
			     term, v->src.file, v->src.line, name, old);
	else
		adv_snprintf(buf + used, len - used, "%s%s (%s, %s=%s)", used ? "; " : "", term,
			     v->src.file, name, old);
}

/* The value of "--llm-NAME=" in a fix, copied up to a blank or ';'. */
static bool fix_option(const char *fix, const char *name, char *buf, size_t len)
{
	char pat[32];
	const char *p;
	size_t n;

	adv_snprintf(pat, sizeof(pat), "--llm-%s=", name);
	p = strstr(fix, pat);
	if (!p)
		return false;
	p += strlen(pat);
	n = strcspn(p, " ;()");
	if (n == 0 || n >= len)
		return false;
	memcpy(buf, p, n);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == ',')
		buf[--n] = '\0';
	return true;
}

static void layout_fix(const struct jobread_out *out, const char *list, char *buf, size_t len)
{
	static const enum jobread_field fields[] = { JR_TP, JR_PP, JR_CP, JR_EP, JR_ETP, JR_VPP, JR_DP };
	struct adv_layout l = { ADV_UNSET, ADV_UNSET, ADV_UNSET, ADV_UNSET, ADV_UNSET, ADV_UNSET,
				ADV_UNSET, ADV_UNSET };
	char err[128], v[16];
	int vals[7];

	if (options_parse_layout(list, &l, err, sizeof(err)) != 0)
		return;
	vals[0] = l.tp; vals[1] = l.pp; vals[2] = l.cp; vals[3] = l.ep;
	vals[4] = l.etp; vals[5] = l.vpp; vals[6] = l.dp;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(fields); k++) {
		if (vals[k] == ADV_UNSET)
			continue;
		adv_snprintf(v, sizeof(v), "%d", vals[k]);
		fix_field(out, fields[k], v, buf, len);
	}
	if (l.sp != ADV_UNSET)
		fix_field(out, JR_SP, l.sp ? "1" : "0", buf, len);
}

static void ckpt_fix(const struct jobread_out *out, const struct adv_result *res, const char *dur,
		     char *buf, size_t len)
{
	const struct jobread_value *st = &out->v[JR_CKPT_STEPS];
	double secs;
	char err[128], v[32], tmp[ADV_MSG_MAX] = "";

	if (options_parse_duration(dur, &secs, err, sizeof(err)) != 0)
		return;
	if (st->set && !st->unknown && !st->overridden && res->has_estimate &&
	    res->estimate.step_time_s > 0) {
		long steps = lround(secs / res->estimate.step_time_s);

		adv_snprintf(v, sizeof(v), "%ld", steps > 0 ? steps : 1);
		fix_field(out, JR_CKPT_STEPS, v, tmp, sizeof(tmp));
		if (tmp[0])
			adv_snprintf(buf + strlen(buf), len - strlen(buf),
				     "%s%s, about %s at the estimated %.2f s per step",
				     buf[0] ? "; " : "", tmp, dur, res->estimate.step_time_s);
		return;
	}
	fix_field(out, JR_CKPT_TIME, dur, buf, len);
}

/* WORLD_SIZE_MISMATCH, or GPUS_IDLE of a launch that starts too few
 * processes, without a layout fix: the launcher's counts. */
static void world_fix(const struct jobread_out *out, const struct adv_result *res, char *buf,
		      size_t len)
{
	char v[16];
	/* A launch in a Slurm step on part of the job is fixed to that step. */
	bool part = out->step_nodes > 0 && out->step_nodes < res->layout.nodes;
	int nodes = part ? out->step_nodes : res->layout.nodes;
	/* The step's own GPUs (a component, or srun --gres=gpu:N). */
	int sg = out->step_gpus > 0 && out->step_gpus < res->layout.gpus ? out->step_gpus : 0;
	int gpn = sg > 0 && nodes > 0 ? sg / nodes : res->layout.gpus_per_node;
	int gpus = sg > 0 ? sg : part ? nodes * gpn : res->layout.gpus;

	if (!res->has_layout)
		return;
	adv_snprintf(v, sizeof(v), "%d", nodes);
	fix_field(out, JR_NODES, v, buf, len);
	if (gpn > 0) {
		adv_snprintf(v, sizeof(v), "%d", gpn);
		fix_field(out, JR_NPROC_PER_NODE, v, buf, len);
	}
	if (!buf[0] && out->v[JR_WORLD].set && gpus > 0) {
		adv_snprintf(v, sizeof(v), "%d", gpus);
		fix_field(out, JR_WORLD, v, buf, len);
	}
}

/*
 * One setting of a BEST_PLAN: true when the job needs no change for it
 * (the plan keeps the job's resolved value) or when the change is written
 * in the job's terms; false when the job would need a setting it does not
 * state, or states in a form that cannot say the new value.
 */
/*
 * A Megatron-LM command line: the job wrote the trainer's own flags.  A
 * setting it does not state can then be added in its terms, with the flag
 * Megatron-LM's arguments.py defines for it; the line given is that of
 * another flag of the same command.  Returns the anchor, NULL when the job
 * is not one.
 */
static const struct jobread_value *megatron_anchor(const struct jobread_out *out,
						   const struct adv_result *res)
{
	static const enum jobread_field anchors[] = { JR_TP, JR_PP, JR_MBS, JR_GBS, JR_SEQ };

	if (res->framework != ADV_FW_MEGATRON)
		return NULL;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(anchors); k++) {
		const struct jobread_value *v = &out->v[anchors[k]];

		if (v->set && !v->overridden && !strncmp(v->src.key, "--", 2) &&
		    !strchr(v->src.key, '_') && !strchr(v->src.key, '.'))
			return v;
	}
	return NULL;
}

static bool megatron_add(const struct jobread_value *anchor, enum jobread_field f,
			 const char *newval, char *buf, size_t len)
{
	static const struct {
		enum jobread_field f;
		const char *flag;
	} sizes[] = {
		{ JR_TP, "--tensor-model-parallel-size" }, { JR_PP, "--pipeline-model-parallel-size" },
		{ JR_CP, "--context-parallel-size" }, { JR_EP, "--expert-model-parallel-size" },
		{ JR_ETP, "--expert-tensor-parallel-size" },
		{ JR_VPP, "--num-virtual-stages-per-pipeline-rank" }, { JR_MBS, "--micro-batch-size" },
	};
	char term[160] = "";
	size_t used = strlen(buf);

	for (size_t k = 0; k < ADV_ARRAY_SIZE(sizes); k++)
		if (sizes[k].f == f)
			adv_snprintf(term, sizeof(term), "%s %s", sizes[k].flag, newval);
	if (f == JR_ZERO && !strcmp(newval, "1"))
		adv_strlcpy(term, "--use-distributed-optimizer", sizeof(term));
	if (f == JR_RECOMPUTE && !strcmp(newval, "selective"))
		adv_strlcpy(term, "--recompute-granularity selective", sizeof(term));
	if (f == JR_RECOMPUTE && !strcmp(newval, "full"))
		adv_strlcpy(term, "--recompute-granularity full --recompute-method uniform "
			    "--recompute-num-layers 1", sizeof(term));
	if (!term[0])
		return false;
	adv_snprintf(buf + used, len - used, "%sadd %s (%s line %d)", used ? "; " : "", term,
		     anchor->src.file, anchor->src.line);
	return true;
}

static bool plan_setting(const struct jobread_out *out, const struct jobread_value *anchor,
			 enum jobread_field f, const char *newval, const char *cur, char *buf,
			 size_t len)
{
	size_t before = strlen(buf);

	if (!strcmp(newval, cur))
		return true;
	if (!out->v[f].set && anchor)
		return megatron_add(anchor, f, newval, buf, len);
	fix_field(out, f, newval, buf, len);
	return strlen(buf) > before;
}

/*
 * BEST_PLAN is a whole plan: a fix in the job's terms must carry every
 * setting it changes, or the user who pastes it gets a layout the planner
 * never checked.  When one setting has no term in the job (ZeRO under a
 * launcher that does not say it, selective recompute behind a bare flag),
 * the fix stays in --llm-* terms only.
 */
static void best_plan_fix(const struct jobread_out *out, const struct adv_result *res,
			  struct adv_finding *f)
{
	static const enum jobread_field fields[] = { JR_TP, JR_PP, JR_CP, JR_EP, JR_ETP, JR_VPP };
	struct adv_layout l = { ADV_UNSET, ADV_UNSET, ADV_UNSET, ADV_UNSET, ADV_UNSET, ADV_UNSET,
				ADV_UNSET, ADV_UNSET };
	const struct adv_layout_out *cur = &res->layout;
	const struct jobread_value *anchor = megatron_anchor(out, res);
	const int now[] = { cur->tp, cur->pp, cur->cp, cur->ep, cur->etp, cur->vpp };
	char val[128], err[128], nv[16], cv[32], *buf = f->fix_job;
	size_t len = sizeof(f->fix_job);
	bool ok = res->has_layout;
	int want[6];

	buf[0] = '\0';
	if (!ok || !fix_option(f->fix, "layout", val, sizeof(val)) ||
	    options_parse_layout(val, &l, err, sizeof(err)) != 0)
		return;
	/* The plan's list names the sizes above 1; the others are 1. */
	want[0] = l.tp; want[1] = l.pp; want[2] = l.cp; want[3] = l.ep;
	want[4] = l.etp; want[5] = l.vpp;
	for (size_t k = 0; k < ADV_ARRAY_SIZE(fields) && ok; k++) {
		int w = want[k] == ADV_UNSET ? 1 : want[k];

		/* Expert TP follows TP when neither the plan nor the job says. */
		if (k == 4 && want[k] == ADV_UNSET && !out->v[JR_ETP].set)
			continue;
		adv_snprintf(nv, sizeof(nv), "%d", w);
		adv_snprintf(cv, sizeof(cv), "%d", now[k] > 0 ? now[k] : 1);
		ok = plan_setting(out, anchor, fields[k], nv, cv, buf, len);
	}
	if (ok && fix_option(f->fix, "zero", val, sizeof(val))) {
		adv_snprintf(cv, sizeof(cv), "%d", cur->zero);
		ok = plan_setting(out, anchor, JR_ZERO, val, cv, buf, len);
	}
	if (ok && fix_option(f->fix, "recompute", val, sizeof(val)))
		ok = plan_setting(out, anchor, JR_RECOMPUTE, val, engine_recompute_name(res->recompute),
				  buf, len);
	if (ok && fix_option(f->fix, "mbs", val, sizeof(val))) {
		adv_snprintf(cv, sizeof(cv), "%d", res->mbs);
		ok = plan_setting(out, anchor, out->v[JR_MAX_SEQS].set ? JR_MAX_SEQS : JR_MBS, val, cv,
				  buf, len);
	}
	/* A plan cut short by the buffer is not the plan. */
	if (!ok || strlen(buf) + 1 >= len)
		buf[0] = '\0';
}

static void finding_fix(const struct jobread_out *out, const struct adv_result *res,
			struct adv_finding *f)
{
	static const struct {
		const char *opt;
		enum jobread_field f;
	} simple[] = {
		{ "seq", JR_SEQ }, { "mbs", JR_MBS }, { "mbs", JR_MAX_SEQS }, { "gbs", JR_GBS },
		{ "zero", JR_ZERO }, { "model", JR_MODEL },
	};
	char val[128];

	if (engine_finding_is(f, ADV_CODE_BEST_PLAN)) {
		best_plan_fix(out, res, f);
		return;
	}
	f->fix_job[0] = '\0';
	if (fix_option(f->fix, "layout", val, sizeof(val)))
		layout_fix(out, val, f->fix_job, sizeof(f->fix_job));
	for (size_t k = 0; k < ADV_ARRAY_SIZE(simple); k++)
		if (fix_option(f->fix, simple[k].opt, val, sizeof(val)))
			fix_field(out, simple[k].f, val, f->fix_job, sizeof(f->fix_job));
	if (fix_option(f->fix, "recompute", val, sizeof(val)))
		fix_field(out, JR_RECOMPUTE, val, f->fix_job, sizeof(f->fix_job));
	if (fix_option(f->fix, "ckpt", val, sizeof(val)))
		ckpt_fix(out, res, val, f->fix_job, sizeof(f->fix_job));
	if (!f->fix_job[0] && (engine_finding_is(f, ADV_CODE_WORLD_SIZE_MISMATCH) ||
			       (engine_finding_is(f, ADV_CODE_GPUS_IDLE) && out->v[JR_WORLD].set)))
		world_fix(out, res, f->fix_job, sizeof(f->fix_job));
	/* A resource fix with the layout that uses it (fixcheck.c): the
	 * job's flags alone would leave it on the GPUs it has. */
	if (f->fix_job[0] && !strncmp(f->fix, "request ", 8)) {
		char both[ADV_FIX_JOB_MAX];
		size_t n = strcspn(f->fix, ";");
		const char *with = strstr(f->fix, " with ");

		if (with && (size_t)(with - f->fix) < n)
			n = (size_t)(with - f->fix);
		adv_snprintf(both, sizeof(both), "%.*s; %s", (int)n, f->fix, f->fix_job);
		adv_strlcpy(f->fix_job, both, sizeof(f->fix_job));
	}
}

void jobread_annotate(const struct jobread_out *out, const struct adv_request *req,
		      struct adv_result *res)
{
	res->llm_job = (out && out->is_llm) || jobread_options_given(&req->wl);
	res->not_llm_why[0] = '\0';
	if (!res->llm_job && out)
		adv_strlcpy(res->not_llm_why, out->not_llm_why, sizeof(res->not_llm_why));
	if (req->wl.model[0])
		adv_strlcpy(res->model, req->wl.model, sizeof(res->model));
	else if (req->wl.has_arch)
		adv_strlcpy(res->model, "inline", sizeof(res->model));
	else
		res->model[0] = '\0';
	res->n_sources = 0;
	res->n_unknown = 0;
	if (!out)
		return;
	sources_of(out, res);
	/* Not an LLM job: the program read, and what is not in it. */
	if (!res->llm_job && out->program_why[0])
		add_source(res, "program", out->program_why);
	for (int i = 0; i < res->n_findings; i++)
		finding_fix(out, res, &res->findings[i]);
}
