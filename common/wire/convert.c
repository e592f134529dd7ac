/*
 * convert.c - engine structs <-> protobuf-c messages (proto/advisor.proto).
 *
 * The plugin, advisorctl and the daemon all go through these functions so
 * that a request means the same thing on both ends of the socket and a
 * result survives the round trip bit for bit (doubles are sent as doubles).
 * Building never allocates: messages are laid out in caller storage and point
 * into the source strings.  Decoding validates ranges so that the engine
 * only ever sees values it can index with (enums) or divide by (sizes).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "convert.h"
#include "util.h"

/* The wire's Context is enum adv_context, value for value (a cast either
 * way), and no more of them: the log's tables are indexed by it. */
_Static_assert((int)ADVISOR__CONTEXT__CTX_ADVISORCTL == (int)ADV_CTX_ADVISORCTL &&
	       (int)ADVISOR__CONTEXT__CTX_SBATCH == (int)ADV_CTX_SBATCH &&
	       (int)ADVISOR__CONTEXT__CTX_SALLOC == (int)ADV_CTX_SALLOC &&
	       (int)ADVISOR__CONTEXT__CTX_SRUN == (int)ADV_CTX_SRUN &&
	       (int)ADVISOR__CONTEXT__CTX_STEP == (int)ADV_CTX_STEP &&
	       (int)ADVISOR__CONTEXT__CTX_SUBMIT == (int)ADV_CTX_SUBMIT &&
	       (int)ADVISOR__CONTEXT__CTX_SUBMIT + 1 == (int)ADV_CTX_COUNT,
	       "the wire's contexts are advisor's");

/* Protobuf-c wants char * for strings it will only read while packing. */
static char *pb_str(const char *s)
{
	union { const char *c; char *m; } u = { .c = s };

	return (s && *s) ? u.m : NULL;
}

#define SET_INT(msg, field, v) \
	do { if ((v) != ADV_UNSET) { (msg)->has_##field = 1; (msg)->field = (v); } } while (0)

Advisor__Resources *convert_resources_to_pb(const struct adv_resources *r,
					    struct convert_resources_pb *buf)
{
	Advisor__Resources *m = &buf->res;

	advisor__resources__init(m);
	m->gpu = pb_str(r->gpu);
	if (r->gpus > 0) {
		m->has_gpus = 1;
		m->gpus = r->gpus;
	}
	if (r->nodes > 0) {
		m->has_nodes = 1;
		m->nodes = r->nodes;
	}
	if (r->gpus_per_node > 0) {
		m->has_gpus_per_node = 1;
		m->gpus_per_node = r->gpus_per_node;
	}
	m->partition = pb_str(r->partition);
	m->constraint = pb_str(r->constraint);
	return m;
}

static void layout_to_pb(const struct adv_layout *l, Advisor__Layout *m)
{
	advisor__layout__init(m);
	SET_INT(m, tp, l->tp);
	SET_INT(m, pp, l->pp);
	SET_INT(m, cp, l->cp);
	SET_INT(m, ep, l->ep);
	SET_INT(m, etp, l->etp);
	SET_INT(m, vpp, l->vpp);
	SET_INT(m, dp, l->dp);
	if (l->sp != ADV_UNSET) {
		m->has_sp = 1;
		m->sp = l->sp != 0;
	}
}

Advisor__Workload *convert_workload_to_pb(const struct adv_workload *w,
					  struct convert_workload_pb *buf)
{
	Advisor__Workload *m = &buf->wl;

	advisor__workload__init(m);
	m->model = pb_str(w->model);
	layout_to_pb(&w->layout, &buf->layout);
	m->layout = &buf->layout;
	SET_INT(m, zero, w->zero);
	SET_INT(m, precision, w->precision);
	SET_INT(m, seq, w->seq);
	SET_INT(m, mbs, w->mbs);
	SET_INT(m, gbs, w->gbs);
	SET_INT(m, recompute, w->recompute);
	SET_INT(m, task, w->task);
	SET_INT(m, framework, w->framework);
	SET_INT(m, mode, w->mode);
	SET_INT(m, attention, w->attention);
	SET_INT(m, prefill_chunk, w->prefill_chunk);
	SET_INT(m, grad_dtype, w->grad_dtype);
	SET_INT(m, mem_share, w->mem_share);
	SET_INT(m, kv_dtype, w->kv_dtype);
	SET_INT(m, weights, w->weights);
	if (w->ckpt.given) {
		advisor__ckpt__init(&buf->ckpt);
		buf->ckpt.has_off = 1;
		buf->ckpt.off = w->ckpt.off;
		buf->ckpt.has_interval_s = 1;
		buf->ckpt.interval_s = w->ckpt.interval_s;
		buf->ckpt.has_async = 1;
		buf->ckpt.async = w->ckpt.async;
		m->ckpt = &buf->ckpt;
	}
	if (w->tokens > 0) {
		m->has_tokens = 1;
		m->tokens = w->tokens;
	}
	return m;
}

Advisor__CheckRequest *convert_request_to_pb(const struct adv_request *req,
					     enum adv_context ctx, uint32_t job_id,
					     const char *parent_decision,
					     struct convert_request_pb *buf)
{
	Advisor__CheckRequest *m = &buf->msg;

	advisor__check_request__init(m);
	m->resources = convert_resources_to_pb(&req->res, &buf->res);
	m->workload = convert_workload_to_pb(&req->wl, &buf->wl);
	m->has_context = 1;
	m->context = (Advisor__Context)ctx;
	if (job_id) {
		m->has_job_id = 1;
		m->job_id = job_id;
	}
	m->account = pb_str(req->account);
	m->parent_decision = pb_str(parent_decision);
	if (req->has_job_uid) {
		m->has_job_uid = 1;
		m->job_uid = req->job_uid;
	}
	return m;
}

/* ---- decoding ------------------------------------------------------------ */

static void copy_name(char *dst, size_t len, const char *src)
{
	if (src)
		adv_strlcpy(dst, src, len);
}

void convert_resources_from_pb(const Advisor__Resources *m, struct adv_resources *r)
{
	if (!m)
		return;
	copy_name(r->gpu, sizeof(r->gpu), m->gpu);
	if (m->has_gpus)
		r->gpus = m->gpus;
	if (m->has_nodes)
		r->nodes = m->nodes;
	if (m->has_gpus_per_node)
		r->gpus_per_node = m->gpus_per_node;
	copy_name(r->partition, sizeof(r->partition), m->partition);
	copy_name(r->constraint, sizeof(r->constraint), m->constraint);
}

#define GET_INT(msg, field, dst) do { if ((msg)->has_##field) (dst) = (msg)->field; } while (0)

void convert_workload_from_pb(const Advisor__Workload *m, struct adv_workload *w)
{
	if (!m)
		return;
	copy_name(w->model, sizeof(w->model), m->model);
	if (m->layout) {
		const Advisor__Layout *l = m->layout;

		GET_INT(l, tp, w->layout.tp);
		GET_INT(l, pp, w->layout.pp);
		GET_INT(l, cp, w->layout.cp);
		GET_INT(l, ep, w->layout.ep);
		GET_INT(l, etp, w->layout.etp);
		GET_INT(l, vpp, w->layout.vpp);
		GET_INT(l, dp, w->layout.dp);
		if (l->has_sp)
			w->layout.sp = l->sp ? 1 : 0;
	}
	GET_INT(m, zero, w->zero);
	GET_INT(m, precision, w->precision);
	GET_INT(m, seq, w->seq);
	GET_INT(m, mbs, w->mbs);
	GET_INT(m, gbs, w->gbs);
	GET_INT(m, recompute, w->recompute);
	GET_INT(m, task, w->task);
	GET_INT(m, framework, w->framework);
	GET_INT(m, mode, w->mode);
	GET_INT(m, attention, w->attention);
	GET_INT(m, prefill_chunk, w->prefill_chunk);
	GET_INT(m, grad_dtype, w->grad_dtype);
	GET_INT(m, mem_share, w->mem_share);
	GET_INT(m, kv_dtype, w->kv_dtype);
	GET_INT(m, weights, w->weights);
	if (m->ckpt) {
		w->ckpt.given = true;
		w->ckpt.off = m->ckpt->has_off && m->ckpt->off;
		w->ckpt.interval_s = m->ckpt->has_interval_s ? m->ckpt->interval_s : 0;
		w->ckpt.async = m->ckpt->has_async && m->ckpt->async;
	}
	if (m->has_tokens)
		w->tokens = m->tokens;
}

static int bad(char *err, size_t errlen, const char *what)
{
	adv_snprintf(err, errlen, "invalid request: %s", what);
	return -1;
}

static bool int_ok(int v, int lo, int hi)
{
	return v == ADV_UNSET || (v >= lo && v <= hi);
}

static bool str_fits(const char *s, size_t len)
{
	return !s || strlen(s) < len;
}

/* Ranges wide enough for any real job, narrow enough that nothing overflows. */
#define SIZE_MAX_PAR (1 << 20)

static int validate(const Advisor__CheckRequest *m, const struct adv_request *r,
		    char *err, size_t errlen)
{
	const struct adv_layout *l = &r->wl.layout;
	const struct adv_workload *w = &r->wl;

	if (m->resources && (!str_fits(m->resources->gpu, sizeof(r->res.gpu)) ||
			     !str_fits(m->resources->partition, sizeof(r->res.partition)) ||
			     !str_fits(m->resources->constraint, sizeof(r->res.constraint))))
		return bad(err, errlen, "gpu, partition or constraint too long");
	if (m->workload && !str_fits(m->workload->model, sizeof(r->wl.model)))
		return bad(err, errlen, "model name too long");
	if (!str_fits(m->account, sizeof(r->account)))
		return bad(err, errlen, "account name too long");
	if (r->res.gpus < 0 || r->res.nodes < 0 || r->res.gpus_per_node < 0 ||
	    r->res.gpus > SIZE_MAX_PAR || r->res.nodes > SIZE_MAX_PAR ||
	    r->res.gpus_per_node > SIZE_MAX_PAR)
		return bad(err, errlen, "gpus, nodes and gpus_per_node must be 0..1048576");
	if (!int_ok(l->tp, 1, SIZE_MAX_PAR) || !int_ok(l->pp, 1, SIZE_MAX_PAR) ||
	    !int_ok(l->cp, 1, SIZE_MAX_PAR) || !int_ok(l->ep, 1, SIZE_MAX_PAR) ||
	    !int_ok(l->etp, 1, SIZE_MAX_PAR) || !int_ok(l->vpp, 1, SIZE_MAX_PAR) ||
	    !int_ok(l->dp, 1, SIZE_MAX_PAR))
		return bad(err, errlen, "layout sizes must be 1..1048576");
	if (!int_ok(w->zero, 0, 3))
		return bad(err, errlen, "zero must be 0..3");
	/* The enums index the names tables: each held below its count. */
	if (!int_ok(w->precision, 0, ADV_PREC_COUNT - 1))
		return bad(err, errlen, "precision out of range");
	if (!int_ok(w->recompute, 0, ADV_RECOMPUTE_COUNT - 1))
		return bad(err, errlen, "recompute out of range");
	if (!int_ok(w->task, 0, ADV_TASK_COUNT - 1))
		return bad(err, errlen, "task out of range");
	if (!int_ok(w->framework, 0, ADV_FW_COUNT - 1))
		return bad(err, errlen, "framework out of range");
	if (!int_ok(w->mode, 0, ADV_MODE_COUNT - 1))
		return bad(err, errlen, "mode out of range");
	if (!int_ok(w->attention, 0, ADV_ATTN_COUNT - 1))
		return bad(err, errlen, "attention out of range");
	if (!int_ok(w->grad_dtype, 0, ADV_PREC_COUNT - 1) || w->grad_dtype == ADV_PREC_FP8)
		return bad(err, errlen, "grad_dtype out of range");
	if (!int_ok(w->mem_share, 1, 1000))
		return bad(err, errlen, "mem_share out of range");
	if (!int_ok(w->kv_dtype, 0, ADV_PREC_COUNT - 1))
		return bad(err, errlen, "kv_dtype out of range");
	if (!int_ok(w->weights, 0, ADV_WEIGHTS_COUNT - 1))
		return bad(err, errlen, "weights out of range");
	if (!int_ok(w->prefill_chunk, 1, 1 << 30))
		return bad(err, errlen, "prefill_chunk must be positive");
	if (!int_ok(w->seq, 1, 1 << 30) || !int_ok(w->mbs, 1, 1 << 24) ||
	    !int_ok(w->gbs, 1, 1 << 30))
		return bad(err, errlen, "seq, mbs and gbs must be positive");
	if (!isfinite(w->ckpt.interval_s) || w->ckpt.interval_s < 0 ||
	    w->ckpt.interval_s > 1e9)
		return bad(err, errlen, "checkpoint interval out of range");
	if (!isfinite(w->tokens) || w->tokens < 0 || w->tokens > 1e18)
		return bad(err, errlen, "tokens out of range");
	if (m->has_context && ((int)m->context < 0 || (int)m->context >= ADV_CTX_COUNT))
		return bad(err, errlen, "context out of range");
	return 0;
}

int convert_request_from_pb(const Advisor__CheckRequest *m, struct adv_request *req,
			    char *err, size_t errlen)
{
	engine_request_init(req);
	convert_resources_from_pb(m->resources, &req->res);
	convert_workload_from_pb(m->workload, &req->wl);
	copy_name(req->account, sizeof(req->account), m->account);
	return validate(m, req, err, errlen);
}

/* ---- results ------------------------------------------------------------- */

Advisor__LayoutOut *convert_layout_to_pb(const struct adv_layout_out *l, Advisor__LayoutOut *m)
{
	advisor__layout_out__init(m);
#define L(f) do { m->has_##f = 1; m->f = l->f; } while (0)
	L(gpus); L(nodes); L(gpus_per_node); L(tp); L(pp); L(cp); L(ep); L(etp);
	L(vpp); L(dp); L(zero); L(sp);
#undef L
	return m;
}

void convert_layout_from_pb(const Advisor__LayoutOut *m, struct adv_layout_out *l)
{
	memset(l, 0, sizeof(*l));
#define L(f) do { if (m->has_##f) l->f = m->f; } while (0)
	L(gpus); L(nodes); L(gpus_per_node); L(tp); L(pp); L(cp); L(ep); L(etp);
	L(vpp); L(dp); L(zero);
#undef L
	l->sp = m->has_sp && m->sp;
}

Advisor__Memory *convert_memory_to_pb(const struct adv_memory *mem, Advisor__Memory *m)
{
	advisor__memory__init(m);
#define D(f) do { m->has_##f = 1; m->f = mem->f; } while (0)
	D(per_gpu_gib); D(usable_gib); D(capacity_gib); D(weights_gib); D(grads_gib);
	D(optimizer_gib); D(activations_gib); D(kv_cache_gib); D(overhead_gib);
	D(allocator_gib); D(peak_stage); D(stages); D(peak_inflight); D(peak_logits);
#undef D
	if (mem->least_bounded) {
		m->has_least_gib = 1;
		m->least_gib = mem->least_gib;
	}
	return m;
}

void convert_memory_from_pb(const Advisor__Memory *m, struct adv_memory *mem)
{
	memset(mem, 0, sizeof(*mem));
#define D(f) do { if (m->has_##f) mem->f = m->f; } while (0)
	D(per_gpu_gib); D(usable_gib); D(capacity_gib); D(weights_gib); D(grads_gib);
	D(optimizer_gib); D(activations_gib); D(kv_cache_gib); D(overhead_gib);
	D(allocator_gib); D(peak_stage); D(stages); D(peak_inflight); D(peak_logits);
#undef D
	mem->least_bounded = m->has_least_gib;
	mem->least_gib = m->has_least_gib ? m->least_gib : 0;
}

Advisor__Checkpoint *convert_checkpoint_to_pb(const struct adv_checkpoint *c,
					      Advisor__Checkpoint *m)
{
	advisor__checkpoint__init(m);
#define D(f) do { m->has_##f = 1; m->f = c->f; } while (0)
	D(interval_s); D(optimal_s); D(young_s); D(daly_s); D(waste); D(optimal_waste);
	D(write_s); D(job_mtbf_h); D(size_gb);
#undef D
	return m;
}

void convert_checkpoint_from_pb(const Advisor__Checkpoint *m, struct adv_checkpoint *c)
{
	memset(c, 0, sizeof(*c));
#define D(f) do { if (m->has_##f) c->f = m->f; } while (0)
	D(interval_s); D(optimal_s); D(young_s); D(daly_s); D(waste); D(optimal_waste);
	D(write_s); D(job_mtbf_h); D(size_gb);
#undef D
}

Advisor__Estimate *convert_estimate_to_pb(const struct adv_estimate *e, Advisor__Estimate *m)
{
	advisor__estimate__init(m);
#define D(f) do { m->has_##f = 1; m->f = e->f; } while (0)
	D(params_b); D(active_params_b); D(step_time_s); D(tokens_per_s); D(mfu);
	D(train_days); D(cost_usd); D(energy_mwh); D(bubble);
#undef D
	return m;
}

Advisor__Serving *convert_serving_to_pb(const struct adv_serving *sv, Advisor__Serving *m)
{
	advisor__serving__init(m);
#define D(f) do { m->has_##f = 1; m->f = sv->f; } while (0)
	D(kv_capacity_seqs); D(kv_capacity_tokens); D(mem_share); D(kv_bytes_per_token);
	D(prefill_chunk); D(decode_batch);
	D(prefill_tokens_per_s); D(decode_tokens_per_s); D(decode_step_s);
#undef D
	return m;
}

void convert_serving_from_pb(const Advisor__Serving *m, struct adv_serving *sv)
{
	memset(sv, 0, sizeof(*sv));
#define D(f) do { if (m->has_##f) sv->f = m->f; } while (0)
	D(kv_capacity_seqs); D(kv_capacity_tokens); D(mem_share); D(kv_bytes_per_token);
	D(prefill_chunk); D(decode_batch);
	D(prefill_tokens_per_s); D(decode_tokens_per_s); D(decode_step_s);
#undef D
}

void convert_estimate_from_pb(const Advisor__Estimate *m, struct adv_estimate *e)
{
	memset(e, 0, sizeof(*e));
#define D(f) do { if (m->has_##f) e->f = m->f; } while (0)
	D(params_b); D(active_params_b); D(step_time_s); D(tokens_per_s); D(mfu);
	D(train_days); D(cost_usd); D(energy_mwh); D(bubble);
#undef D
}

Advisor__Finding *convert_finding_to_pb(const struct adv_finding *f, Advisor__Finding *m)
{
	advisor__finding__init(m);
	m->code = pb_str(f->code);
	m->has_severity = 1;
	m->severity = (int32_t)f->severity;
	m->message = pb_str(f->message);
	m->fix = pb_str(f->fix);
	if (f->fix_job[0])
		m->fix_job = pb_str(f->fix_job);
	if (f->uses) {
		m->has_uses = 1;
		m->uses = f->uses;
	}
	return m;
}

void convert_finding_from_pb(const Advisor__Finding *m, struct adv_finding *f)
{
	memset(f, 0, sizeof(*f));
	copy_name(f->code, sizeof(f->code), m->code);
	if (m->has_severity && m->severity >= 0 && m->severity < ADV_SEV_COUNT)
		f->severity = (enum adv_severity)m->severity;
	copy_name(f->message, sizeof(f->message), m->message);
	copy_name(f->fix, sizeof(f->fix), m->fix);
	copy_name(f->fix_job, sizeof(f->fix_job), m->fix_job);
	if (m->has_uses)
		f->uses = m->uses & ((1u << ADV_F_COUNT) - 1);
}

Advisor__CheckResponse *convert_result_to_pb(const struct adv_result *res,
					     const char *decision_id,
					     struct convert_result_pb *buf)
{
	Advisor__CheckResponse *m = &buf->msg;
	int n = res->n_findings;

	advisor__check_response__init(m);
	m->has_verdict = 1;
	m->verdict = (int32_t)res->verdict;
	m->has_mode = 1;
	m->mode = (int32_t)res->mode;
	if (res->mode_partition[0])
		m->mode_partition = pb_str(res->mode_partition);
	if (res->has_layout)
		m->layout = convert_layout_to_pb(&res->layout, &buf->layout);
	if (res->has_memory)
		m->memory = convert_memory_to_pb(&res->memory, &buf->memory);
	if (res->has_checkpoint)
		m->checkpoint = convert_checkpoint_to_pb(&res->checkpoint, &buf->checkpoint);
	if (res->has_estimate)
		m->estimate = convert_estimate_to_pb(&res->estimate, &buf->estimate);
	if (res->has_serving)
		m->serving = convert_serving_to_pb(&res->serving, &buf->serving);
	advisor__workload_out__init(&buf->workload);
#define W(f) do { buf->workload.has_##f = 1; buf->workload.f = res->f; } while (0)
	W(precision); W(recompute); W(task); W(framework); W(seq); W(mbs); W(gbs); W(attention);
#undef W
	m->workload = &buf->workload;
	if (n < 0)
		n = 0;
	if (n > ADV_MAX_FINDINGS)
		n = ADV_MAX_FINDINGS;
	for (int i = 0; i < n; i++)
		buf->finding_ptrs[i] = convert_finding_to_pb(&res->findings[i], &buf->findings[i]);
	m->n_findings = (size_t)n;
	m->findings = n ? buf->finding_ptrs : NULL;
	m->decision_id = pb_str(decision_id);
	m->has_llm_job = 1;
	m->llm_job = res->llm_job;
	m->has_text_read = res->text_read;
	m->text_read = res->text_read;
	m->has_parent_confirmed = res->parent_confirmed;
	m->parent_confirmed = res->parent_confirmed;
	m->not_llm_why = res->llm_job ? NULL : pb_str(res->not_llm_why);
	if (res->model[0])
		m->model = pb_str(res->model);
	n = res->n_sources < 0 ? 0 : res->n_sources > ADV_MAX_SOURCES ? ADV_MAX_SOURCES : res->n_sources;
	for (int i = 0; i < n; i++) {
		advisor__source__init(&buf->sources[i]);
		buf->sources[i].field = pb_str(res->sources[i].field);
		buf->sources[i].where = pb_str(res->sources[i].where);
		buf->source_ptrs[i] = &buf->sources[i];
	}
	m->n_sources = (size_t)n;
	m->sources = n ? buf->source_ptrs : NULL;
	n = res->n_unknown < 0 ? 0 : res->n_unknown > ADV_MAX_UNKNOWN ? ADV_MAX_UNKNOWN : res->n_unknown;
	for (int i = 0; i < n; i++)
		buf->unknown_ptrs[i] = pb_str(res->unknown[i]);
	m->n_unknown = (size_t)n;
	m->unknown = n ? buf->unknown_ptrs : NULL;
	m->has_origins = 1;
	m->origins.len = sizeof(res->from);
	m->origins.data = (uint8_t *)(uintptr_t)res->from;
	return m;
}

static int clamp_enum(bool has, int v, int lo, int hi, int dflt)
{
	return (has && v >= lo && v <= hi) ? v : dflt;
}

void convert_result_from_pb(const Advisor__CheckResponse *m, struct adv_result *res)
{
	const Advisor__WorkloadOut *w = m->workload;
	size_t n = m->n_findings < ADV_MAX_FINDINGS ? m->n_findings : ADV_MAX_FINDINGS;

	memset(res, 0, sizeof(*res));
	res->verdict = (enum adv_verdict)clamp_enum(m->has_verdict, m->verdict,
						    0, ADV_VERDICT_COUNT - 1, ADV_REJECT);
	res->mode = (enum adv_mode)clamp_enum(m->has_mode, m->mode, 0, ADV_MODE_COUNT - 1,
					      ADV_MODE_ENFORCE);
	copy_name(res->mode_partition, sizeof(res->mode_partition), m->mode_partition);
	res->has_layout = m->layout != NULL;
	if (m->layout)
		convert_layout_from_pb(m->layout, &res->layout);
	res->has_memory = m->memory != NULL;
	if (m->memory)
		convert_memory_from_pb(m->memory, &res->memory);
	res->has_checkpoint = m->checkpoint != NULL;
	if (m->checkpoint)
		convert_checkpoint_from_pb(m->checkpoint, &res->checkpoint);
	res->has_estimate = m->estimate != NULL;
	if (m->estimate)
		convert_estimate_from_pb(m->estimate, &res->estimate);
	res->has_serving = m->serving != NULL;
	if (m->serving)
		convert_serving_from_pb(m->serving, &res->serving);
	if (w) {
#define W(f) do { if (w->has_##f) res->f = w->f; } while (0)
		W(precision); W(recompute); W(task); W(framework); W(seq); W(mbs); W(gbs);
#undef W
		/* An old daemon does not say: flash, the default. */
		res->attention = clamp_enum(w->has_attention, w->attention, 0, ADV_ATTN_COUNT - 1,
					    ADV_ATTN_FLASH);
	}
	for (size_t i = 0; i < n; i++)
		convert_finding_from_pb(m->findings[i], &res->findings[i]);
	res->n_findings = (int)n;
	/* An old daemon does not say: every job it judged was an LLM job. */
	res->llm_job = m->has_llm_job ? m->llm_job : true;
	res->text_read = m->has_text_read && m->text_read;
	res->parent_confirmed = m->has_parent_confirmed && m->parent_confirmed;
	res->not_llm_why[0] = '\0';
	if (!res->llm_job)
		copy_name(res->not_llm_why, sizeof(res->not_llm_why), m->not_llm_why);
	copy_name(res->model, sizeof(res->model), m->model);
	n = m->n_sources < ADV_MAX_SOURCES ? m->n_sources : ADV_MAX_SOURCES;
	for (size_t i = 0; i < n; i++) {
		copy_name(res->sources[i].field, sizeof(res->sources[i].field), m->sources[i]->field);
		copy_name(res->sources[i].where, sizeof(res->sources[i].where), m->sources[i]->where);
	}
	res->n_sources = (int)n;
	n = m->n_unknown < ADV_MAX_UNKNOWN ? m->n_unknown : ADV_MAX_UNKNOWN;
	for (size_t i = 0; i < n; i++)
		copy_name(res->unknown[i], sizeof(res->unknown[i]), m->unknown[i]);
	res->n_unknown = (int)n;
	/* An old daemon does not say: every origin stays 0 (none). */
	if (m->has_origins)
		for (size_t i = 0; i < m->origins.len && i < sizeof(res->from); i++)
			res->from[i] = m->origins.data[i] < ADV_FROM_COUNT ? m->origins.data[i] : 0;
}
