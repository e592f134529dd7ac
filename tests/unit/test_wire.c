/*
 * test_wire.c - framing (wire.c) and message conversion (convert.c).
 *
 * Real sockets only: socketpairs for framing and a server thread on a
 * socketpair for the client round trip.  Timeouts are asserted by their
 * result code, never by how long they took.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "advisor.pb-c.h"
#include "wire/auth.h"
#include "wire/convert.h"
#include "wire/wire.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void test_frame_round_trip(void **state)
{
	uint8_t msg[3000], *got;
	size_t len;
	int sv[2];

	(void)state;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7);
	pair(sv);
	assert_int_equal(wire_write_frame(sv[0], msg, sizeof(msg), 1000), WIRE_OK);
	assert_int_equal(wire_write_frame(sv[0], msg, 0, 1000), WIRE_OK);
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 1000), WIRE_OK);
	assert_int_equal(len, sizeof(msg));
	assert_memory_equal(got, msg, sizeof(msg));
	free(got);
	/* An empty frame is a valid (empty) message. */
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 1000), WIRE_OK);
	assert_int_equal(len, 0);
	free(got);
	close(sv[0]);
	close(sv[1]);
}

static void test_frame_header_is_big_endian(void **state)
{
	uint8_t msg[] = { 1, 2, 3 }, hdr[4];
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(wire_write_frame(sv[0], msg, sizeof(msg), 1000), WIRE_OK);
	assert_int_equal(read(sv[1], hdr, 4), 4);
	assert_int_equal(hdr[0], 0);
	assert_int_equal(hdr[1], 0);
	assert_int_equal(hdr[2], 0);
	assert_int_equal(hdr[3], 3);
	close(sv[0]);
	close(sv[1]);
}

static void test_oversized_refused(void **state)
{
	uint8_t hdr[4] = { 0x00, 0x10, 0x00, 0x01 };   /* 1 MiB + 1 */
	uint8_t *big = calloc(1, WIRE_MAX_FRAME + 1), *got;
	size_t len;
	int sv[2];

	(void)state;
	assert_non_null(big);
	pair(sv);
	assert_int_equal(wire_write_frame(sv[0], big, WIRE_MAX_FRAME + 1, 1000), WIRE_ERR_TOO_LARGE);
	free(big);
	assert_int_equal(write(sv[0], hdr, 4), 4);
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 1000), WIRE_ERR_TOO_LARGE);
	assert_null(got);
	close(sv[0]);
	close(sv[1]);
}

static void test_exactly_the_limit_passes(void **state)
{
	uint8_t *big = calloc(1, WIRE_MAX_FRAME), *got;
	size_t len;
	int sv[2], status;
	pid_t pid;

	(void)state;
	assert_non_null(big);
	pair(sv);
	big[WIRE_MAX_FRAME - 1] = 0x5a;
	/* The socket buffer is smaller than 1 MiB: the writer must be another process. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[1]);
		_exit(wire_write_frame(sv[0], big, WIRE_MAX_FRAME, 5000) == WIRE_OK ? 0 : 1);
	}
	close(sv[0]);
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 5000), WIRE_OK);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(len, WIRE_MAX_FRAME);
	assert_int_equal(got[WIRE_MAX_FRAME - 1], 0x5a);
	free(got);
	free(big);
	close(sv[1]);
}

static void test_truncated_frame(void **state)
{
	uint8_t part[14] = { 0, 0, 0, 100 };
	uint8_t *got;
	size_t len;
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(write(sv[0], part, sizeof(part)), (ssize_t)sizeof(part));
	close(sv[0]);
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 1000), WIRE_ERR_CLOSED);
	assert_null(got);
	close(sv[1]);
}

static void test_read_timeout(void **state)
{
	uint8_t half[6] = { 0, 0, 0, 50, 1, 2 };
	uint8_t *got;
	size_t len;
	int sv[2];

	(void)state;
	pair(sv);
	/* Silent peer. */
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 50), WIRE_ERR_TIMEOUT);
	/* Half a frame, then silence: the deadline covers the whole frame. */
	assert_int_equal(write(sv[0], half, sizeof(half)), (ssize_t)sizeof(half));
	assert_int_equal(wire_read_frame(sv[1], &got, &len, 50), WIRE_ERR_TIMEOUT);
	assert_null(got);
	close(sv[0]);
	close(sv[1]);
}

static void test_write_timeout(void **state)
{
	uint8_t *big = calloc(1, WIRE_MAX_FRAME);
	int sv[2];

	(void)state;
	assert_non_null(big);
	pair(sv);
	/* Nobody reads: the socket buffer fills and the write must give up. */
	assert_int_equal(wire_write_frame(sv[0], big, WIRE_MAX_FRAME, 50), WIRE_ERR_TIMEOUT);
	free(big);
	close(sv[0]);
	close(sv[1]);
}

static void test_peer_gone_is_not_a_signal(void **state)
{
	uint8_t msg[16] = { 0 };
	int sv[2];

	(void)state;
	pair(sv);
	close(sv[1]);
	/* MSG_NOSIGNAL: no SIGPIPE kills the test; the error says closed. */
	assert_int_equal(wire_write_frame(sv[0], msg, sizeof(msg), 100), WIRE_ERR_CLOSED);
	close(sv[0]);
}

static void test_connect_missing_socket(void **state)
{
	int fd = -2;

	(void)state;
	assert_int_equal(wire_connect("/nonexistent/advisor/test.sock", 100, &fd), WIRE_ERR_CONNECT);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(fd, -1);
	assert_string_equal(wire_strerror(WIRE_ERR_TOO_LARGE), "frame larger than 1 MiB");
}

/* ---- conversion -------------------------------------------------------------- */

static void fill_request(struct adv_request *r)
{
	engine_request_init(r);
	strcpy(r->res.gpu, "h100-sxm");
	r->res.gpus = 1024;
	r->res.nodes = 128;
	r->res.gpus_per_node = 8;
	strcpy(r->res.partition, "h100");
	strcpy(r->res.constraint, "h100&ib");
	strcpy(r->account, "llm-team");
	strcpy(r->wl.model, "llama3-405b");
	r->wl.layout = (struct adv_layout){ .tp = 8, .pp = 16, .cp = 2, .ep = 1, .etp = 1,
					    .vpp = 2, .dp = ADV_UNSET, .sp = 1 };
	r->wl.zero = 1;
	r->wl.precision = ADV_PREC_FP8;
	r->wl.seq = 8192;
	r->wl.mbs = 1;
	r->wl.gbs = 2048;
	r->wl.recompute = ADV_RECOMPUTE_SELECTIVE;
	r->wl.task = ADV_TASK_TRAIN;
	r->wl.framework = ADV_FW_MEGATRON;
	r->wl.ckpt = (struct adv_ckpt_req){ .given = true, .off = false, .interval_s = 5400,
					    .async = true };
	r->wl.tokens = 15.6e12;
	r->wl.mode = ADV_MODE_WARN;
}

static void test_request_round_trip(void **state)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT, *back;
	struct convert_request_pb buf;
	struct adv_request in, out;
	uint8_t packed[2048];
	size_t len;
	char err[256];

	(void)state;
	fill_request(&in);
	rq.body_case = ADVISOR__REQUEST__BODY_CHECK;
	rq.check = convert_request_to_pb(&in, ADV_CTX_SBATCH, 4242, "d-1-2-3", &buf);
	len = advisor__request__get_packed_size(&rq);
	assert_true(len < sizeof(packed));
	advisor__request__pack(&rq, packed);
	back = advisor__request__unpack(NULL, len, packed);
	assert_non_null(back);
	assert_int_equal(back->check->context, ADVISOR__CONTEXT__CTX_SBATCH);
	assert_int_equal(back->check->job_id, 4242);
	assert_string_equal(back->check->parent_decision, "d-1-2-3");
	assert_int_equal(convert_request_from_pb(back->check, &out, err, sizeof(err)), 0);
	assert_string_equal(out.res.gpu, in.res.gpu);
	assert_int_equal(out.res.gpus, 1024);
	assert_int_equal(out.res.nodes, 128);
	assert_int_equal(out.res.gpus_per_node, 8);
	assert_string_equal(out.res.partition, "h100");
	assert_string_equal(out.res.constraint, "h100&ib");
	assert_string_equal(out.account, "llm-team");
	assert_string_equal(out.wl.model, "llama3-405b");
	assert_memory_equal(&out.wl.layout, &in.wl.layout, sizeof(in.wl.layout));
	assert_int_equal(out.wl.zero, 1);
	assert_int_equal(out.wl.precision, ADV_PREC_FP8);
	assert_int_equal(out.wl.seq, 8192);
	assert_int_equal(out.wl.mbs, 1);
	assert_int_equal(out.wl.gbs, 2048);
	assert_int_equal(out.wl.recompute, ADV_RECOMPUTE_SELECTIVE);
	assert_int_equal(out.wl.framework, ADV_FW_MEGATRON);
	assert_true(out.wl.ckpt.given && out.wl.ckpt.async && !out.wl.ckpt.off);
	assert_true(out.wl.ckpt.interval_s == 5400);
	assert_true(out.wl.tokens == 15.6e12);
	assert_int_equal(out.wl.mode, ADV_MODE_WARN);
	/* The user is never taken from the wire. */
	assert_string_equal(out.user, "");
	advisor__request__free_unpacked(back, NULL);
}

static void test_unset_stays_unset(void **state)
{
	Advisor__CheckRequest *m;
	struct convert_request_pb buf;
	struct adv_request in, out, init;
	char err[256];

	(void)state;
	engine_request_init(&in);
	engine_request_init(&init);
	m = convert_request_to_pb(&in, ADV_CTX_ADVISORCTL, 0, NULL, &buf);
	assert_false(m->workload->has_zero);
	assert_false(m->workload->layout->has_tp);
	assert_null(m->workload->ckpt);
	assert_null(m->resources->gpu);
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), 0);
	assert_memory_equal(&out, &init, sizeof(out));
}

static void test_request_out_of_range(void **state)
{
	Advisor__CheckRequest *m;
	struct convert_request_pb buf;
	struct adv_request in, out;
	char err[256];

	(void)state;
	fill_request(&in);
	m = convert_request_to_pb(&in, ADV_CTX_ADVISORCTL, 0, NULL, &buf);
	buf.wl.wl.zero = 7;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "zero"));
	buf.wl.wl.zero = 1;
	buf.wl.layout.tp = 0;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "layout"));
	buf.wl.layout.tp = 8;
	buf.wl.wl.precision = 9;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	buf.wl.wl.precision = 0;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), 0);
	/* The issue-19 fields: each out of its range is refused by name. */
	buf.wl.wl.has_grad_dtype = 1;
	buf.wl.wl.grad_dtype = ADV_PREC_FP8;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "grad_dtype"));
	buf.wl.wl.grad_dtype = ADV_PREC_BF16;
	buf.wl.wl.has_mem_share = 1;
	buf.wl.wl.mem_share = 1001;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mem_share"));
	buf.wl.wl.mem_share = 900;
	buf.wl.wl.has_kv_dtype = 1;
	buf.wl.wl.kv_dtype = 9;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "kv_dtype"));
	buf.wl.wl.kv_dtype = ADV_PREC_FP8;
	buf.wl.wl.has_weights = 1;
	buf.wl.wl.weights = 99;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "weights"));
	buf.wl.wl.weights = ADV_WEIGHTS_INT4;
	assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), 0);
	/* sbatch -C (issue 28): longer than the request keeps is refused by
	 * name, not cut to another constraint. */
	{
		char longc[sizeof(in.res.constraint) + 8];

		memset(longc, 'a', sizeof(longc) - 1);
		longc[sizeof(longc) - 1] = '\0';
		buf.res.res.constraint = longc;
		assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "constraint"));
		buf.res.res.constraint = (char *)"h100";
		assert_int_equal(convert_request_from_pb(m, &out, err, sizeof(err)), 0);
		assert_string_equal(out.res.constraint, "h100");
	}
}

static void fill_result(struct adv_result *r)
{
	memset(r, 0, sizeof(*r));
	r->verdict = ADV_REJECT;
	r->mode = ADV_MODE_ENFORCE;
	r->has_layout = r->has_memory = r->has_checkpoint = r->has_estimate = true;
	r->layout = (struct adv_layout_out){ 1024, 128, 8, 8, 16, 1, 1, 1, 2, 8, 1, true };
	r->precision = ADV_PREC_BF16;
	r->recompute = ADV_RECOMPUTE_FULL;
	r->task = ADV_TASK_TRAIN;
	r->framework = ADV_FW_MEGATRON;
	r->seq = 8192;
	r->mbs = 1;
	r->gbs = 2048;
	r->memory = (struct adv_memory){ 91.25, 76.65, 79.65, 10.1, 20.2, 30.3, 25.5, 0, 1.0 / 3,
					 2.3, 3, 8, 4.5, true, 80.5, true };
	r->checkpoint = (struct adv_checkpoint){ 21600, 4394.5, 4469.1, 4394.0, 0.129, 0.0565,
						 114.2, 24.4, 5682.0 };
	r->estimate = (struct adv_estimate){ 405.9, 405.9, 12.3, 1.4e6, 0.41, 54.2, 7.1e6, 2300.5,
					     0.06 };
	r->n_findings = 2;
	strcpy(r->findings[0].code, "MEM_OVER_CAPACITY");
	r->findings[0].severity = ADV_SEV_REJECT;
	strcpy(r->findings[0].message, "91.25 GiB per GPU does not fit in 76.65 GiB");
	strcpy(r->findings[0].fix, "--llm-recompute=full");
	/* What it rests on and where each came from (issue 18). */
	r->findings[0].uses = ADV_USES(ADV_F_SEQ) | ADV_USES(ADV_F_TP) | ADV_USES(ADV_F_WORLD);
	r->from[ADV_F_SEQ] = ADV_FROM_ASSUMED;
	r->from[ADV_F_TP] = ADV_FROM_JOB;
	r->from[ADV_F_ZERO] = ADV_FROM_FRAMEWORK;
	r->from[ADV_F_WORLD] = ADV_FROM_OPTION;
	strcpy(r->findings[1].code, "PIPELINE_BUBBLE");
	r->findings[1].severity = ADV_SEV_WARN;
	strcpy(r->findings[1].message, "bubble 6%");
	/* Issue 28: the reason a job is not an LLM job goes with it. */
	strcpy(r->not_llm_why, "line 4 starts torchrun, but nothing in the job names an LLM");
}

static void test_result_round_trip(void **state)
{
	Advisor__Response resp = ADVISOR__RESPONSE__INIT, *back;
	struct convert_result_pb buf;
	struct adv_result in, out;
	uint8_t *packed;
	size_t len;

	(void)state;
	fill_result(&in);
	resp.body_case = ADVISOR__RESPONSE__BODY_CHECK;
	resp.check = convert_result_to_pb(&in, "d-abc-1-7", &buf);
	len = advisor__response__get_packed_size(&resp);
	packed = malloc(len);
	assert_non_null(packed);
	advisor__response__pack(&resp, packed);
	back = advisor__response__unpack(NULL, len, packed);
	free(packed);
	assert_non_null(back);
	assert_string_equal(back->check->decision_id, "d-abc-1-7");
	convert_result_from_pb(back->check, &out);
	/* Bit for bit: doubles travel as doubles, so 1/3 survives exactly. */
	assert_memory_equal(&out, &in, sizeof(in));
	assert_null(back->check->findings[1]->fix);
	advisor__response__free_unpacked(back, NULL);
}

static void test_absent_parts_stay_absent(void **state)
{
	struct convert_result_pb buf;
	struct adv_result in, out;
	Advisor__CheckResponse *m;

	(void)state;
	fill_result(&in);
	in.has_memory = in.has_checkpoint = false;
	m = convert_result_to_pb(&in, NULL, &buf);
	assert_null(m->memory);
	assert_null(m->checkpoint);
	assert_null(m->decision_id);
	convert_result_from_pb(m, &out);
	assert_false(out.has_memory);
	assert_false(out.has_checkpoint);
	assert_true(out.has_layout);
}

/* A one-request server on the other end of a socketpair. */
struct fake {
	int fd;
	uint32_t version_seen;
	int gpus_seen;
};

static void *fake_server(void *arg)
{
	struct fake *f = arg;
	Advisor__Response resp = ADVISOR__RESPONSE__INIT;
	struct convert_result_pb buf;
	struct adv_result res;
	struct adv_request req;
	Advisor__Request *rq;
	char err[256];
	uint8_t *frame;
	size_t len;

	if (wire_read_frame(f->fd, &frame, &len, 2000) != WIRE_OK)
		return NULL;
	rq = advisor__request__unpack(NULL, len, frame);
	free(frame);
	if (!rq)
		return NULL;
	f->version_seen = rq->version;
	if (rq->check && convert_request_from_pb(rq->check, &req, err, sizeof(err)) == 0)
		f->gpus_seen = req.res.gpus;
	fill_result(&res);
	resp.has_version = 1;
	resp.version = WIRE_VERSION;
	resp.body_case = ADVISOR__RESPONSE__BODY_CHECK;
	resp.check = convert_result_to_pb(&res, "d-fake-1", &buf);
	wire_write_message(f->fd, &resp.base, 2000);
	advisor__request__free_unpacked(rq, NULL);
	return NULL;
}

static void test_exchange_with_server(void **state)
{
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	Advisor__Response *resp;
	struct convert_request_pb buf;
	struct adv_request req;
	struct adv_result res, want;
	struct fake f;
	pthread_t th;
	char err[256];
	int sv[2];

	(void)state;
	pair(sv);
	f = (struct fake){ .fd = sv[1] };
	assert_int_equal(pthread_create(&th, NULL, fake_server, &f), 0);
	fill_request(&req);
	rq.body_case = ADVISOR__REQUEST__BODY_CHECK;
	rq.check = convert_request_to_pb(&req, ADV_CTX_SRUN, 0, NULL, &buf);
	assert_int_equal(wire_exchange(sv[0], 2000, &rq, &resp, err, sizeof(err)), WIRE_OK);
	pthread_join(th, NULL);
	assert_int_equal(f.version_seen, WIRE_VERSION);
	assert_int_equal(f.gpus_seen, 1024);
	assert_string_equal(resp->check->decision_id, "d-fake-1");
	convert_result_from_pb(resp->check, &res);
	fill_result(&want);
	assert_memory_equal(&res, &want, sizeof(res));
	advisor__response__free_unpacked(resp, NULL);
	close(sv[0]);
	close(sv[1]);
}

static void test_remote_error(void **state)
{
	Advisor__Response r = ADVISOR__RESPONSE__INIT, *resp;
	Advisor__Request rq = ADVISOR__REQUEST__INIT;
	Advisor__StatsRequest st = ADVISOR__STATS_REQUEST__INIT;
	Advisor__Error e = ADVISOR__ERROR__INIT;
	char err[256], msg[] = "reload is for admins only";
	int sv[2];

	(void)state;
	pair(sv);
	e.has_code = 1;
	e.code = ADVISOR__ERROR_CODE__ERR_DENIED;
	e.message = msg;
	r.error = &e;
	/* Queue the answer first: a socketpair buffers it for the exchange to read. */
	assert_int_equal(wire_write_message(sv[1], &r.base, 1000), WIRE_OK);
	rq.body_case = ADVISOR__REQUEST__BODY_STATS;
	rq.stats = &st;
	assert_int_equal(wire_exchange(sv[0], 1000, &rq, &resp, err, sizeof(err)), WIRE_ERR_REMOTE);
	assert_string_equal(err, msg);
	assert_int_equal(resp->error->code, ADVISOR__ERROR_CODE__ERR_DENIED);
	advisor__response__free_unpacked(resp, NULL);
	close(sv[0]);
	close(sv[1]);
}

/*
 * The payload a TCP credential is bound by (issue 20): role, daemon name
 * and both nonces, so that another daemon's or connection's differs.
 */
static void test_auth_binding(void **st)
{
	uint8_t c[AUTH_NONCE_LEN], s2[AUTH_NONCE_LEN];
	char a[AUTH_BINDING_MAX], b[AUTH_BINDING_MAX];

	(void)st;
	memset(c, 0xab, sizeof(c));
	memset(s2, 0x01, sizeof(s2));
	auth_binding(a, sizeof(a), AUTH_CLIENT, "svc1:6830", c, s2);
	assert_string_equal(a, "advisor-client name=svc1:6830 cnonce=abababababababababababababababab "
			    "snonce=01010101010101010101010101010101");
	auth_binding(b, sizeof(b), AUTH_SERVER, "svc1:6830", c, s2);
	assert_string_not_equal(a, b);
	auth_binding(b, sizeof(b), AUTH_CLIENT, "svc2:6830", c, s2);
	assert_string_not_equal(a, b);
	assert_int_equal(auth_nonce(c), 0);
	auth_binding(b, sizeof(b), AUTH_CLIENT, "svc1:6830", c, s2);
	assert_string_not_equal(a, b);
	assert_true(auth_name_ok("svc1.example.org:6830"));
	assert_false(auth_name_ok(""));
	assert_false(auth_name_ok("two words"));
	assert_false(auth_name_ok("tab\there"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_binding),
		cmocka_unit_test(test_frame_round_trip),
		cmocka_unit_test(test_frame_header_is_big_endian),
		cmocka_unit_test(test_oversized_refused),
		cmocka_unit_test(test_exactly_the_limit_passes),
		cmocka_unit_test(test_truncated_frame),
		cmocka_unit_test(test_read_timeout),
		cmocka_unit_test(test_write_timeout),
		cmocka_unit_test(test_peer_gone_is_not_a_signal),
		cmocka_unit_test(test_connect_missing_socket),
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_unset_stays_unset),
		cmocka_unit_test(test_request_out_of_range),
		cmocka_unit_test(test_result_round_trip),
		cmocka_unit_test(test_absent_parts_stay_absent),
		cmocka_unit_test(test_exchange_with_server),
		cmocka_unit_test(test_remote_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
