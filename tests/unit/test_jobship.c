/*
 * test_jobship.c - the client's half of the job reader (common/wire/jobship.c)
 * and the check loop that ships files round after round
 * (wire_client_check_job in common/wire/wire.c).
 *
 * Real files in a scratch directory and a fake daemon on a real unix
 * socket; nothing is mocked.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "advisor.pb-c.h"
#include "util.h"
#include "scratch.h"
#include "wire/jobship.h"
#include "wire/wire.h"

/* A script as the plugin ships it (scripttext.h); freed by the caller. */
static struct scripttext *text_of(struct scripttext *st, const char *script, size_t len)
{
	assert_int_equal(scripttext_set(st, script, len), 0);
	return st;
}

/* n bytes of kept lines of 64 bytes ("xxx...x\n"), the last one ending the text. */
static void lines_of_x(char *s, size_t n)
{
	memset(s, 'x', n);
	for (size_t i = 63; i < n; i += 64)
		s[i] = '\n';
	s[n - 1] = '\n';
}

static const Advisor__JobFile *file_named(const Advisor__JobText *jt, const char *path)
{
	for (size_t i = 0; i < jt->n_files; i++)
		if (strcmp(jt->files[i]->path, path) == 0)
			return jt->files[i];
	return NULL;
}

static void test_text_fields(void **state)
{
	static const char script[] = "#!/bin/bash\n#SBATCH -N 4\nsrun python pretrain_gpt.py\n";
	char *argv[] = { (char *)"--lr", (char *)"3e-4", NULL };
	char *env[] = { (char *)"TP=4", (char *)"HF_TOKEN=hf_abc", (char *)"PATH=/usr/bin", NULL };
	struct scripttext st;
	struct jobship *js;
	Advisor__JobText *jt;

	(void)state;
	js = jobship_new(JOBREAD_SBATCH, "train.sbatch", text_of(&st, script, strlen(script)), 2,
			 argv, env, "/home/u/run", 32, 8);
	assert_non_null(js);
	jt = jobship_text(js, false);
	assert_true(jt->has_tool);
	assert_int_equal(jt->tool, JOBREAD_SBATCH);
	assert_string_equal(jt->script_name, "train.sbatch");
	assert_true(jt->has_script);
	assert_int_equal(jt->script.len, strlen(script));
	assert_memory_equal(jt->script.data, script, strlen(script));
	/* Issue 27: the whole script, said so. */
	assert_true(jt->has_script_size && jt->has_script_read);
	assert_int_equal(jt->script_size, strlen(script));
	assert_int_equal(jt->script_read, strlen(script));
	assert_false(jt->has_script_cut);
	assert_int_equal(jt->n_argv, 2);
	assert_string_equal(jt->argv[0], "--lr");
	assert_string_equal(jt->argv[1], "3e-4");
	assert_int_equal(jt->n_env, 2);
	assert_string_equal(jt->env[0], "TP=4");
	assert_string_equal(jt->env[1], "PATH=/usr/bin");
	assert_string_equal(jt->cwd, "/home/u/run");
	assert_int_equal(jt->ntasks, 32);
	assert_int_equal(jt->ntasks_per_node, 8);
	assert_int_equal(jt->n_files, 0);
	assert_false(jt->has_final && jt->final);
	assert_true(jobship_text(js, true)->final);
	assert_int_equal(jobship_bytes(js), strlen(script));
	/* The message packs: it is what goes on the wire. */
	assert_true(protobuf_c_message_get_packed_size(&jt->base) > strlen(script));
	jobship_free(js);
	scripttext_free(&st);

	/* srun: a command and nothing else; cwd and script_name are copies. */
	{
		char cwd[64] = "/scratch/x";

		js = jobship_new(JOBREAD_SRUN, NULL, NULL, 2, argv, NULL, cwd, 0, 0);
		assert_non_null(js);
		cwd[1] = 'X';
		jt = jobship_text(js, false);
		assert_false(jt->has_script);
		assert_false(jt->has_script_size);
		assert_null(jt->script_name);
		assert_string_equal(jt->cwd, "/scratch/x");
		assert_false(jt->has_ntasks);
		assert_int_equal(jt->n_env, 0);
		jobship_free(js);
	}
	jobship_free(NULL);
}

static void test_secret_names(void **state)
{
	static const char *const secret[] = {
		"HF_TOKEN=x", "HUGGING_FACE_HUB_TOKEN=x", "GITHUB_TOKEN=x", "WANDB_API_KEY=x",
		"OPENAI_APIKEY=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_ACCESS_KEY_ID=x",
		"MLFLOW_TRACKING_PASSWORD=x", "DB_PASSWD=x", "MYSQL_PWD=x", "SSH_AUTH_SOCK=x",
		"client_secret=x", "GPG_PASSPHRASE=x", "GOOGLE_APPLICATION_CREDENTIALS=x",
		"SSH_PRIVATE=x", "SESSION_COOKIE=x", "SMTP_PASS=x", "hf_token=x", "SSH_KEYS=x",
		"HFTOKEN",
	};
	static const char *const kept[] = {
		"TOKENIZER_MODEL=/data/tok.model", "TOKENIZERS_PARALLELISM=false",
		"TRAIN_TOKENS=1000000000", "PWD=/home/u", "OLDPWD=/", "CUDA_VISIBLE_DEVICES=0,1",
		"TP=8", "MASTER_ADDR=node1", "NUM_KV_HEADS=8", "KEYED_BY=x", "PASSES=3",
	};

	(void)state;
	for (size_t i = 0; i < ADV_ARRAY_SIZE(secret); i++)
		if (!jobship_env_secret(secret[i]))
			fail_msg("%s not taken for a secret", secret[i]);
	for (size_t i = 0; i < ADV_ARRAY_SIZE(kept); i++)
		if (jobship_env_secret(kept[i]))
			fail_msg("%s taken for a secret", kept[i]);
}

static void test_env_bounds(void **state)
{
	char big[5000];
	char *env[] = { (char *)"A=1", big, (char *)"BASH_FUNC_module%%=() { :; }",
			(char *)"=odd", (char *)"NOVALUE", (char *)"WANDB_API_KEY=k", (char *)"B=2",
			NULL };
	struct jobship *js;
	Advisor__JobText *jt;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "LS_COLORS=", 10);
	js = jobship_new(JOBREAD_SBATCH, "s", NULL, 0, NULL, env, "/", 0, 0);
	assert_non_null(js);
	jt = jobship_text(js, false);
	assert_int_equal(jt->n_env, 2);
	assert_string_equal(jt->env[0], "A=1");
	assert_string_equal(jt->env[1], "B=2");
	jobship_free(js);
}

static void test_fetch_statuses(void **state)
{
	char file[PATH_MAX], link[PATH_MAX], dir[PATH_MAX], missing[PATH_MAX], fifo[PATH_MAX];
	char notdir[PATH_MAX], locked[PATH_MAX];
	char *paths[10];
	const Advisor__JobFile *f;
	struct scripttext st;
	struct jobship *js;
	Advisor__JobText *jt;

	(void)state;
	scratch_write("ds.json", "{\"zero_optimization\": {\"stage\": 3}}\n", 37);
	scratch_path(file, sizeof(file), "ds.json");
	scratch_path(link, sizeof(link), "link.json");
	assert_int_equal(symlink(file, link), 0);
	scratch_path(dir, sizeof(dir), "model");
	assert_int_equal(mkdir(dir, 0755), 0);
	scratch_path(missing, sizeof(missing), "nope.yaml");
	scratch_path(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	scratch_path(notdir, sizeof(notdir), "ds.json/sub.yaml");
	scratch_write("locked.yaml", "a: 1\n", 5);
	scratch_path(locked, sizeof(locked), "locked.yaml");
	assert_int_equal(chmod(locked, 0), 0);
	paths[0] = file;
	paths[1] = link;
	paths[2] = dir;
	paths[3] = missing;
	paths[4] = fifo;
	paths[5] = notdir;
	paths[6] = (char *)"relative.yaml";
	paths[7] = (char *)"/proc/self/environ";
	paths[8] = locked;
	paths[9] = file;   /* twice: shipped once */

	js = jobship_new(JOBREAD_SBATCH, "job.sbatch", text_of(&st, "srun true\n", 10), 0, NULL, NULL,
			 scratch, 0, 0);
	assert_non_null(js);
	assert_int_equal(jobship_fetch(js, paths, 10), 0);
	jt = jobship_text(js, false);
	assert_int_equal(jt->n_files, 9);

	f = file_named(jt, file);
	assert_non_null(f);
	assert_int_equal(f->status, 0);
	assert_true(f->has_content);
	assert_int_equal(f->content.len, 37);
	assert_memory_equal(f->content.data, "{\"zero", 6);
	assert_false(f->has_is_dir && f->is_dir);
	/* Users symlink their configs: followed. */
	f = file_named(jt, link);
	assert_int_equal(f->status, 0);
	assert_int_equal(f->content.len, 37);
	f = file_named(jt, dir);
	assert_int_equal(f->status, 0);
	assert_true(f->is_dir);
	assert_false(f->has_content);
	assert_int_equal(file_named(jt, missing)->status, 1);
	assert_int_equal(file_named(jt, notdir)->status, 1);
	/* A FIFO never blocks the client and is not read. */
	assert_int_equal(file_named(jt, fifo)->status, 2);
	assert_int_equal(file_named(jt, "relative.yaml")->status, 2);
	assert_int_equal(file_named(jt, "/proc/self/environ")->status, 2);
	/* root reads a mode-0 file anyway; anyone else cannot. */
	f = file_named(jt, locked);
	assert_int_equal(f->status, geteuid() == 0 ? 0 : 2);
	assert_int_equal(jobship_bytes(js), 10 + 37 + 37 + (geteuid() == 0 ? 5 : 0));
	jobship_free(js);
	scripttext_free(&st);
}

static void test_byte_budget(void **state)
{
	char small[PATH_MAX], large[PATH_MAX], after[PATH_MAX], buf[300];
	char *script, *paths[3];
	size_t slen = JOBREAD_MAX_BYTES - 250;
	struct scripttext st;
	struct jobship *js;
	Advisor__JobText *jt;

	(void)state;
	memset(buf, 'a', sizeof(buf));
	scratch_write("small.yaml", buf, 200);
	scratch_write("large.yaml", buf, 300);
	scratch_write("after.yaml", buf, 50);
	scratch_path(small, sizeof(small), "small.yaml");
	scratch_path(large, sizeof(large), "large.yaml");
	scratch_path(after, sizeof(after), "after.yaml");
	script = malloc(JOBREAD_MAX_BYTES + 100);
	assert_non_null(script);
	lines_of_x(script, JOBREAD_MAX_BYTES + 100);

	/* A script over the budget is cut to it, at a line, and says so. */
	js = jobship_new(JOBREAD_SBATCH, "big", text_of(&st, script, JOBREAD_MAX_BYTES + 100), 0,
			 NULL, NULL, "/", 0, 0);
	assert_non_null(js);
	jt = jobship_text(js, false);
	assert_int_equal(jt->script.len, JOBREAD_MAX_BYTES);
	assert_int_equal(jt->script_size, JOBREAD_MAX_BYTES + 100);
	assert_int_equal(jt->script_read, JOBREAD_MAX_BYTES);
	assert_true(jt->has_script_cut);
	assert_int_equal(jt->script_cut, JOBREAD_CUT_SHIP);
	paths[0] = small;
	assert_int_equal(jobship_fetch(js, paths, 1), 0);
	assert_int_equal(file_named(jobship_text(js, false), small)->status, 2);
	assert_int_equal(jobship_bytes(js), JOBREAD_MAX_BYTES);
	jobship_free(js);
	scripttext_free(&st);

	/* 250 bytes left: 200 fit, then 300 do not, then 50 still do. */
	lines_of_x(script, slen);
	js = jobship_new(JOBREAD_SBATCH, "s", text_of(&st, script, slen), 0, NULL, NULL, "/", 0, 0);
	assert_non_null(js);
	paths[0] = small;
	paths[1] = large;
	assert_int_equal(jobship_fetch(js, paths, 2), 0);
	paths[0] = after;
	assert_int_equal(jobship_fetch(js, paths, 1), 0);
	jt = jobship_text(js, true);
	assert_int_equal(file_named(jt, small)->status, 0);
	assert_int_equal(file_named(jt, small)->content.len, 200);
	assert_int_equal(file_named(jt, large)->status, 2);
	assert_false(file_named(jt, large)->has_content);
	assert_int_equal(file_named(jt, after)->status, 0);
	assert_int_equal(jobship_bytes(js), slen + 250);
	assert_true(jobship_bytes(js) <= JOBREAD_MAX_BYTES);
	jobship_free(js);
	scripttext_free(&st);
	free(script);
}

static void test_file_count_bound(void **state)
{
	char names[JOBREAD_MAX_FILES + 4][PATH_MAX];
	char *paths[JOBREAD_MAX_FILES + 4];
	struct jobship *js;
	size_t i;

	(void)state;
	for (i = 0; i < ADV_ARRAY_SIZE(paths); i++) {
		char n[32];

		adv_snprintf(n, sizeof(n), "f%zu.yaml", i);
		scratch_write(n, "k: v\n", 5);
		scratch_path(names[i], sizeof(names[i]), n);
		paths[i] = names[i];
	}
	js = jobship_new(JOBREAD_SCRIPT, "s", NULL, 0, NULL, NULL, "/", 0, 0);
	assert_non_null(js);
	assert_int_equal(jobship_fetch(js, paths, 3), 0);
	assert_int_equal(jobship_fetch(js, paths, ADV_ARRAY_SIZE(paths)), 0);
	assert_int_equal(jobship_text(js, false)->n_files, JOBREAD_MAX_FILES);
	assert_int_equal(jobship_bytes(js), 5 * JOBREAD_MAX_FILES);
	jobship_free(js);
}

/* ---- the check loop against a fake daemon -------------------------------- */

struct fake {
	int lfd;
	int always_need;           /* ask for a new file at every round */
	char need[PATH_MAX];       /* asked for in round 1 */
	int rounds;
	bool saw_final_last;
	bool final_early;
	size_t files_last;
	size_t content_last;
	int tool_seen;
	char script_name_seen[64];
};

static void *fake_daemon(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	for (;;) {
		Advisor__Response r = ADVISOR__RESPONSE__INIT;
		Advisor__CheckResponse cr = ADVISOR__CHECK_RESPONSE__INIT;
		Advisor__Finding fi = ADVISOR__FINDING__INIT, *fp = &fi;
		Advisor__Request *rq;
		char next[PATH_MAX], *np = next, *first = f->need;
		const Advisor__JobText *jt;
		uint8_t *buf;
		size_t len;

		if (wire_read_frame(fd, &buf, &len, 5000) != WIRE_OK)
			break;
		rq = advisor__request__unpack(NULL, len, buf);
		free(buf);
		if (!rq)
			break;
		f->rounds++;
		jt = rq->check ? rq->check->job : NULL;
		f->files_last = jt ? jt->n_files : 0;
		f->content_last = 0;
		for (size_t i = 0; jt && i < jt->n_files; i++)
			f->content_last += jt->files[i]->content.len;
		f->saw_final_last = jt && jt->has_final && jt->final;
		if (f->saw_final_last && f->rounds < JOBREAD_MAX_ROUNDS)
			f->final_early = true;
		if (jt) {
			f->tool_seen = jt->tool;
			adv_strlcpy(f->script_name_seen, jt->script_name ? jt->script_name : "",
				    sizeof(f->script_name_seen));
		}
		r.body_case = ADVISOR__RESPONSE__BODY_CHECK;
		r.check = &cr;
		if (f->always_need || (f->rounds == 1 && f->need[0])) {
			adv_snprintf(next, sizeof(next), "%s/round%d.yaml", scratch, f->rounds);
			cr.n_need_files = 1;
			cr.need_files = f->always_need ? &np : &first;
		} else {
			cr.has_verdict = 1;
			cr.verdict = 2;
			cr.decision_id = (char *)"d-fake-2";
			cr.has_llm_job = 1;
			cr.llm_job = 1;
			cr.model = (char *)"inline";
			fi.code = (char *)"TP_NOT_DIVIDE_HEADS";
			fi.has_severity = 1;
			fi.severity = 2;
			fi.message = (char *)"TP=3 does not divide the 64 attention heads";
			fi.fix = (char *)"--llm-layout=tp4";
			fi.fix_job = (char *)"--tensor-model-parallel-size 4 (job.sbatch line 6, TP=3)";
			cr.n_findings = 1;
			cr.findings = &fp;
		}
		r.has_version = 1;
		r.version = WIRE_VERSION;
		if (wire_write_message(fd, &r.base, 5000) != WIRE_OK) {
			advisor__request__free_unpacked(rq, NULL);
			break;
		}
		advisor__request__free_unpacked(rq, NULL);
	}
	close(fd);
	return NULL;
}

static int fake_listen(char *sock, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	adv_snprintf(sock, len, "%s/d.sock", scratch);
	unlink(sock);
	adv_strlcpy(sa.sun_path, sock, sizeof(sa.sun_path));
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_check_ships_files(void **state)
{
	char sock[PATH_MAX], id[64], err[256];
	struct adv_request req;
	struct adv_result *res = malloc(sizeof(*res));
	struct scripttext st;
	struct jobship *js;
	struct fake f;
	pthread_t th;

	(void)state;
	assert_non_null(res);
	memset(&f, 0, sizeof(f));
	scratch_write("cfg.yaml", "parallelism: {tp: 3}\n", 21);
	scratch_path(f.need, sizeof(f.need), "cfg.yaml");
	f.lfd = fake_listen(sock, sizeof(sock));
	assert_int_equal(pthread_create(&th, NULL, fake_daemon, &f), 0);
	engine_request_init(&req);
	req.res.gpus = 32;
	js = jobship_new(JOBREAD_SBATCH, "job.sbatch", text_of(&st, "srun python x.py\n", 17), 0,
			 NULL, NULL, scratch, 32, 8);
	assert_non_null(js);
	assert_int_equal(wire_client_check_job(sock, 5000, &req, ADV_CTX_SBATCH, 0, NULL, js, res,
					       id, sizeof(id), err, sizeof(err)), WIRE_OK);
	pthread_join(th, NULL);
	close(f.lfd);
	assert_int_equal(f.rounds, 2);
	assert_int_equal(f.files_last, 1);
	assert_int_equal(f.content_last, 21);
	assert_false(f.final_early);
	assert_int_equal(f.tool_seen, JOBREAD_SBATCH);
	assert_string_equal(f.script_name_seen, "job.sbatch");
	assert_string_equal(id, "d-fake-2");
	assert_int_equal(res->verdict, ADV_REJECT);
	assert_true(res->llm_job);
	assert_string_equal(res->model, "inline");
	assert_int_equal(res->n_findings, 1);
	assert_string_equal(res->findings[0].fix_job,
			    "--tensor-model-parallel-size 4 (job.sbatch line 6, TP=3)");
	assert_string_equal(res->findings[0].fix, "--llm-layout=tp4");
	jobship_free(js);
	scripttext_free(&st);
	free(res);
}

static void test_check_rounds_bounded(void **state)
{
	char sock[PATH_MAX], id[64], err[256];
	struct adv_request req;
	struct adv_result *res = malloc(sizeof(*res));
	struct jobship *js;
	struct fake f;
	pthread_t th;

	(void)state;
	assert_non_null(res);
	memset(&f, 0, sizeof(f));
	f.always_need = 1;
	f.lfd = fake_listen(sock, sizeof(sock));
	assert_int_equal(pthread_create(&th, NULL, fake_daemon, &f), 0);
	engine_request_init(&req);
	js = jobship_new(JOBREAD_SRUN, NULL, NULL, 0, NULL, NULL, scratch, 0, 0);
	assert_non_null(js);
	assert_int_equal(wire_client_check_job(sock, 5000, &req, ADV_CTX_SRUN, 0, NULL, js, res,
					       id, sizeof(id), err, sizeof(err)), WIRE_ERR_MALFORMED);
	assert_non_null(strstr(err, "still asked for files"));
	pthread_join(th, NULL);
	close(f.lfd);
	assert_int_equal(f.rounds, JOBREAD_MAX_ROUNDS);
	assert_true(f.saw_final_last);
	assert_false(f.final_early);
	/* The missing files went as status 1, one per round but the last. */
	assert_int_equal(f.files_last, JOBREAD_MAX_ROUNDS - 1);
	assert_string_equal(id, "");
	jobship_free(js);
	free(res);
}

static void test_check_without_daemon(void **state)
{
	char sock[PATH_MAX], id[64] = "x", err[256];
	struct adv_request req;
	struct adv_result *res = malloc(sizeof(*res));

	(void)state;
	assert_non_null(res);
	scratch_path(sock, sizeof(sock), "none.sock");
	engine_request_init(&req);
	assert_int_equal(wire_client_check_job(sock, 200, &req, ADV_CTX_SBATCH, 0, NULL, NULL, res,
					       id, sizeof(id), err, sizeof(err)), WIRE_ERR_CONNECT);
	assert_string_equal(id, "");
	assert_true(err[0] != '\0');
	free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_fields),
		cmocka_unit_test(test_secret_names),
		cmocka_unit_test(test_env_bounds),
		cmocka_unit_test(test_fetch_statuses),
		cmocka_unit_test(test_byte_budget),
		cmocka_unit_test(test_file_count_bound),
		cmocka_unit_test(test_check_ships_files),
		cmocka_unit_test(test_check_rounds_bounded),
		cmocka_unit_test(test_check_without_daemon),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
