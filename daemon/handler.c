/*
 * handler.c - request dispatch, access control and decision recording.
 *
 * Who may do what (issue 4): check, plan, ckpt, catalog, policy, stats and
 * status are open to every local user; reload and other users' history or
 * report need an admin from policy (uid 0 and the listed users and groups).  The caller is
 * who SO_PEERCRED says, never what the request claims.  Anything that cannot
 * be decoded, or speaks another protocol version, gets an Error answer and
 * the connection is closed; nothing a client sends can make the daemon crash
 * or leak, because every answer lives in the per-thread arena.
 *
 * Fairness (issue 14): every request of a non-admin takes a token of its
 * uid's bucket (ratelimit.c, policy `limits:`).  Over budget, what-if
 * queries and every other kind are refused with ERR_RATE_LIMITED and the
 * time to the next token, before any work is done; a plugin check (context
 * sbatch, salloc, srun or step) is still judged and answered, because a
 * real submission must never go unchecked for its user being busy, but its
 * record is folded into an identical one (dlog_aggregate) and the server
 * serves the connection after everyone else's (handler->over_budget).
 * A check from advisorctl (context advisorctl) is a what-if query: it goes
 * to the log's queries table, not to the decisions that history, report
 * and the decision counters read.
 */
#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "advisor.pb-c.h"
#include "dlog/dlog.h"
#include "dlog/dlog_detail.h"
#include "engine/findings.h"
#include "engine/options.h"
#include "handler.h"
#include "jobdigest.h"
#include "jsonlog.h"
#include "msg.h"
#include "ratelimit.h"
#include "rollout.h"
#include "service/service.h"
#include "service/slurmgres.h"
#include "service/snapshot.h"
#include "stats.h"
#include "util.h"
#include "wire/auth.h"
#include "wire/jobtext.h"
#include "wire/wire.h"

#define NAME_TTL_S 60
#define HISTORY_MAX 5000

static struct handler_info info;
/* The per-uid request budget; set up by handler_apply_policy(), used by every worker. */
static ratelimit_t *limiter;

void handler_set_info(const struct handler_info *i)
{
	info = *i;
}

void handler_init(struct handler *h)
{
	memset(h, 0, sizeof(*h));
	arena_init(&h->arena);
	for (size_t i = 0; i < HANDLER_NAME_CACHE; i++)
		h->names[i].uid = (uid_t)-1;
}

void handler_destroy(struct handler *h)
{
	arena_destroy(&h->arena);
}

void handler_outbuf_free(struct outbuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* getpwuid_r reads /etc/passwd (or NSS) each time: cache per thread for a minute. */
static const char *user_name(struct handler *h, uid_t uid)
{
	size_t slot = uid % HANDLER_NAME_CACHE;
	time_t now = time(NULL);
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (h->names[slot].uid == uid && now - h->names[slot].at < NAME_TTL_S)
		return h->names[slot].name;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		adv_strlcpy(h->names[slot].name, res->pw_name, sizeof(h->names[slot].name));
	else
		adv_snprintf(h->names[slot].name, sizeof(h->names[slot].name), "uid%u",
			     (unsigned)uid);
	h->names[slot].uid = uid;
	h->names[slot].at = now;
	h->names[slot].admin_known = false;
	return h->names[slot].name;
}

static bool is_admin(const struct snapshot *s, const struct peer *p, const char *user)
{
	gid_t groups[256];
	int n = (int)ADV_ARRAY_SIZE(groups);

	if (getgrouplist(user, p->gid, groups, &n) < 0)
		n = (int)ADV_ARRAY_SIZE(groups);
	return policy_is_admin(s->pol, p->uid, user, groups, (size_t)n);
}

/*
 * is_admin() for the budget, which asks on every request: getgrouplist()
 * reads the group database, so the answer is kept with the cached name
 * (a minute, and only under the snapshot it was computed for).
 */
static bool is_admin_cached(struct handler *h, const struct snapshot *s, const struct peer *p)
{
	const char *user = user_name(h, p->uid);
	size_t slot = p->uid % HANDLER_NAME_CACHE;

	if (p->uid == 0)
		return true;
	if (!h->names[slot].admin_known || h->names[slot].admin_loaded != s->loaded) {
		h->names[slot].admin = is_admin(s, p, user);
		h->names[slot].admin_known = true;
		h->names[slot].admin_loaded = s->loaded;
	}
	return h->names[slot].admin;
}

int handler_apply_policy(const struct adv_policy *pol)
{
	int rc;

	dlog_set_retention(pol->retention_days);
	dlog_set_limits(pol->log_max_mb, pol->log_user_rows_per_min, pol->log_reserve_mb);
	if (!limiter && !(limiter = ratelimit_new())) {
		msg_log(LOG_ERR, "request budget: %s", ratelimit_strerror(RATELIMIT_ERR_NOMEM));
		return -1;
	}
	/* policy.c checked the ranges; this cannot fail but would say why. */
	if ((rc = ratelimit_configure(limiter, pol->requests_per_s, pol->burst)) != RATELIMIT_OK) {
		msg_log(LOG_ERR, "request budget: %s", ratelimit_strerror(rc));
		return -1;
	}
	return 0;
}

static handler_admit_fn admit_fn;

void handler_set_admit(handler_admit_fn fn)
{
	admit_fn = fn;
}

bool handler_privileged(uid_t uid, gid_t gid)
{
	struct passwd pw, *r = NULL;
	struct snapshot *s;
	char buf[2048];
	bool yes;

	if (uid == 0 || uid == geteuid())
		return true;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &r) != 0 || !r)
		return false;
	if (!strcmp(pw.pw_name, "slurm"))
		return true;
	s = snapshot_acquire();
	if (!s)
		return false;
	yes = is_admin(s, &(struct peer){ .uid = uid, .gid = gid == (gid_t)-1 ? pw.pw_gid : gid },
		       pw.pw_name);
	snapshot_release(s);
	return yes;
}

bool handler_over_budget(uid_t uid)
{
	struct timespec ts;

	if (!limiter)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ratelimit_over(limiter, (uint32_t)uid,
			      (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

void handler_cleanup(void)
{
	ratelimit_free(limiter);
	limiter = NULL;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static bool out_reserve(struct outbuf *b, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (b->cap - b->len >= more)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return false;
	b->data = p;
	b->cap = cap;
	return true;
}

/*
 * Appends resp as a frame; an answer over the limit becomes an error answer.
 * False when there is no memory for it: the caller closes the connection
 * rather than leave the client waiting for an answer that never comes.
 */
static bool emit(struct handler *h, Advisor__Response *resp, struct outbuf *out)
{
	size_t size = advisor__response__get_packed_size(resp);

	if (size > WIRE_MAX_FRAME) {
		advisor__response__init(resp);
		resp->has_version = 1;
		resp->version = WIRE_VERSION;
		service_error(resp, &h->arena, ADVISOR__ERROR_CODE__ERR_INTERNAL,
			      "the answer would exceed 1 MiB; narrow the query (e.g. --limit)");
		size = advisor__response__get_packed_size(resp);
	}
	if (!out_reserve(out, size + 4)) {
		msg_log(LOG_ERR, "out of memory for a %zu byte answer", size);
		return false;
	}
	out->data[out->len] = (uint8_t)(size >> 24);
	out->data[out->len + 1] = (uint8_t)(size >> 16);
	out->data[out->len + 2] = (uint8_t)(size >> 8);
	out->data[out->len + 3] = (uint8_t)size;
	advisor__response__pack(resp, out->data + out->len + 4);
	out->len += size + 4;
	return true;
}

void handler_refuse(struct handler *h, int code, const char *message, struct outbuf *out)
{
	Advisor__Response resp = ADVISOR__RESPONSE__INIT;

	resp.has_version = 1;
	resp.version = WIRE_VERSION;
	service_error(&resp, &h->arena, code, message);
	(void)emit(h, &resp, out);   /* the connection closes after a refusal anyway */
	arena_reset(&h->arena);
	stats_error();
}

/* ---- check ------------------------------------------------------------------- */

static void codes_of(const struct adv_result *res, char *buf, size_t len, char sep)
{
	char s[2] = { sep, 0 };

	buf[0] = '\0';
	for (int i = 0; i < res->n_findings; i++) {
		if (i)
			adv_strlcat(buf, s, len);
		adv_strlcat(buf, res->findings[i].code, len);
	}
}

/*
 * engine.c's apply_mode() turns a reject into a warning in warn mode and
 * marks its message with this note; the decision log keeps such codes apart
 * so `advisorctl report` can show what enforcement would have blocked.
 */
#define UNENFORCED_NOTE "[not enforced: advisor mode warn]"

static bool is_unenforced(const struct adv_result *res, const struct adv_finding *f)
{
	return res->mode == ADV_MODE_WARN && strstr(f->message, UNENFORCED_NOTE) != NULL;
}

static bool any_unenforced(const struct adv_result *res)
{
	for (int i = 0; i < res->n_findings; i++)
		if (is_unenforced(res, &res->findings[i]))
			return true;
	return false;
}

static void rollout_of(const struct adv_result *res, struct dlog_rec *r)
{
	r->mode = (int)res->mode;
	for (int i = 0; i < res->n_findings; i++) {
		const struct adv_finding *f = &res->findings[i];

		if (i)
			adv_strlcat(r->severities, " ", sizeof(r->severities));
		adv_strlcat(r->severities, engine_severity_name(f->severity), sizeof(r->severities));
		if (is_unenforced(res, f)) {
			if (r->unenforced[0])
				adv_strlcat(r->unenforced, " ", sizeof(r->unenforced));
			adv_strlcat(r->unenforced, f->code, sizeof(r->unenforced));
		}
	}
}

/*
 * Issue 21: what the user saw, kept with the decision in the log's bounded
 * lines (dlog_detail.h): every finding with its message and fixes, where
 * each workload value came from, and the script's name as the client gave
 * it (sbatch's argument, "stdin", "--wrap"; advisorctl's --script).
 */
void handler_log_detail(const Advisor__CheckRequest *m, const struct adv_result *res,
			struct dlog_rec *r)
{
	unsigned left = 0;

	r->detail = true;
	if (m->job && m->job->script_name)
		adv_strlcpy(r->script, m->job->script_name, sizeof(r->script));
	for (int i = 0; i < res->n_findings; i++) {
		const struct adv_finding *f = &res->findings[i];
		const char *fields[] = { engine_severity_name(f->severity), f->code, f->message,
					 f->fix, f->fix_job };

		dlog_detail_add(r->findings, sizeof(r->findings), &left, fields, 5);
	}
	dlog_detail_finish(r->findings, sizeof(r->findings), left);
	left = 0;
	for (int i = 0; i < res->n_sources; i++) {
		const char *fields[] = { res->sources[i].field, res->sources[i].where };

		dlog_detail_add(r->sources, sizeof(r->sources), &left, fields, 2);
	}
	dlog_detail_finish(r->sources, sizeof(r->sources), left);
}

/*
 * Logs a check: a what-if query into the queries table; a plugin decision
 * into the decisions, folded into an identical one when its user is over
 * budget.  id is the decision id to answer with (an earlier one when
 * folded).  True when a new decision record was made (the caller reports it).
 */
static bool record(const struct peer *p, const char *user, const Advisor__CheckRequest *m,
		   const struct adv_request *req, const struct adv_result *res, char *id,
		   bool query, bool over, const char *digest, bool partition_other, bool exempt)
{
	struct dlog_rec r;
	char ck[32] = "none";

	memset(&r, 0, sizeof(r));
	adv_strlcpy(r.id, id, sizeof(r.id));
	r.query = query;
	r.repeat = 1;
	r.time = (int64_t)time(NULL);
	r.uid = (uint32_t)p->uid;
	adv_strlcpy(r.user, user, sizeof(r.user));
	r.job_id = m->has_job_id ? m->job_id : 0;
	r.context = m->has_context ? (int)m->context : ADV_CTX_ADVISORCTL;
	adv_strlcpy(r.parent, m->parent_decision ? m->parent_decision : "", sizeof(r.parent));
	/* Only what was judged from the text can vouch for it: a batch
	 * script, or srun's command (sbatch on a pipe could not read its
	 * script, and ships none). */
	if (m->job && ((m->job->has_script && m->job->script.len > 0) ||
		       (m->job->has_tool && m->job->tool == JOBREAD_SRUN && m->job->n_argv > 0)))
		adv_strlcpy(r.digest, digest, sizeof(r.digest));
	adv_strlcpy(r.gpu, req->res.gpu, sizeof(r.gpu));
	r.gpus = res->has_layout ? res->layout.gpus : req->res.gpus;
	r.nodes = res->has_layout ? res->layout.nodes : req->res.nodes;
	adv_strlcpy(r.partition, req->res.partition, sizeof(r.partition));
	r.partition_other = partition_other;
	r.exempt = exempt;
	adv_strlcpy(r.exempt_by, res->exempt, sizeof(r.exempt_by));
	adv_strlcpy(r.model, res->model[0] ? res->model : req->wl.model, sizeof(r.model));
	if (res->has_layout)
		engine_layout_string_from(&res->layout, res->from, r.layout, sizeof(r.layout));
	if (req->wl.ckpt.given)
		options_format_duration(req->wl.ckpt.interval_s, ck, sizeof(ck));
	if (req->wl.ckpt.off)
		adv_strlcpy(ck, "off", sizeof(ck));
	adv_snprintf(r.workload, sizeof(r.workload),
		     "task=%s framework=%s zero=%d precision=%s seq=%d mbs=%d gbs=%d "
		     "recompute=%s ckpt=%s%s",
		     engine_task_name(res->task), engine_framework_name(res->framework),
		     res->has_layout ? res->layout.zero : req->wl.zero,
		     engine_precision_name(res->precision), res->seq, res->mbs, res->gbs,
		     engine_recompute_name(res->recompute), ck,
		     req->wl.ckpt.async ? ",async" : "");
	r.verdict = (int)res->verdict;
	codes_of(res, r.codes, sizeof(r.codes), ' ');
	r.mem_gib = res->has_memory ? res->memory.per_gpu_gib : -1;
	r.ckpt_interval_s = res->has_checkpoint ? res->checkpoint.optimal_s : -1;
	rollout_of(res, &r);
	handler_log_detail(m, res, &r);
	if (query) {
		dlog_append(&r);
		return false;
	}
	if (dlog_aggregate(&r, over)) {
		adv_strlcpy(id, r.id, DLOG_ID_MAX);
		return false;
	}
	/* A repeat is not a new record: the JSON line and log line go once per record. */
	jsonlog_decision(&r);
	return true;
}

/* A check from advisorctl (or without a context) asks "what if"; the plugin's are decisions. */
static bool is_query(const Advisor__CheckRequest *m)
{
	return !m->has_context || m->context == ADVISOR__CONTEXT__CTX_ADVISORCTL;
}

/*
 * A node check names its parent from the job's environment
 * (ADVISOR_DECISION_ID), which the job's user controls: a job submitted
 * around the plugin (SLURM_CONF, an edited plugstack.conf) could name any
 * id and so escape the script read on the node.  So the plugin ships the
 * job's text with its uid, and the text is left out of the judgment only
 * when the log vouches for the parent (dlog_confirm, issue 27): this
 * user's accepted or warned decision, made from the same text (its
 * digest), used by no other job.  The plugin sends the check from
 * slurmstepd as root; a parent, a job_uid or a job id from any other peer
 * are that peer's say-so, and such a check is judged as the peer's own,
 * from its text, with no parent.
 */
struct parent_check {
	char digest[JOBDIGEST_HEX];   /* of the job's text, "" none */
	uint32_t uid;                 /* the decision's user: the job's, from a privileged peer */
	bool asked;                   /* dlog_confirm was asked */
	enum dlog_confirm_rc rc;
	int parent_context;           /* the parent's, when found */
	int parent_verdict;           /* the parent's, when confirmed */
};

/*
 * Who may speak for a job's user: slurmstepd (root) on the node, and at
 * submission slurmctld, which runs job_submit as SlurmUser (root, or
 * Debian's "slurm"; issue 31).  Anyone else's check is its own.
 */
static bool peer_speaks_for_job(const struct peer *p, const char *user, bool submit)
{
	return p->uid == 0 || (submit && user && strcmp(user, "slurm") == 0);
}

static const Advisor__CheckRequest *check_parent(const struct peer *p, const char *user,
						 const Advisor__CheckRequest *m,
						 Advisor__CheckRequest *copy, struct parent_check *pc)
{
	struct dlog_rec *parent;
	bool step = m->has_context && m->context == ADVISOR__CONTEXT__CTX_STEP;
	bool submit = m->has_context && m->context == ADVISOR__CONTEXT__CTX_SUBMIT;

	memset(pc, 0, sizeof(*pc));
	pc->uid = (uint32_t)p->uid;
	if (m->job)
		(void)jobdigest_of(m->job, pc->digest);
	if (!step && !submit)
		return m;
	if (!peer_speaks_for_job(p, user, submit)) {
		*copy = *m;
		copy->parent_decision = NULL;
		copy->has_job_uid = 0;
		copy->has_job_id = 0;
		return copy;
	}
	if (m->has_job_uid)
		pc->uid = m->job_uid;
	if (!m->has_job_uid || !m->job || !m->parent_decision || !*m->parent_decision)
		return m;
	if (!(parent = malloc(sizeof(*parent)))) {
		pc->asked = true;
		pc->rc = DLOG_CONFIRM_CANNOT_TELL;
		return m;
	}
	pc->asked = true;
	/* job_submit runs before the job has an id: the node check binds it. */
	if (submit)
		pc->rc = dlog_confirm_submission(m->parent_decision, m->job_uid, pc->digest, parent);
	else
		pc->rc = dlog_confirm(m->parent_decision, m->has_job_id ? m->job_id : 0,
				      m->job_uid, pc->digest, parent);
	pc->parent_context = parent->context;
	pc->parent_verdict = parent->verdict;
	free(parent);
	if (pc->rc != DLOG_CONFIRM_YES)
		return m;
	*copy = *m;
	copy->job = NULL;
	return copy;
}

/*
 * Whether an unconfirmed parent is worth a finding.  An srun step ships
 * its command, and the parent it inherits from its job is the batch
 * script's (or salloc's): another text, as expected, so it is only
 * judged.  A parent from an older advisord (no digest) or a log that
 * cannot answer is no sign of anything either.
 */
static bool parent_suspect(const struct parent_check *pc, const Advisor__CheckRequest *m)
{
	bool command = m->job && m->job->has_tool && m->job->tool == JOBREAD_SRUN;

	switch (pc->rc) {
	case DLOG_CONFIRM_NOT_FOUND:
	case DLOG_CONFIRM_REJECTED:
	case DLOG_CONFIRM_OTHER_JOB:
		return true;
	case DLOG_CONFIRM_OTHER_TEXT:
		return !command || pc->parent_context == ADV_CTX_SRUN;
	default:
		return false;
	}
}

/* "job 42", or "this submission" (job_submit: the job has no id yet). */
static const char *job_words(const Advisor__CheckRequest *m, char *buf, size_t len)
{
	if (m->context == ADVISOR__CONTEXT__CTX_SUBMIT || !m->has_job_id)
		return "this submission";
	adv_snprintf(buf, len, "job %u", m->job_id);
	return buf;
}

/*
 * job_submit named the submission's decision, and the log vouched for it
 * (issue 31: one decision per job): that decision stands, with its
 * verdict and id; nothing is judged or logged again, and the node check
 * binds it to the job.
 */
static int confirmed_answer(struct handler *h, const struct peer *as, const char *user,
			    const Advisor__CheckRequest *m, const struct parent_check *pc,
			    struct adv_result *res, Advisor__Response *resp)
{
	memset(res, 0, offsetof(struct adv_result, findings));
	res->verdict = pc->parent_verdict >= 0 && pc->parent_verdict < ADV_VERDICT_COUNT
		       ? (enum adv_verdict)pc->parent_verdict : ADV_WARN;
	res->mode = ADV_MODE_ENFORCE;
	res->parent_confirmed = true;
	if (!jsonlog_to_stderr())
		msg_log(LOG_INFO, "decision %s user=%s uid=%u context=job_submit confirmed (%s)",
			m->parent_decision, user, (unsigned)as->uid,
			engine_verdict_name(res->verdict));
	resp->check = service_check_answer(&h->arena, res, m->parent_decision);
	if (!resp->check)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	resp->body_case = ADVISOR__RESPONSE__BODY_CHECK;
	return 0;
}

static int do_check(struct handler *h, const struct peer *p, const char *user,
		    const struct snapshot *s, const Advisor__CheckRequest *m,
		    Advisor__Response *resp, char *err, size_t errlen, bool over)
{
	struct adv_result *res = ARENA_NEW(&h->arena, struct adv_result);
	struct service_check_io *io = ARENA_NEW(&h->arena, struct service_check_io);
	/* In the arena: the answer points to it until it is packed. */
	char *id = ARENA_ARRAY(&h->arena, char, DLOG_ID_MAX);
	struct adv_request req;
	Advisor__CheckRequest copy;
	struct parent_check pc;
	struct peer as;
	char jobw[32];
	int rc;

	if (!res || !id || !io)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	io->arena = &h->arena;
	m = check_parent(p, user, m, &copy, &pc);
	/* A privileged node check is recorded as the job's user's. */
	as = *p;
	as.uid = (uid_t)pc.uid;
	if (pc.uid != (uint32_t)p->uid)
		user = user_name(h, as.uid);
	if (pc.asked && pc.rc == DLOG_CONFIRM_YES && m->context == ADVISOR__CONTEXT__CTX_SUBMIT)
		return confirmed_answer(h, &as, user, m, &pc, res, resp);
	rc = service_check(s, m, user, &req, res, io, err, errlen);
	if (rc)
		return rc;
	res->text_read = m->job != NULL;
	/* job_submit reads none of the job's files (slurmctld must not read a
	 * user's paths, nor wait on their file system): a judgment without
	 * them vouches for nothing, so the node reads them and judges again. */
	if (io->unshipped && m->has_context && m->context == ADVISOR__CONTEXT__CTX_SUBMIT)
		pc.digest[0] = '\0';
	if (pc.asked && pc.rc != DLOG_CONFIRM_YES && !io->n_need && parent_suspect(&pc, m))
		engine_add_finding(res, ADV_CODE_PARENT_UNCONFIRMED,
				   "submit through the plugin: it sets ADVISOR_DECISION_ID",
				   "ADVISOR_DECISION_ID=%s of %s %s in %s's log: the job was "
				   "judged from its text %s", m->parent_decision,
				   job_words(m, jobw, sizeof(jobw)), dlog_confirm_why(pc.rc),
				   dlog_host(),
				   m->context == ADVISOR__CONTEXT__CTX_SUBMIT ? "at submission"
									     : "on the node");
	if (io->n_need) {
		/* Not a decision yet: the client ships the files and asks again. */
		resp->check = service_need_answer(&h->arena, io->need, io->n_need);
		if (!resp->check)
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
		resp->body_case = ADVISOR__RESPONSE__BODY_CHECK;
		return 0;
	}
	dlog_new_id(id, DLOG_ID_MAX);
	/* Queued before the answer leaves: an acknowledged decision is always logged. */
	if (is_query(m)) {
		record(&as, user, m, &req, res, id, true, false, pc.digest, false,
		       is_admin_cached(h, s, p));
	} else {
		/* Every plugin decision counts, folded or not: totals lose none.
		 * The partition the job named, not Slurm's default filled in. */
		stats_check(service_partition_label(s, m->resources ? m->resources->partition
								    : NULL),
			    res, any_unenforced(res));
		if (!record(&as, user, m, &req, res, id, false, over, pc.digest,
			    !strcmp(service_partition_label(s, req.res.partition), "_other"),
			    is_admin_cached(h, s, p)))
			goto answer;
	}
	if (!is_query(m) && !jsonlog_to_stderr()) {
		char codes[ADV_MAX_FINDINGS * ADV_CODE_MAX];

		codes_of(res, codes, sizeof(codes), ',');
		msg_log(LOG_INFO, "decision %s user=%s uid=%u job=%u context=%s verdict=%s codes=%s",
			id, user, (unsigned)as.uid, m->has_job_id ? m->job_id : 0,
			engine_context_name(m->has_context ? (enum adv_context)m->context
							   : ADV_CTX_ADVISORCTL),
			engine_verdict_name(res->verdict), codes[0] ? codes : "-");
	}
answer:
	resp->check = service_check_answer(&h->arena, res, id);
	if (!resp->check)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	resp->body_case = ADVISOR__RESPONSE__BODY_CHECK;
	return 0;
}

/* ---- history ----------------------------------------------------------------- */

static int severity_of(const char *name)
{
	for (int s = ADV_SEV_INFO; s <= ADV_SEV_REJECT; s++)
		if (strcmp(name, engine_severity_name((enum adv_severity)s)) == 0)
			return s;
	return ADV_SEV_INFO;
}

/* The findings and sources of r (dlog_detail.h lines) into d; -1 out of memory. */
static int detail_pb(struct arena *a, const struct dlog_rec *r, Advisor__Decision *d)
{
	char line[DLOG_FINDINGS_MAX], *fl[5];
	const char *p = r->findings;
	unsigned left = 0;
	size_t k;

	d->has_detail = 1;
	d->detail = r->detail;
	if (!r->detail)
		return 0;
	d->findings = ARENA_ARRAY(a, Advisor__Finding *, ADV_MAX_FINDINGS);
	d->sources = ARENA_ARRAY(a, Advisor__Source *, ADV_MAX_SOURCES);
	if (!d->findings || !d->sources)
		return -1;
	while ((k = dlog_detail_next(&p, line, sizeof(line), fl, 5, &left)) > 0) {
		Advisor__Finding *f;

		if (d->n_findings >= ADV_MAX_FINDINGS) {
			left++;
			continue;
		}
		if (!(f = ARENA_NEW(a, Advisor__Finding)))
			return -1;
		advisor__finding__init(f);
		f->has_severity = 1;
		f->severity = severity_of(fl[0]);
		f->code = k > 1 ? arena_strdup(a, fl[1]) : NULL;
		f->message = k > 2 && fl[2][0] ? arena_strdup(a, fl[2]) : NULL;
		f->fix = k > 3 && fl[3][0] ? arena_strdup(a, fl[3]) : NULL;
		f->fix_job = k > 4 && fl[4][0] ? arena_strdup(a, fl[4]) : NULL;
		d->findings[d->n_findings++] = f;
	}
	d->has_findings_left_out = 1;
	d->findings_left_out = left;
	left = 0;
	p = r->sources;
	while ((k = dlog_detail_next(&p, line, sizeof(line), fl, 2, &left)) > 0) {
		Advisor__Source *s;

		if (d->n_sources >= ADV_MAX_SOURCES) {
			left++;
			continue;
		}
		if (!(s = ARENA_NEW(a, Advisor__Source)))
			return -1;
		advisor__source__init(s);
		s->field = arena_strdup(a, fl[0]);
		s->where = k > 1 ? arena_strdup(a, fl[1]) : NULL;
		d->sources[d->n_sources++] = s;
	}
	d->has_sources_left_out = 1;
	d->sources_left_out = left;
	return 0;
}

/* A record as history lists it; with detail (show), what the user saw too. */
Advisor__Decision *handler_decision_pb(struct arena *a, const struct dlog_rec *r, bool detail)
{
	Advisor__Decision *d = ARENA_NEW(a, Advisor__Decision);
	char *codes, *save = NULL;

	if (!d)
		return NULL;
	advisor__decision__init(d);
	d->id = arena_strdup(a, r->id);
	d->has_time = d->has_uid = d->has_verdict = d->has_context = 1;
	d->time = r->time;
	d->uid = r->uid;
	d->user = r->user[0] ? arena_strdup(a, r->user) : NULL;
	if (r->job_id) {
		d->has_job_id = 1;
		d->job_id = r->job_id;
	}
	d->context = (Advisor__Context)r->context;
	d->gpu = r->gpu[0] ? arena_strdup(a, r->gpu) : NULL;
	d->has_gpus = d->has_nodes = 1;
	d->gpus = r->gpus;
	d->nodes = r->nodes;
	d->partition = r->partition[0] ? arena_strdup(a, r->partition) : NULL;
	d->model = r->model[0] ? arena_strdup(a, r->model) : NULL;
	d->layout = r->layout[0] ? arena_strdup(a, r->layout) : NULL;
	d->verdict = r->verdict;
	if (r->mem_gib >= 0) {
		d->has_mem_gib = 1;
		d->mem_gib = r->mem_gib;
	}
	if (r->ckpt_interval_s >= 0) {
		d->has_ckpt_interval_s = 1;
		d->ckpt_interval_s = r->ckpt_interval_s;
	}
	d->host = r->host[0] ? arena_strdup(a, r->host) : NULL;
	d->has_repeat = d->has_query = 1;
	d->repeat = r->repeat > 1 ? r->repeat : 1;
	d->query = r->query;
	codes = arena_strdup(a, r->codes);
	d->codes = ARENA_ARRAY(a, char *, ADV_MAX_FINDINGS);
	if (!codes || !d->codes)
		return NULL;
	for (char *t = strtok_r(codes, " ", &save); t && d->n_codes < ADV_MAX_FINDINGS;
	     t = strtok_r(NULL, " ", &save))
		d->codes[d->n_codes++] = t;
	/* Issue 30: the rollout fields --syslog-json has, for history --json. */
	if (r->mode >= 0) {
		d->has_mode = 1;
		d->mode = r->mode;
	}
	codes = arena_strdup(a, r->unenforced);
	d->unenforced = ARENA_ARRAY(a, char *, ADV_MAX_FINDINGS);
	if (!codes || !d->unenforced)
		return NULL;
	save = NULL;
	for (char *t = strtok_r(codes, " ", &save); t && d->n_unenforced < ADV_MAX_FINDINGS;
	     t = strtok_r(NULL, " ", &save))
		d->unenforced[d->n_unenforced++] = t;
	/* Issue 21: the links and the script are small: every listed record has them. */
	d->parent = r->parent[0] ? arena_strdup(a, r->parent) : NULL;
	d->script = r->script[0] ? arena_strdup(a, r->script) : NULL;
	d->exempt = r->exempt_by[0] ? arena_strdup(a, r->exempt_by) : NULL;
	if (detail) {
		d->workload = r->workload[0] ? arena_strdup(a, r->workload) : NULL;
		if (detail_pb(a, r, d) != 0)
			return NULL;
	}
	return d;
}

/* The records f selects as Decisions (without detail) in *out; -1 with err. */
static int linked_pb(struct arena *a, const struct dlog_filter *f, bool oldest_first,
		     Advisor__Decision ***out, size_t *n_out, char *err, size_t errlen)
{
	struct dlog_rec *recs;
	size_t n;

	*out = NULL;
	*n_out = 0;
	if (dlog_query(f, &recs, &n, err, errlen) != 0)
		return -1;
	if (n && !(*out = ARENA_ARRAY(a, Advisor__Decision *, n))) {
		free(recs);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dlog_rec *r = &recs[oldest_first ? n - 1 - i : i];

		if (((*out)[*n_out] = handler_decision_pb(a, r, false)))
			(*n_out)++;
	}
	free(recs);
	return 0;
}

/*
 * history --decision ID, advisorctl show (issue 21): one decision or
 * what-if query by its id, with what the user saw, its submission (a node
 * check's parent) and its node checks (a submission's children).  Who may
 * see it is history's rule: users their own, admins anyone's; asking for
 * another user's decision is refused, not answered as if it were absent.
 */
static int do_show(struct handler *h, const struct peer *p, const char *me,
		   const struct snapshot *s, const char *id, Advisor__Response *resp, char *err,
		   size_t errlen)
{
	struct dlog_filter f = { .verdict = -1, .limit = 1, .include_queries = true,
				 .detail = true, .id = id };
	bool admin = is_admin(s, p, me);
	Advisor__HistoryResponse *r = ARENA_NEW(&h->arena, Advisor__HistoryResponse);
	struct dlog_rec *rec;
	size_t n;

	if (!r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	advisor__history_response__init(r);
	if (dlog_query(&f, &rec, &n, err, errlen) != 0)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	if (n && !admin && strcmp(rec->user, me) != 0) {
		adv_snprintf(err, errlen, "decision %s is not yours: the decisions of other users "
			     "are for admins only (admins: policy.yaml admins:)", id);
		free(rec);
		return ADVISOR__ERROR_CODE__ERR_DENIED;
	}
	if (n) {
		struct dlog_filter lf = { .verdict = -1, .user = admin ? NULL : me };
		Advisor__Decision **ps;
		size_t n_ps;

		r->decisions = ARENA_ARRAY(&h->arena, Advisor__Decision *, 1);
		if (!r->decisions || !(r->decisions[0] = handler_decision_pb(&h->arena, rec, true))) {
			free(rec);
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
		}
		r->n_decisions = 1;
		/* The links, under the same rule: a user sees only their own. */
		if (rec->parent[0]) {
			lf.id = rec->parent;
			lf.limit = 1;
			if (linked_pb(&h->arena, &lf, false, &ps, &n_ps, err, errlen) != 0) {
				free(rec);
				return ADVISOR__ERROR_CODE__ERR_INTERNAL;
			}
			r->parent = n_ps ? ps[0] : NULL;
		}
		lf.id = NULL;
		lf.parent = rec->id;
		lf.limit = DLOG_SHOW_CHILDREN_MAX;
		if (linked_pb(&h->arena, &lf, true, &r->children, &r->n_children, err,
			      errlen) != 0) {
			free(rec);
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
		}
	}
	free(rec);
	resp->history = r;
	resp->body_case = ADVISOR__RESPONSE__BODY_HISTORY;
	return 0;
}

static int do_history(struct handler *h, const struct peer *p, const char *me,
		      const struct snapshot *s, const Advisor__HistoryRequest *m,
		      Advisor__Response *resp, char *err, size_t errlen)
{
	struct dlog_filter f = { .verdict = -1, .limit = 50 };
	Advisor__HistoryResponse *r;
	struct dlog_rec *recs;
	size_t n;

	if (m->decision && *m->decision)
		return do_show(h, p, me, s, m->decision, resp, err, errlen);
	f.user = (m->user && *m->user) ? m->user : NULL;
	if (!is_admin(s, p, me)) {
		if (f.user && strcmp(f.user, me) != 0) {
			adv_snprintf(err, errlen, "history of other users is for admins only "
				     "(admins: policy.yaml admins:)");
			return ADVISOR__ERROR_CODE__ERR_DENIED;
		}
		f.user = me;
	}
	if (m->has_job_id)
		f.job_id = m->job_id;
	if (m->has_verdict)
		f.verdict = m->verdict;
	if (m->has_since)
		f.since = m->since;
	if (m->has_until)
		f.until = m->until;
	if (m->script && *m->script)
		f.script = m->script;
	if (m->has_limit)
		f.limit = m->limit < 1 ? 1 : m->limit > HISTORY_MAX ? HISTORY_MAX : m->limit;
	/* Users see their own queries, admins anyone's: the same rule as for decisions. */
	f.include_queries = m->has_include_queries && m->include_queries;
	switch (dlog_query(&f, &recs, &n, err, errlen)) {
	case 0:
		break;
	case DLOG_ERR_UNAVAILABLE:
		/* The log's server is down: err says so and what waits; advisorctl exits 69. */
		return ADVISOR__ERROR_CODE__ERR_UNAVAILABLE;
	default:
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	}
	r = ARENA_NEW(&h->arena, Advisor__HistoryResponse);
	if (r) {
		advisor__history_response__init(r);
		r->decisions = ARENA_ARRAY(&h->arena, Advisor__Decision *, n ? n : 1);
	}
	if (!r || !r->decisions) {
		free(recs);
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((r->decisions[r->n_decisions] = handler_decision_pb(&h->arena, &recs[i], false)))
			r->n_decisions++;
	free(recs);
	resp->history = r;
	resp->body_case = ADVISOR__RESPONSE__BODY_HISTORY;
	return 0;
}

/* ---- report ------------------------------------------------------------------ */

/* Like history: users summarise their own decisions, admins anyone's. */
static int do_report(struct handler *h, const struct peer *p, const char *me,
		     const struct snapshot *s, const Advisor__ReportRequest *m,
		     Advisor__Response *resp, char *err, size_t errlen)
{
	const char *user = (m->user && *m->user) ? m->user : NULL;
	int rc;

	if (!is_admin(s, p, me)) {
		if (user && strcmp(user, me) != 0) {
			adv_snprintf(err, errlen, "reports on other users are for admins only "
				     "(admins: policy.yaml admins:)");
			return ADVISOR__ERROR_CODE__ERR_DENIED;
		}
		user = me;
	}
	rc = rollout_report(m->has_since ? m->since : 0, user, m->has_by_decision && m->by_decision,
			    &h->arena, &resp->report, err, errlen);
	if (rc == 0)
		resp->body_case = ADVISOR__RESPONSE__BODY_REPORT;
	return rc;
}

/* ---- stats, reload, status --------------------------------------------------- */

static Advisor__LabelledCount *count_pb(struct arena *a, uint64_t n)
{
	Advisor__LabelledCount *c = ARENA_NEW(a, Advisor__LabelledCount);

	if (c) {
		advisor__labelled_count__init(c);
		c->has_count = 1;
		c->count = n;
	}
	return c;
}

/* A kind is a request's body case from check on (handler_frame): stats.c
 * names every one of them, the hello aside (issue 27). */
_Static_assert(STATS_KINDS == ADVISOR__REQUEST__BODY_REPORT - ADVISOR__REQUEST__BODY_CHECK + 1,
	       "stats.c has a kind for each request from check to report");

static int stats_kinds_pb(struct arena *a, const struct stats_view *v,
			  Advisor__StatsResponse *r)
{
	r->requests_by_kind = ARENA_ARRAY(a, Advisor__LabelledCount *, STATS_KINDS);
	if (!r->requests_by_kind)
		return -1;
	for (int k = 0; k < STATS_KINDS; k++) {
		Advisor__LabelledCount *c = count_pb(a, v->by_kind[k]);

		if (!c)
			return -1;
		c->kind = (char *)(uintptr_t)stats_kind_name(k);
		r->requests_by_kind[r->n_requests_by_kind++] = c;
	}
	return 0;
}

/* Checks by partition and verdict, and the unenforced rejects by partition. */
static int stats_partitions_pb(struct arena *a, const struct stats_view *v,
			       Advisor__StatsResponse *r)
{
	r->decisions = ARENA_ARRAY(a, Advisor__LabelledCount *,
				   v->n_partitions * ADV_VERDICT_COUNT + 1);
	r->unenforced = ARENA_ARRAY(a, Advisor__LabelledCount *, v->n_partitions + 1);
	if (!r->decisions || !r->unenforced)
		return -1;
	for (size_t i = 0; i < v->n_partitions; i++) {
		const struct stats_label *l = &v->partitions[i];
		Advisor__LabelledCount *c;

		for (int verdict = 0; verdict < ADV_VERDICT_COUNT; verdict++) {
			if (!(c = count_pb(a, l->n[verdict])))
				return -1;
			c->partition = (char *)(uintptr_t)l->name;
			c->has_verdict = 1;
			c->verdict = verdict;
			r->decisions[r->n_decisions++] = c;
		}
		if (!(c = count_pb(a, l->n[STATS_UNENFORCED])))
			return -1;
		c->partition = (char *)(uintptr_t)l->name;
		r->unenforced[r->n_unenforced++] = c;
	}
	return 0;
}

/* Findings by code and severity; severities never seen for a code are left out. */
static int stats_codes_pb(struct arena *a, const struct stats_view *v, Advisor__StatsResponse *r)
{
	r->findings = ARENA_ARRAY(a, Advisor__LabelledCount *, v->n_codes * ADV_SEV_COUNT + 1);
	if (!r->findings)
		return -1;
	for (size_t i = 0; i < v->n_codes; i++) {
		for (int sev = 0; sev < ADV_SEV_COUNT; sev++) {
			Advisor__LabelledCount *c;

			if (!v->codes[i].n[sev])
				continue;
			if (!(c = count_pb(a, v->codes[i].n[sev])))
				return -1;
			c->code = (char *)(uintptr_t)v->codes[i].name;
			c->has_severity = 1;
			c->severity = sev;
			r->findings[r->n_findings++] = c;
		}
	}
	return 0;
}

static int stats_latency_pb(struct arena *a, const struct stats_view *v,
			    Advisor__StatsResponse *r)
{
	static const char *const names[] = { "check", "other" };
	_Static_assert(ADV_ARRAY_SIZE(names) == STATS_LAT_KINDS, "a name for each latency kind");

	r->latency = ARENA_ARRAY(a, Advisor__LatencyHistogram *, STATS_LAT_KINDS);
	if (!r->latency)
		return -1;
	for (int k = 0; k < STATS_LAT_KINDS; k++) {
		Advisor__LatencyHistogram *l = ARENA_NEW(a, Advisor__LatencyHistogram);

		if (!l)
			return -1;
		advisor__latency_histogram__init(l);
		l->kind = (char *)(uintptr_t)names[k];
		l->n_upper_s = l->n_cumulative = STATS_LATENCY_BUCKETS;
		l->upper_s = (double *)(uintptr_t)stats_latency_bounds_s;
		l->cumulative = (uint64_t *)(uintptr_t)v->latency[k].cumulative;
		l->has_count = l->has_sum_s = 1;
		l->count = v->latency[k].count;
		l->sum_s = v->latency[k].sum_s;
		r->latency[r->n_latency++] = l;
	}
	return 0;
}

/*
 * advisor_rate_limited_total{user}: requests over budget, by user; the
 * RATELIMIT_METRIC_USERS users with the most, and the rest as "_other"
 * (issue 30: a label's values are bounded, as partition's are).
 */
static int stats_limited_pb(struct handler *h, Advisor__StatsResponse *r)
{
	struct ratelimit_count *c;
	size_t n = limiter ? ratelimit_counts(limiter, NULL, 0) : 0, kept;
	uint64_t other;

	if (!n)
		return 0;
	/* Users may be added between the two calls: what does not fit waits for the next scrape. */
	c = ARENA_ARRAY(&h->arena, struct ratelimit_count, n);
	r->rate_limited = ARENA_ARRAY(&h->arena, Advisor__LabelledCount *,
				      RATELIMIT_METRIC_USERS + 1);
	if (!c || !r->rate_limited)
		return -1;
	{
		size_t now_n = ratelimit_counts(limiter, c, n);

		if (now_n < n)
			n = now_n;
	}
	kept = ratelimit_top(c, n, RATELIMIT_METRIC_USERS, &other);
	for (size_t i = 0; i < kept; i++) {
		Advisor__LabelledCount *l = count_pb(&h->arena, c[i].over);

		if (!l || !(l->user = arena_strdup(&h->arena, user_name(h, (uid_t)c[i].uid))))
			return -1;
		r->rate_limited[r->n_rate_limited++] = l;
	}
	if (n > kept) {
		Advisor__LabelledCount *l = count_pb(&h->arena, other);

		if (!l || !(l->user = arena_strdup(&h->arena, "_other")))
			return -1;
		r->rate_limited[r->n_rate_limited++] = l;
	}
	return 0;
}

static int do_stats(struct handler *h, const struct snapshot *s, Advisor__Response *resp)
{
	Advisor__StatsResponse *r = ARENA_NEW(&h->arena, Advisor__StatsResponse);
	struct stats_view *vp = ARENA_NEW(&h->arena, struct stats_view);
	unsigned long reloads;
	uint64_t queued, logged, dropped, shed;
	bool ok;

	if (!r || !vp)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	stats_get(vp);
	snapshot_reload_stats(&reloads, &ok);
	dlog_counters(&queued, &logged, &dropped, &shed);
	advisor__stats_response__init(r);
#define U(f, v) do { r->has_##f = 1; r->f = (v); } while (0)
	U(requests, vp->requests); U(accept, vp->accept); U(warn, vp->warn); U(reject, vp->reject);
	U(errors, vp->errors); U(p50_ms, vp->p50_ms); U(p99_ms, vp->p99_ms);
	U(started, (int64_t)vp->started); U(reloads, reloads); U(last_reload_ok, ok);
	U(log_queue, queued); U(logged, logged); U(connections, vp->connections);
	U(log_dropped, dropped); U(now, (int64_t)time(NULL)); U(config_loaded, (int64_t)s->loaded);
	U(log_bytes, dlog_bytes()); U(log_shed, shed);
#undef U
	r->version = (char *)(uintptr_t)PACKAGE_VERSION;
	if (stats_kinds_pb(&h->arena, vp, r) || stats_partitions_pb(&h->arena, vp, r) ||
	    stats_codes_pb(&h->arena, vp, r) || stats_latency_pb(&h->arena, vp, r) ||
	    stats_limited_pb(h, r))
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	resp->stats = r;
	resp->body_case = ADVISOR__RESPONSE__BODY_STATS;
	return 0;
}

int handler_reload(char *msg, size_t len)
{
	struct snapshot *n;
	int rc = snapshot_reload(msg, len);

	if (rc == 0 && (n = snapshot_acquire())) {
		handler_apply_policy(n->pol);
		snapshot_release(n);
	}
	return rc;
}

static int do_reload(struct handler *h, const struct peer *p, const char *user,
		     const struct snapshot *s, Advisor__Response *resp, char *err, size_t errlen)
{
	Advisor__ReloadResponse *r = ARENA_NEW(&h->arena, Advisor__ReloadResponse);
	char msg[ADV_ERR_MAX];
	int rc;

	if (!is_admin(s, p, user)) {
		adv_snprintf(err, errlen, "reload is for admins only; %s (uid %u) is not listed "
			     "under admins: in the policy", user, (unsigned)p->uid);
		return ADVISOR__ERROR_CODE__ERR_DENIED;
	}
	if (!r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	rc = handler_reload(msg, sizeof(msg));
	msg_log(rc ? LOG_ERR : LOG_INFO, "reload requested by %s: %s", user, msg);
	advisor__reload_response__init(r);
	r->has_ok = 1;
	r->ok = rc == 0;
	r->message = arena_strdup(&h->arena, msg);
	resp->reload = r;
	resp->body_case = ADVISOR__RESPONSE__BODY_RELOAD;
	return 0;
}

static int do_status(struct handler *h, const struct snapshot *s, Advisor__Response *resp)
{
	Advisor__StatusResponse *r = ARENA_NEW(&h->arena, Advisor__StatusResponse);
	const struct snapshot_files *f = snapshot_files();
	const char *spool;

	if (!r)
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	advisor__status_response__init(r);
	r->version = (char *)(uintptr_t)PACKAGE_VERSION;
	r->has_started = r->has_pid = r->has_loaded = 1;
	r->started = (int64_t)info.started;
	r->pid = (int32_t)getpid();
	r->loaded = (int64_t)s->loaded;
	r->catalog_files = (char **)(uintptr_t)f->catalogs;
	r->n_catalog_files = f->n_catalogs;
	r->policy_file = (char *)(uintptr_t)f->policy;
	r->socket = (char *)(uintptr_t)info.socket;
	/* Where the decisions really go (issue 21): the SQLite file, or the
	 * MariaDB server and this node's spool; db only for SQLite. */
	r->log = (char *)(uintptr_t)dlog_where(&spool);
	r->spool = (char *)(uintptr_t)spool;
	r->db = spool ? NULL : (char *)(uintptr_t)info.db;
	/* Loudly (issue 30): whether Slurm answers, not only in findings. */
	r->slurm = arena_alloc(&h->arena, SLURMGRES_SOURCE_MAX);
	if (r->slurm) {
		r->has_slurm_answered = 1;
		r->slurm_answered = slurmgres_source(r->slurm, SLURMGRES_SOURCE_MAX);
	}
	resp->status = r;
	resp->body_case = ADVISOR__RESPONSE__BODY_STATUS;
	return 0;
}

/* ---- dispatch ---------------------------------------------------------------- */

/*
 * Takes a token of the caller's budget.  0 to go on (*over: a plugin check
 * over budget, answered but folded), or ERR_RATE_LIMITED with the error
 * answer's message and h->retry_ms set.
 */
static int budget(struct handler *h, const struct peer *p, const struct snapshot *s,
		  const Advisor__Request *req, char *err, size_t errlen, bool *over)
{
	uint32_t retry_ms = 0;
	struct timespec ts;
	uint64_t now_ns;

	uint32_t who = (uint32_t)p->uid;

	*over = false;
	if (!limiter || is_admin_cached(h, s, p))
		return 0;
	/* slurmctld's job_submit checks every user's jobs: each job's user
	 * pays for its own (issue 31), as at sbatch. */
	if (req->body_case == ADVISOR__REQUEST__BODY_CHECK && req->check->has_context &&
	    req->check->context == ADVISOR__CONTEXT__CTX_SUBMIT && req->check->has_job_uid &&
	    peer_speaks_for_job(p, user_name(h, p->uid), true))
		who = req->check->job_uid;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (ratelimit_take(limiter, who, now_ns, &retry_ms) != RATELIMIT_OVER)
		return 0;
	*over = true;
	if (req->body_case == ADVISOR__REQUEST__BODY_CHECK && !is_query(req->check))
		return 0;
	adv_snprintf(err, errlen, "rate limited, retry in %u ms: %s (uid %u) is over the budget "
		     "of %g requests a second (burst %d) of policy limits:", retry_ms,
		     user_name(h, p->uid), (unsigned)p->uid, s->pol->requests_per_s, s->pol->burst);
	h->retry_ms = retry_ms;
	return ADVISOR__ERROR_CODE__ERR_RATE_LIMITED;
}

static int dispatch(struct handler *h, const struct peer *p, const struct snapshot *s,
		    const Advisor__Request *req, Advisor__Response *resp, char *err, size_t errlen)
{
	const char *user = user_name(h, p->uid);
	bool over;
	int rc = budget(h, p, s, req, err, errlen, &over);

	h->over_budget = over;
	if (rc)
		return rc;
	switch (req->body_case) {
	case ADVISOR__REQUEST__BODY_CHECK:
		return do_check(h, p, user, s, req->check, resp, err, errlen, over);
	case ADVISOR__REQUEST__BODY_HISTORY:
		return do_history(h, p, user, s, req->history, resp, err, errlen);
	case ADVISOR__REQUEST__BODY_STATS:
		return do_stats(h, s, resp);
	case ADVISOR__REQUEST__BODY_REPORT:
		return do_report(h, p, user, s, req->report, resp, err, errlen);
	case ADVISOR__REQUEST__BODY_RELOAD:
		return do_reload(h, p, user, s, resp, err, errlen);
	case ADVISOR__REQUEST__BODY_STATUS:
		return do_status(h, s, resp);
	case ADVISOR__REQUEST__BODY_CKPT:
		resp->body_case = ADVISOR__RESPONSE__BODY_CKPT;
		return service_ckpt(s, req->ckpt, user, &h->arena, &resp->ckpt, err, errlen);
	case ADVISOR__REQUEST__BODY_CATALOG:
		resp->body_case = ADVISOR__RESPONSE__BODY_CATALOG;
		return service_catalog(s, req->catalog, &h->arena, &resp->catalog, err, errlen);
	case ADVISOR__REQUEST__BODY_POLICY:
		resp->body_case = ADVISOR__RESPONSE__BODY_POLICY;
		return service_policy(s, &h->arena, &resp->policy, err, errlen);
	case ADVISOR__REQUEST__BODY_PLAN:
		resp->body_case = ADVISOR__RESPONSE__BODY_PLAN;
		return service_plan(s, req->plan, user, &h->arena, &resp->plan, err, errlen);
	default:
		adv_snprintf(err, errlen, "request without a body");
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	}
}

void handler_munge_clear(struct peer_munge *m)
{
	free(m->text);
	memset(m, 0, sizeof(*m));
}

/* Asks the server for a MUNGE call on text; AUTH_PENDING to the caller. */
#define AUTH_PENDING (-1)
static int want_munge(struct peer *p, int want, const char *text, size_t len, const char *bind,
		      char *err, size_t errlen)
{
	struct peer_munge *m = &p->munge;

	handler_munge_clear(m);
	m->text = malloc(len + 1);
	if (!m->text) {
		adv_snprintf(err, errlen, "out of memory");
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	}
	memcpy(m->text, text, len);
	m->text[len] = '\0';
	m->len = len;
	if (bind)
		adv_strlcpy(m->bind, bind, sizeof(m->bind));
	m->want = want;
	return AUTH_PENDING;
}

/*
 * The hello (issue 20): the daemon's credential, minted off the worker,
 * bound to the client's nonce, a nonce of ours and our name.  The answer
 * is built in hr.
 */
static int hello(struct handler *h, struct peer *p, const Advisor__Request *req,
		 Advisor__HelloResponse *hr, char *err, size_t errlen)
{
	struct peer_munge *m = &p->munge;
	char payload[AUTH_BINDING_MAX];

	if (p->hello || req->has_auth) {
		adv_snprintf(err, errlen, "one hello per connection, without a credential");
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	}
	if (req->hello->nonce.len != AUTH_NONCE_LEN) {
		adv_snprintf(err, errlen, "the hello's nonce must be %d bytes", AUTH_NONCE_LEN);
		return ADVISOR__ERROR_CODE__ERR_BAD_REQUEST;
	}
	if (!m->done) {
		memcpy(p->cnonce, req->hello->nonce.data, AUTH_NONCE_LEN);
		if (auth_nonce(p->snonce) != 0) {
			adv_snprintf(err, errlen, "no random nonce");
			return ADVISOR__ERROR_CODE__ERR_INTERNAL;
		}
		auth_binding(payload, sizeof(payload), AUTH_SERVER, info.name, p->cnonce, p->snonce);
		return want_munge(p, PEER_MUNGE_ENCODE, payload, strlen(payload), NULL, err, errlen);
	}
	if (m->rc != AUTH_OK || !m->text) {
		adv_snprintf(err, errlen, "the daemon cannot prove its identity: %s", m->err);
		msg_log(LOG_WARNING, "TCP client %s: cannot mint the daemon's credential: %s", p->addr,
			m->err);
		handler_munge_clear(m);
		return ADVISOR__ERROR_CODE__ERR_UNAVAILABLE;
	}
	hr->name = (char *)(uintptr_t)info.name;
	hr->has_nonce = 1;
	hr->nonce.data = arena_alloc(&h->arena, AUTH_NONCE_LEN);
	hr->has_cred = 1;
	hr->cred.data = (uint8_t *)arena_strdup(&h->arena, m->text);
	if (!hr->nonce.data || !hr->cred.data) {
		handler_munge_clear(m);
		adv_snprintf(err, errlen, "out of memory");
		return ADVISOR__ERROR_CODE__ERR_INTERNAL;
	}
	memcpy(hr->nonce.data, p->snonce, AUTH_NONCE_LEN);
	hr->nonce.len = AUTH_NONCE_LEN;
	hr->cred.len = m->len;
	handler_munge_clear(m);
	p->hello = true;
	return 0;
}

/*
 * TCP (issue 13): the credential of a connection's first request after the
 * hello names its caller; a later one may name it again (each is decoded,
 * so replays are refused), never a connection without one.  It must carry
 * the hello's binding (issue 20): our name and the connection's nonces, so
 * that one minted for another daemon, or collected by a fake server, is
 * refused.  munge's own words explain a refusal, and the connection is
 * closed after it, as slurmctld does.
 */
static int authenticate(struct peer *p, const Advisor__Request *req, char *err, size_t errlen)
{
	struct peer_munge *m = &p->munge;
	char bind[AUTH_BINDING_MAX];
	int rc;

	if (!req->has_auth) {
		if (p->authed)
			return 0;
		adv_snprintf(err, errlen, p->hello ? "a TCP connection must present a MUNGE credential "
			     "after the hello" : "a TCP connection must open with a hello and present "
			     "a MUNGE credential (is the client older than the daemon?)");
		return ADVISOR__ERROR_CODE__ERR_AUTH;
	}
	if (!p->hello) {
		adv_snprintf(err, errlen, "credential refused: the client did not ask the daemon to "
			     "prove its identity first (an advisor client older than this daemon: "
			     "upgrade it; a credential sent before the hello could have been "
			     "collected by a fake server)");
		msg_log(LOG_WARNING, "TCP client %s: credential without a hello refused", p->addr);
		return ADVISOR__ERROR_CODE__ERR_AUTH;
	}
	if (!m->done) {
		if (req->auth.len == 0 || req->auth.len > AUTH_CRED_MAX) {
			adv_snprintf(err, errlen, "credential refused: munge: Invalid credential");
			return ADVISOR__ERROR_CODE__ERR_AUTH;
		}
		auth_binding(bind, sizeof(bind), AUTH_CLIENT, info.name, p->cnonce, p->snonce);
		return want_munge(p, PEER_MUNGE_DECODE, (const char *)req->auth.data, req->auth.len,
				  bind, err, errlen);
	}
	rc = m->rc;
	if (rc != AUTH_OK) {
		adv_snprintf(err, errlen, "credential refused: %s", m->err);
		msg_log(LOG_WARNING, "TCP client %s: credential refused: %s", p->addr, m->err);
		handler_munge_clear(m);
		return rc == AUTH_ERR_SOCKET || rc == AUTH_ERR_OTHER ? ADVISOR__ERROR_CODE__ERR_UNAVAILABLE
								      : ADVISOR__ERROR_CODE__ERR_AUTH;
	}
	p->uid = m->uid;
	p->gid = m->gid;
	handler_munge_clear(m);
	if (!p->authed && admit_fn && admit_fn(p, err, errlen) != 0) {
		msg_log(LOG_WARNING, "TCP client %s (uid %u): %s", p->addr, (unsigned)p->uid, err);
		return ADVISOR__ERROR_CODE__ERR_UNAVAILABLE;
	}
	p->authed = true;
	return 0;
}

int handler_frame(struct handler *h, struct peer *p, const uint8_t *frame, size_t len,
		  struct outbuf *out)
{
	Advisor__Response resp = ADVISOR__RESPONSE__INIT;
	Advisor__HelloResponse hr = ADVISOR__HELLO_RESPONSE__INIT;
	double t0 = now_us();
	Advisor__Request *req;
	struct snapshot *s = NULL;
	char err[ADV_ERR_MAX] = "";
	bool close_after = false;
	bool is_hello;
	int rc;

	h->over_budget = false;
	h->retry_ms = 0;
	req = advisor__request__unpack(NULL, len, frame);
	if (!req) {
		handler_munge_clear(&p->munge);
		handler_refuse(h, ADVISOR__ERROR_CODE__ERR_MALFORMED,
			       "cannot decode the request (not an advisor.Request)", out);
		return HANDLER_CLOSE;
	}
	resp.has_version = 1;
	resp.version = WIRE_VERSION;
	resp.has_id = req->has_id;
	resp.id = req->id;
	is_hello = req->body_case == ADVISOR__REQUEST__BODY_HELLO && req->hello;
	if (!req->has_version || req->version != WIRE_VERSION) {
		adv_snprintf(err, sizeof(err), "protocol version %u is not supported; this daemon "
			     "speaks version %u", req->has_version ? req->version : 0, WIRE_VERSION);
		rc = ADVISOR__ERROR_CODE__ERR_VERSION;
		close_after = true;
	} else if (p->tcp && is_hello && req->hello->has_nonce) {
		rc = hello(h, p, req, &hr, err, sizeof(err));
		close_after = rc != 0;
	} else if (p->tcp && (rc = authenticate(p, req, err, sizeof(err))) != 0) {
		close_after = true;
	} else if (is_hello) {
		/* After the client's credential (TCP), or on the unix socket: who we are. */
		hr.name = (char *)(uintptr_t)info.name;
	} else {
		s = snapshot_acquire();
		rc = s ? dispatch(h, p, s, req, &resp, err, sizeof(err))
		       : ADVISOR__ERROR_CODE__ERR_UNAVAILABLE;
	}
	if (rc == AUTH_PENDING) {
		advisor__request__free_unpacked(req, NULL);
		arena_reset(&h->arena);
		return HANDLER_MUNGE;
	}
	if (!rc && is_hello) {
		resp.body_case = ADVISOR__RESPONSE__BODY_HELLO;
		resp.hello = &hr;
	}
	if (rc) {
		resp.body_case = ADVISOR__RESPONSE__BODY__NOT_SET;
		service_error(&resp, &h->arena, rc, err[0] ? err : "internal error");
		if (rc == ADVISOR__ERROR_CODE__ERR_RATE_LIMITED && resp.error) {
			resp.error->has_retry_after_ms = 1;
			resp.error->retry_after_ms = h->retry_ms;
		}
		stats_error();
	}
	/* Pack while the snapshot is held: answers may point into it. */
	if (!emit(h, &resp, out))
		close_after = true;
	if (!rc && !is_hello)
		stats_request((int)req->body_case - ADVISOR__REQUEST__BODY_CHECK,
			      req->body_case == ADVISOR__REQUEST__BODY_CHECK && resp.check
			      ? resp.check->verdict : -1, now_us() - t0);
	snapshot_release(s);
	advisor__request__free_unpacked(req, NULL);
	arena_reset(&h->arena);
	return close_after ? HANDLER_CLOSE : HANDLER_KEEP;
}
