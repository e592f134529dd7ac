/*
 * test_escape.c - the output safety rule of common/util.c (issue 20): the
 * UTF-8 well-formedness test (RFC 3629, Unicode Table 3-7), the \xNN of
 * text output for controls and invalid bytes, and the \u00NN that makes
 * json-c's output valid UTF-8.  The integration cases (test_hostile.sh 8)
 * check the same through advisorctl and --log-json; the plugin's advisor:
 * lines (plugin/annotate.c) and advisord's own log lines (daemon/msg.c),
 * both built in here, are checked below.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "msg.h"
#include "plugin.h"
#include "util.h"

static void test_utf8_seq(void **st)
{
	(void)st;
	assert_int_equal(adv_utf8_seq("a"), 1);
	assert_int_equal(adv_utf8_seq(""), 0);
	assert_int_equal(adv_utf8_seq("\xc3\xa9"), 2);            /* e acute */
	assert_int_equal(adv_utf8_seq("\xe6\xa8\xa1"), 3);        /* CJK */
	assert_int_equal(adv_utf8_seq("\xf0\x9f\x98\x80"), 4);    /* emoji */
	assert_int_equal(adv_utf8_seq("\xf4\x8f\xbf\xbf"), 4);    /* U+10FFFF */
	/* Not well-formed: lone continuation, overlongs, surrogate, > U+10FFFF, cut short. */
	assert_int_equal(adv_utf8_seq("\x80"), 0);
	assert_int_equal(adv_utf8_seq("\xc0\xaf"), 0);
	assert_int_equal(adv_utf8_seq("\xc1\xbf"), 0);
	assert_int_equal(adv_utf8_seq("\xe0\x80\xaf"), 0);
	assert_int_equal(adv_utf8_seq("\xf0\x80\x80\xaf"), 0);
	assert_int_equal(adv_utf8_seq("\xed\xa0\x80"), 0);
	assert_int_equal(adv_utf8_seq("\xf4\x90\x80\x80"), 0);
	assert_int_equal(adv_utf8_seq("\xf5\x80\x80\x80"), 0);
	assert_int_equal(adv_utf8_seq("\xff"), 0);
	assert_int_equal(adv_utf8_seq("\xe6\xa8"), 0);
	assert_int_equal(adv_utf8_seq("\xf0\x9f\x98"), 0);
}

static void test_escape_text(void **st)
{
	char buf[128];

	(void)st;
	/* Plain text and other languages are copied; nothing to escape. */
	assert_false(adv_text_needs_escape("llama3-8b \xe6\xa8\xa1\xe5\x9e\x8b"));
	/* An escape sequence, a newline, a tab, DEL, a C1 CSI, invalid bytes. */
	assert_int_equal(adv_escape_text(buf, sizeof(buf), "a\x1b[2Jb\nc\td\x7f" "e\xc2\x9b" "f\xff\xc3"),
			 strlen("a\\x1b[2Jb\\x0ac\\x09d\\x7fe\\xc2\\x9bf\\xff\\xc3"));
	assert_string_equal(buf, "a\\x1b[2Jb\\x0ac\\x09d\\x7fe\\xc2\\x9bf\\xff\\xc3");
	assert_true(adv_text_needs_escape("model\n2026-01-01 forged line"));
	assert_true(adv_text_needs_escape("\xc2\x85"));            /* NEL, C1 */
	assert_false(adv_text_needs_escape("\xc2\xa0"));           /* NBSP: printable */
	/* Bidirectional controls (RLO, LRI, RLM, ALM) reorder a terminal's
	 * line; other punctuation of the same block (an en dash) stays. */
	adv_escape_text(buf, sizeof(buf), "a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\x8f" "d\xd8\x9c");
	assert_string_equal(buf, "a\\xe2\\x80\\xaeb\\xe2\\x81\\xa6c\\xe2\\x80\\x8fd\\xd8\\x9c");
	assert_false(adv_text_needs_escape("tp8 \xe2\x80\x93 pp2"));
	/* A truncated sequence: each byte shown. */
	adv_escape_text(buf, sizeof(buf), "x\xe6\xa8");
	assert_string_equal(buf, "x\\xe6\\xa8");
	/* Cut only between whole escapes; the return is the whole length. */
	assert_int_equal(adv_escape_text(buf, 7, "ab\x1b\x1b"), 10);
	assert_string_equal(buf, "ab\\x1b");
	assert_int_equal(adv_escape_text(buf, 5, "ab\xe6\xa8\xa1"), 5);
	assert_string_equal(buf, "ab");
	assert_int_equal(adv_escape_text(NULL, 0, "\x01"), 4);
	/* adv_text_safe: s itself when clean, the escaped copy otherwise. */
	{
		const char *clean = "gpt-oss-120b";

		assert_ptr_equal(adv_text_safe(clean, buf, sizeof(buf)), clean);
		assert_ptr_equal(adv_text_safe("\x1b]0;x\x07", buf, sizeof(buf)), buf);
		assert_string_equal(buf, "\\x1b]0;x\\x07");
		assert_string_equal(ADV_TEXT("a\nb"), "a\\x0ab");
		assert_null(adv_text_safe(NULL, buf, sizeof(buf)));
	}
}

static void test_json_utf8(void **st)
{
	char buf[128], *d;

	(void)st;
	/* Valid UTF-8 and json-c's own escapes pass unchanged. */
	adv_json_utf8(buf, sizeof(buf), "{\"m\":\"\xe6\xa8\xa1 \\u001b\"}");
	assert_string_equal(buf, "{\"m\":\"\xe6\xa8\xa1 \\u001b\"}");
	/* Invalid bytes as their Latin-1 code point; DEL and C1 escaped too. */
	assert_int_equal(adv_json_utf8(buf, sizeof(buf), "\"a\xff\xc3\x7f\xc2\x9b\""),
			 strlen("\"a\\u00ff\\u00c3\\u007f\\u009b\""));
	assert_string_equal(buf, "\"a\\u00ff\\u00c3\\u007f\\u009b\"");
	/* An overlong slash cannot close the string: each byte escaped. */
	adv_json_utf8(buf, sizeof(buf), "\"\xc0\xaf\"");
	assert_string_equal(buf, "\"\\u00c0\\u00af\"");
	/* Cut between whole escapes. */
	assert_int_equal(adv_json_utf8(buf, 9, "ab\xff\xff"), 14);
	assert_string_equal(buf, "ab\\u00ff");
	d = adv_json_utf8_dup("\"\x80\"");
	assert_non_null(d);
	assert_string_equal(d, "\"\\u0080\"");
	free(d);
}

/* The lines sbatch prints: the model as sent, a daemon's message quoting it. */
static void test_plugin_lines(void **st)
{
	static struct adv_result res;
	static struct adv_request req;
	static struct plugin_lines lines;

	(void)st;
	engine_request_init(&req);
	memset(&res, 0, sizeof(res));
	res.verdict = ADV_REJECT;
	res.mode = ADV_MODE_ENFORCE;
	adv_strlcpy(res.model, "evil\x1b]0;owned\x07\nforged\xff", sizeof(res.model));
	res.n_findings = 1;
	adv_strlcpy(res.findings[0].code, "UNKNOWN_MODEL", sizeof(res.findings[0].code));
	res.findings[0].severity = ADV_SEV_REJECT;
	adv_strlcpy(res.findings[0].message, "unknown model 'evil\x1b[2J\xc2\x9b'",
		    sizeof(res.findings[0].message));
	annotate_lines(&res, &req, true, &lines);
	assert_true(lines.n >= 2);
	for (int i = 0; i < lines.n; i++)
		assert_false(adv_text_needs_escape(lines.line[i]));
	assert_non_null(strstr(lines.line[0], "(evil\\x1b]0;owned\\x07\\x0aforged\\xff on "));
	assert_non_null(strstr(lines.line[1], "unknown model 'evil\\x1b[2J\\xc2\\x9b'"));
}

/* advisord's log: a message quoting a client stays one line. */
static void test_daemon_log(void **st)
{
	int fds[2], saved = dup(STDERR_FILENO);
	char got[256];
	ssize_t n;

	(void)st;
	assert_int_equal(pipe(fds), 0);
	assert_true(dup2(fds[1], STDERR_FILENO) >= 0);
	msg_log(LOG_WARNING, "TCP client %s: %s", "127.0.0.1:9", "bad\x1b[2J\nforged\xff");
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	close(fds[0]);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, "advisord: warning: TCP client 127.0.0.1:9: bad\\x1b[2J\\x0aforged\\xff\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_seq),
		cmocka_unit_test(test_escape_text),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_plugin_lines),
		cmocka_unit_test(test_daemon_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
