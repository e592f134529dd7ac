/*
 * cmdsub.c - command substitutions whose output is known at submission
 * (sh_impl.h), and the working directory they use.
 *
 * Command substitution is never run (expand.c).  A few commands that job
 * scripts put in $( ) only compute a path from what is known when the job
 * is submitted, so their output is known too: pwd (the job's working
 * directory, the submit directory for sbatch unless the script cd'ed),
 * cd DIR, dirname, basename, realpath, readlink -f/-e/-m and echo,
 * joined by ";" and "&&", as in $(cd "$(dirname "$0")" && pwd).  They
 * follow GNU coreutils' dirname/basename (POSIX "dirname", "basename")
 * and bash's cd and pwd; `scontrol show hostnames | wc -l`, the job's
 * node count (host_count), and `scontrol show hostnames`, one unknown
 * name a line for each node (host_list).  realpath and readlink -f are resolved lexically
 * (. and .. against the working directory): a symbolic link is not seen,
 * and the path still names the same file.  A known output piped into
 * cut -d D -f LIST is cut as coreutils' cut does ($(echo "$ARG" | cut -f1
 * -d=) of KEY=VALUE arguments, cs_cut), and $(cat <<EOF ... EOF) is the
 * here-document's text (cat_heredoc).  Anything else (another pipe, a
 * redirection other than 2>, another program) stays unknown.
 *
 * An unknown operand keeps its placeholders ("${SLURM_JOB_ID}",
 * "$(hostname...)"): dirname and basename cut its text where the cut lies
 * after every placeholder, so basename "$0" in a batch job is known
 * ("slurm_script", the name slurmd gives its copy) while dirname "$0" is
 * not (slurmd's spool directory).
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sh_impl.h"
#include "util.h"

/* Lexical normalisation of an absolute path: // . and .. */
static const char *path_norm(struct sh *sh, const char *p)
{
	size_t n = strlen(p), o = 0;
	char *out = sh_alloc(sh, n + 2);

	out[o++] = '/';
	while (*p) {
		const char *e;
		size_t k;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		k = e ? (size_t)(e - p) : strlen(p);
		sh_step(sh);
		if (k == 1 && p[0] == '.') {
			/* nothing */
		} else if (k == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
		} else {
			if (o > 1)
				out[o++] = '/';
			memcpy(out + o, p, k);
			o += k;
		}
		p += k;
	}
	out[o] = '\0';
	return out;
}

const char *sh_path_resolve(struct sh *sh, const char *cwd, const char *dir)
{
	if (dir[0] == '/')
		return path_norm(sh, dir);
	if (!cwd)
		return NULL;
	{
		size_t a = strlen(cwd), b = strlen(dir);
		char *j = sh_alloc(sh, a + b + 2);

		memcpy(j, cwd, a);
		j[a] = '/';
		memcpy(j + a + 1, dir, b + 1);
		return path_norm(sh, j);
	}
}

/* Where the text of an unknown value may be cut at a '/': after its last
 * placeholder ("$(...)", "${...}", "`...`"). */
static size_t after_placeholders(const char *s)
{
	size_t k = 0;

	for (size_t i = 0; s[i]; i++)
		if (sh_in_set("$`)}", s[i]))
			k = i + 1;
	return k;
}

/* dirname(1): "" and names without '/' give ".", trailing slashes go. */
static const char *path_dir(struct sh *sh, const char *p, bool *unk)
{
	size_t n = strlen(p), min = *unk ? after_placeholders(p) : 0;

	while (n > 1 && p[n - 1] == '/')
		n--;
	while (n > 0 && p[n - 1] != '/')
		n--;
	if (*unk && n <= min)
		return p;                /* the cut falls in an unknown part */
	if (n == 0)
		return ".";
	while (n > 1 && p[n - 1] == '/')
		n--;
	return sh_strndup(sh, p, n);
}

/* basename(1), with an optional suffix to cut. */
static const char *path_base(struct sh *sh, const char *p, const char *suffix, bool *unk)
{
	size_t n = strlen(p), b;
	size_t min = *unk ? after_placeholders(p) : 0;

	while (n > 1 && p[n - 1] == '/')
		n--;
	b = n;
	while (b > 0 && p[b - 1] != '/')
		b--;
	if (*unk) {
		if (b == 0 || b < min)
			return p;
		*unk = false;            /* the last part is known text */
	}
	if (n == 1 && p[0] == '/')
		return "/";
	if (suffix && *suffix) {
		size_t sl = strlen(suffix);

		if (n - b > sl && !memcmp(p + n - sl, suffix, sl))
			n -= sl;
	}
	return sh_strndup(sh, p + b, n - b);
}

/* The inside of `...`: \\ \$ \` are escapes. */
static const char *untick(struct sh *sh, const char *t, size_t *n)
{
	char *o = sh_alloc(sh, *n + 1);
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		if (t[i] == '\\' && i + 1 < *n && sh_in_set("\\$`", t[i + 1]))
			i++;
		o[k++] = t[i];
	}
	o[k] = '\0';
	*n = k;
	return o;
}

struct cs_out {
	struct sh_field f;
	bool unk;
};

static void out_add(struct sh *sh, struct cs_out *o, const char *s, bool unk, bool nl)
{
	sh_fld_add(sh, &o->f, s, strlen(s));
	if (nl)
		sh_fld_addc(sh, &o->f, '\n');
	o->unk = o->unk || unk;
}

/*
 * One command of the substitution, its words expanded (w, u); cwd and
 * cwd_unk are the working directory's text and whether it is unknown.
 * Returns false for a command whose output is not known.
 */
static bool cs_command(struct sh *sh, char **w, const bool *u, int n, const char **cwd,
		       bool *cwd_unk, struct cs_out *o)
{
	const char *c = w[0];
	int a = 1;

	if (!strcmp(c, "pwd")) {
		if (n > 2 || (n == 2 && strcmp(w[1], "-P") && strcmp(w[1], "-L")))
			return false;
		out_add(sh, o, *cwd ? *cwd : "$(pwd...)", *cwd_unk || !*cwd, true);
		return true;
	}
	if (!strcmp(c, "cd")) {
		const char *d, *r;

		while (a < n && (!strcmp(w[a], "-P") || !strcmp(w[a], "-L")))
			a++;
		if (a != n - 1 || !strcmp(w[a], "-") || !w[a][0])
			return false;
		d = w[a];
		if (!u[a] && (d[0] == '/' || (*cwd && !*cwd_unk))) {
			r = sh_path_resolve(sh, *cwd, d);
			if (!r)
				return false;
			*cwd = r;
			*cwd_unk = false;
		} else if (u[a] && (d[0] == '/' || d[0] == '$' || d[0] == '`')) {
			/* A directory unknown in part ("$(SlurmdSpoolDir)/job...")
			 * keeps its text, so that pwd's output keeps its known parts;
			 * it starts with a placeholder or '/', so it is no relative
			 * path of a working directory the text would lose. */
			*cwd = d;
			*cwd_unk = true;
		} else {
			return false;
		}
		return true;
	}
	if (!strcmp(c, "dirname")) {
		bool x;
		const char *r;

		if (n != 2 || w[1][0] == '-')
			return false;
		x = u[1];
		r = path_dir(sh, w[1], &x);
		out_add(sh, o, r, x, true);
		return true;
	}
	if (!strcmp(c, "basename")) {
		bool x;
		const char *r;

		if (n < 2 || n > 3 || w[1][0] == '-' || (n == 3 && u[2]))
			return false;
		x = u[1];
		r = path_base(sh, w[1], n == 3 ? w[2] : NULL, &x);
		out_add(sh, o, r, x, true);
		return true;
	}
	if (!strcmp(c, "realpath") || !strcmp(c, "readlink")) {
		bool rl = c[1] == 'e' && c[4] == 'l', resolve = !rl;
		const char *r;

		for (; a < n && w[a][0] == '-' && w[a][1]; a++) {
			if (rl && (!strcmp(w[a], "-f") || !strcmp(w[a], "-e") || !strcmp(w[a], "-m") ||
				   !strcmp(w[a], "--canonicalize")))
				resolve = true;
			else if (strcmp(w[a], "-s") && strcmp(w[a], "-m") && strcmp(w[a], "-e") &&
				 strcmp(w[a], "-q"))
				return false;
		}
		if (!resolve || a != n - 1)
			return false;
		if (u[a] || (*cwd_unk && w[a][0] != '/')) {
			out_add(sh, o, "$(realpath...)", true, true);
			return true;
		}
		r = sh_path_resolve(sh, *cwd, w[a]);
		if (!r)
			return false;
		out_add(sh, o, r, false, true);
		return true;
	}
	if (!strcmp(c, "echo")) {
		bool nl = true;

		if (a < n && !strcmp(w[a], "-n")) {
			nl = false;
			a++;
		}
		if (a < n && w[a][0] == '-')
			return false;
		for (int k = a; k < n; k++)
			out_add(sh, o, k > a ? " " : "", false, false), out_add(sh, o, w[k], u[k], false);
		if (nl)
			out_add(sh, o, "", false, true);
		return true;
	}
	return false;
}

/*
 * "| cut -d D -f LIST" after a command whose output is known, as
 * coreutils' cut: each line split at D (default TAB), the fields of LIST
 * (N, N-, -M, N-M, or a comma list of them) joined by D; a line without D
 * is written whole (unless -s).  False for anything else, or an output
 * not known in full.
 */
static bool cs_cut(struct sh *sh, struct sh_src *s, const char *file, struct cs_out *o)
{
	char *w[8];
	bool u[8], only = false;
	int nw = 0;
	char delim = '\t';
	const char *list = NULL;
	struct cs_out r;
	const char *t;

	for (;;) {
		size_t end;

		sh_skip_ws(s, false);
		if (sh_at_end(s) || sh_in_set(";\n&|()<>", sh_cur(s)))
			break;
		end = sh_scan_word(s);
		if (end == s->i || nw == 8)
			return false;
		w[nw] = (char *)sh_expand_str(sh, s->t + s->i, end - s->i, 0, s->line, file, &u[nw]);
		if (u[nw])
			return false;
		nw++;
		sh_adv_to(s, end);
	}
	if (nw < 2 || strcmp(w[0], "cut") || o->unk)
		return false;
	for (int k = 1; k < nw; k++) {
		const char *a = w[k];

		if (!strcmp(a, "-s") || !strcmp(a, "--only-delimited")) {
			only = true;
		} else if (!strncmp(a, "-d", 2) || !strncmp(a, "-f", 2)) {
			const char *v = a[2] ? a + 2 : k + 1 < nw ? w[++k] : NULL;

			if (!v)
				return false;
			if (a[1] == 'd') {
				if (strlen(v) != 1)
					return false;
				delim = v[0];
			} else {
				list = v;
			}
		} else {
			return false;
		}
	}
	if (!list || strspn(list, "0123456789,-") != strlen(list))
		return false;
	memset(&r, 0, sizeof(r));
	t = sh_fld_str(&o->f);
	while (*t) {
		const char *e = strchr(t, '\n');
		size_t ln = e ? (size_t)(e - t) : strlen(t);
		bool first = true;

		sh_step(sh);
		if (!memchr(t, delim, ln)) {
			if (!only) {
				sh_fld_add(sh, &r.f, t, ln);
				sh_fld_addc(sh, &r.f, '\n');
			}
		} else {
			int field = 1;

			for (size_t a = 0; a <= ln; field++) {
				const char *d = memchr(t + a, delim, ln - a);
				size_t b = d ? (size_t)(d - t) : ln;
				bool take = false;

				for (const char *p = list; *p && !take;) {
					long lo = 1, hi = 1;
					char *q;

					if (*p == '-') {
						hi = strtol(p + 1, &q, 10);
					} else {
						lo = hi = strtol(p, &q, 10);
						if (*q == '-') {
							hi = isdigit((unsigned char)q[1]) ? strtol(q + 1, &q, 10)
											  : (q++, 1L << 30);
						}
					}
					take = field >= lo && field <= hi;
					p = *q == ',' ? q + 1 : q;
					if (q == p && *p)
						return false;
				}
				if (take) {
					if (!first)
						sh_fld_addc(sh, &r.f, delim);
					sh_fld_add(sh, &r.f, t + a, b - a);
					first = false;
				}
				a = b + 1;
			}
			sh_fld_addc(sh, &r.f, '\n');
		}
		t += ln + (e ? 1 : 0);
	}
	o->f = r.f;
	return true;
}

/* The node list's variable as a word: $V, ${V}, "$V" or "${V}". */
static bool is_nodelist_word(const char *w, size_t n, int *group)
{
	static const char *const names[] = { "SLURM_JOB_NODELIST", "SLURM_NODELIST" };
	static const char het[] = "SLURM_JOB_NODELIST_HET_GROUP_";

	if (n >= 2 && w[0] == '"' && w[n - 1] == '"')
		w++, n -= 2;
	if (n >= 3 && w[0] == '$' && w[1] == '{' && w[n - 1] == '}')
		w += 2, n -= 3;
	else if (n >= 1 && w[0] == '$')
		w++, n--;
	else
		return false;
	*group = -1;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strlen(names[k]) == n && !memcmp(w, names[k], n))
			return true;
	/* A component of a heterogeneous job (jobread.c, het_vars): one or
	 * two digits, as no job has a hundred components. */
	if (n > sizeof(het) - 1 && n <= sizeof(het) + 1 && !memcmp(w, het, sizeof(het) - 1)) {
		int g = 0;

		for (size_t k = sizeof(het) - 1; k < n; k++) {
			if (w[k] < '0' || w[k] > '9')
				return false;
			g = g * 10 + (w[k] - '0');
		}
		*group = g;
		return true;
	}
	return false;
}

/* 2: b is "scontrol show hostnames [LIST] | wc -l", 1: "scontrol show
 * hostnames [LIST]", 0: anything else.  *group: the heterogeneous
 * component whose list LIST is, -1 for the job's (or no LIST). */
static int host_cmd(const char *b, size_t n, int *group)
{
	static const char *const want[] = { "scontrol", "show", "hostnames", "|", "wc", "-l" };
	const char *tok[8];
	size_t len[8], nt = 0, i = 0, k = 0;

	*group = -1;
	while (i < n) {
		size_t j;

		while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n'))
			i++;
		if (i >= n)
			break;
		if (nt == 8)
			return 0;
		j = i;
		if (b[i] == '|')
			j++;
		else
			while (j < n && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '|')
				j++;
		tok[nt] = b + i;
		len[nt++] = j - i;
		i = j;
	}
	for (size_t t = 0; t < nt; t++) {
		if (k == 3 && t == 3 && len[t] != 1 && is_nodelist_word(tok[t], len[t], group))
			continue;   /* the optional node list */
		if (k >= 6)
			return 0;
		if (len[t] != strlen(want[k]) || memcmp(tok[t], want[k], len[t])) {
			/* "hostname" is scontrol's other spelling. */
			if (!(k == 2 && len[t] == 8 && !memcmp(tok[t], "hostname", 8)))
				return 0;
		}
		k++;
	}
	return k == 6 ? 2 : k == 3 ? 1 : 0;
}

/* The node count of the job (group -1) or of one of its heterogeneous
 * components when the node list is still Slurm's (not set by the
 * script) and the count is known; NULL otherwise. */
static const char *job_node_count(struct sh *sh, int group)
{
	const struct sh_var *list, *count;
	char ln[64], cn[64];

	if (group < 0) {
		adv_strlcpy(ln, "SLURM_JOB_NODELIST", sizeof(ln));
		adv_strlcpy(cn, "SLURM_JOB_NUM_NODES", sizeof(cn));
	} else {
		adv_snprintf(ln, sizeof(ln), "SLURM_JOB_NODELIST_HET_GROUP_%d", group);
		adv_snprintf(cn, sizeof(cn), "SLURM_JOB_NUM_NODES_HET_GROUP_%d", group);
	}
	list = sh_var_find(sh, ln);
	count = sh_var_find(sh, cn);
	if (!list || list->n < 1 || !list->unk[0] || !count || count->n < 1 || count->unk[0] ||
	    !count->vals[0] || !count->vals[0][0])
		return NULL;
	return count->vals[0];
}

/*
 * $(cat <<EOF ... EOF): the here-document's text, as cat copies it (a
 * command written over several lines into a variable, CMD=$(cat <<EOF)).
 * The body is "cat", the here-document and nothing else.  NULL otherwise.
 */
static const char *cat_heredoc(struct sh *sh, const char *b, size_t n, int line, const char *file,
			       bool *unk, const struct sh_lmap **map)
{
	struct sh_src s;
	struct sh_redir r;
	const char *text;
	size_t len;

	memset(&s, 0, sizeof(s));
	s.file = file;
	s.t = b;
	s.n = n;
	s.line = line;
	s.file0 = file;
	sh_skip_ws(&s, true);
	if (s.n - s.i < 4 || memcmp(s.t + s.i, "cat", 3) || (s.t[s.i + 3] != ' ' && s.t[s.i + 3] != '\t'))
		return NULL;
	sh_adv_to(&s, s.i + 3);
	sh_skip_ws(&s, false);
	if (s.n - s.i < 3 || memcmp(s.t + s.i, "<<", 2) || s.t[s.i + 2] == '<')
		return NULL;
	{
		/* A delimiter word must follow (else it is bash's syntax error,
		 * which the substitution's own run reports, not this look). */
		size_t k = s.i + 2 + (s.t[s.i + 2] == '-');

		while (k < s.n && (s.t[k] == ' ' || s.t[k] == '\t'))
			k++;
		if (k >= s.n || s.t[k] == '\n' || sh_in_set(";&|()<>", s.t[k]))
			return NULL;
	}
	sh_parse_redir(sh, &s, &r);
	if (!r.body)
		return NULL;
	/* Nothing else on the line, nor after the body. */
	sh_skip_ws(&s, false);
	if (sh_cur(&s) != '\n')
		return NULL;
	sh_adv1(&s);
	sh_skip_ws(&s, true);
	if (!sh_at_end(&s))
		return NULL;
	text = sh_heredoc_text(sh, &r, file, &len, map, unk);
	/* Trailing newlines go, as bash removes them. */
	while (len > 0 && text[len - 1] == '\n')
		len--;
	return sh_strndup(sh, text, len);
}

/*
 * `scontrol show hostnames [$SLURM_JOB_NODELIST] | wc -l`: one line per
 * node of the job (scontrol(1): without a list it reads
 * SLURM_JOB_NODELIST), so the job's node count, $SLURM_JOB_NUM_NODES,
 * when that is known (jobread.c sets it from the job's resources); for
 * the list of a heterogeneous component, that component's.  NULL when
 * the body is anything else.
 */
static const char *host_count(struct sh *sh, const char *b, size_t n)
{
	int group;

	return host_cmd(b, n, &group) == 2 ? job_node_count(sh, group) : NULL;
}

/* Nodes of a job whose host names are listed one a line: more is not a
 * job the reader judges. */
#define SH_HOST_LIST_MAX 1024

/*
 * `scontrol show hostnames [$SLURM_JOB_NODELIST]`: one host name a line,
 * one line per node of the job (scontrol(1)).  The names are not known,
 * their number is: one placeholder per node, a line each (its own, not
 * that of another scontrol command: launch.c tells the list by it), so that an
 * unquoted expansion splits into as many words as the job has nodes and
 * a quoted one stays one word, as in bash.  NULL when the count is not
 * known.
 */
static const char *host_list(struct sh *sh, const char *b, size_t n)
{
	static const char ph[] = "$(scontrol_hostnames...)";
	const char *c;
	int group;
	long nodes;
	char *out;

	if (host_cmd(b, n, &group) != 1 || !(c = job_node_count(sh, group)))
		return NULL;
	nodes = strtol(c, NULL, 10);
	if (nodes < 1 || nodes > SH_HOST_LIST_MAX)
		return NULL;
	out = sh_alloc(sh, (size_t)nodes * sizeof(ph));
	for (long i = 0; i < nodes; i++) {
		memcpy(out + (size_t)i * sizeof(ph), ph, sizeof(ph) - 1);
		out[(size_t)i * sizeof(ph) + sizeof(ph) - 1] = i + 1 < nodes ? '\n' : '\0';
	}
	return out;
}

/*
 * The output of a command substitution (t[0..n) is "$(...)" or "`...`")
 * when it is known at submission, else NULL.  *unk: the output holds
 * unknown parts (kept as placeholders); its text is then not empty.
 */
const char *sh_cmdsub_known(struct sh *sh, const char *t, size_t n, int line, const char *file,
			    bool *unk, const struct sh_lmap **map)
{
	bool tick = n > 0 && t[0] == '`';
	size_t bn = n >= 2 ? n - (tick ? 2 : 3) : 0;
	const char *body = t + (tick ? 1 : 2);
	struct sh_src s;
	struct cs_out o;
	const char *cwd = sh->cwd;
	bool cwd_unk = false;

	*unk = false;
	*map = NULL;
	if (n < (tick ? 2u : 3u) || t[n - 1] != (tick ? '`' : ')'))
		return NULL;
	if (tick)
		body = untick(sh, body, &bn);
	if (!tick) {
		const char *hd = cat_heredoc(sh, body, bn, line, file, unk, map);

		if (hd)
			return hd;
		*unk = false;
		*map = NULL;
	}
	if (bn > 0 && (body[0] == 's' || body[0] == ' ')) {
		const char *hc = host_count(sh, body, bn);

		if (hc)
			return hc;
		if ((hc = host_list(sh, body, bn))) {
			*unk = true;
			return hc;
		}
	}
	memset(&s, 0, sizeof(s));
	s.file = file;
	s.t = body;
	s.n = bn;
	s.line = line;
	memset(&o, 0, sizeof(o));
	for (;;) {
		char *w[16];
		bool u[16];
		int nw = 0;

		sh_skip_ws(&s, true);
		if (sh_at_end(&s))
			break;
		for (;;) {
			size_t end;
			char ch;

			sh_skip_ws(&s, false);
			ch = sh_cur(&s);
			if (sh_at_end(&s) || ch == ';' || ch == '\n' || ch == '&' || ch == '|')
				break;
			sh_step(sh);
			if (ch == '2' && sh_peekc(&s, 1) == '>') {
				/* 2>/dev/null, 2>&1 and such: errors only. */
				sh_adv_to(&s, s.i + 2);
				if (sh_cur(&s) == '&')
					sh_adv1(&s);
				sh_skip_ws(&s, false);
				sh_adv_to(&s, sh_scan_word(&s));
				continue;
			}
			if (sh_at_redirect(&s) || ch == '(' || ch == ')')
				return NULL;
			end = sh_scan_word(&s);
			if (end == s.i || nw == 16)
				return NULL;
			w[nw] = (char *)sh_expand_str(sh, s.t + s.i, end - s.i, 0, s.line, file, &u[nw]);
			nw++;
			sh_adv_to(&s, end);
		}
		if (nw > 0 && !cs_command(sh, w, u, nw, &cwd, &cwd_unk, &o))
			return NULL;
		if (sh_cur(&s) == '|' && sh_peekc(&s, 1) != '|') {
			/* $(echo "$ARG" | cut -d= -f1): the one filter followed. */
			sh_adv1(&s);
			if (!cs_cut(sh, &s, file, &o))
				return NULL;
		}
		if (sh_cur(&s) == '&' && sh_peekc(&s, 1) == '&')
			sh_adv_to(&s, s.i + 2);
		else if (sh_cur(&s) == ';' || sh_cur(&s) == '\n')
			sh_adv1(&s);
		else if (!sh_at_end(&s))
			return NULL;     /* |, ||, & */
	}
	/* Trailing newlines go, as bash removes them. */
	while (o.f.len > 0 && o.f.s[o.f.len - 1] == '\n')
		o.f.s[--o.f.len] = '\0';
	*unk = o.unk;
	return sh_fld_str(&o.f);
}
