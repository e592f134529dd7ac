#!/bin/sh
# test_outputs.sh - no job text crashes any output (issue 27): every script
# of the job corpus (tests/jobs) through every printer advisorctl has.
#
# Each job's script (job.sbatch, or run.sh) is checked in-process,
#   advisorctl --local --catalog etc/catalog.yaml --policy POLICY-ENFORCE
#       [--json] check --script SCRIPT [RESOURCES]
# four ways: text and --json, each with the job's own resources (its
# #SBATCH lines; none for a run.sh) and with a set given on the command
# line over them (RES_GIVEN: 8 GPUs of a catalog GPU on one node).
# POLICY-ENFORCE is the shipped etc/policy.yaml with `mode: enforce`
# (lib.sh's enforcing_policy): the shipped file only warns, and a reject
# prints the most (BEST_PLAN and its fixes).  Then
# through a private advisord: the same check once more, and the logged
# query printed back by `show` and `show --json` (issue 21's rendering of
# a decision from the log).  A probe found advisorctl --json crashing on
# two public Megatron scripts (a table of print.c read past its end); the
# expectations of test_jobs.sh did not catch it because they never ran
# the text printer nor resources other than the job's.
#
# Every run must end with a documented exit status (advisorctl(1): 0 1 2
# for a verdict, 64 65 69 70 75 77 for the errors; a signal, 128+N, is a
# crash, and so is a sanitizer's exit status under check-sanitize), the
# verdict's own for a check, the same in text and JSON.  Every --json output
# is one JSON object with check's keys (doc/interfaces.md) and a verdict
# that is the exit status's; every text output starts with that verdict
# and holds no control character but the line end (issue 20's escaping).
# A logged query shows with its verdict and every one of its findings.
#
# JOBS=PATTERN (a shell glob, e.g. JOBS='0[1-3]-*') runs a subset.
. "$(dirname "$0")/lib.sh"

PY=${PY:-$(command -v python3)}
command -v "$PY" > /dev/null || skip_all "python3 is needed (Debian package python3)"
JOBDIR=$top_srcdir/tests/jobs
[ -d "$JOBDIR" ] || fail "no job corpus at $JOBDIR"
scratch_dir
write_policy
enforcing_policy "$SCRATCH/policy-enforce.yaml"
OUT=$SCRATCH/out.d
mkdir -p "$OUT"
# The resources given over the job's own, as a user tries a job elsewhere.
RES_GIVEN="--gpu h100 --nodes 1 --gpus-per-node 8"
# What the checker reads: one line per run, "KIND NAME FILE RC".
RUNS=$SCRATCH/runs
: > "$RUNS"

failed=0
# bad MESSAGE: a run failed; its stderr follows.
bad() {
	echo "not ok - $1"
	[ -s "${2:-/dev/null}" ] && sed 's/^/    stderr: /' "$2" | head -n 20
	failed=$((failed + 1))
}

# documented RC: an exit status advisorctl(1) lists.
documented() {
	case $1 in 0 | 1 | 2 | 64 | 65 | 69 | 70 | 75 | 77) return 0 ;; esac
	return 1
}

# why RC: what an exit status means, for a failure message.
why() {
	if documented "$1"; then
		echo "exit $1"
	elif [ "$1" -gt 128 ]; then
		echo "exit $1: killed by signal $(($1 - 128)) (a crash)"
	else
		echo "exit $1: not a documented status (a sanitizer's report?)"
	fi
}

# script_of DIR: the job's script, as test_jobs.sh picks it.
script_of() {
	if [ -f "$1/job.sbatch" ]; then echo job.sbatch; elif [ -f "$1/run.sh" ]; then echo run.sh; fi
}

# check_local NAME DIR SCRIPT VARIANT [ARGS...]: one in-process check, text
# and --json; both statuses documented, a verdict's, and the same.
check_local() {
	_name=$1 _dir=$2 _script=$3 _var=$4
	shift 4
	_base=$OUT/$_name.$_var
	(cd "$_dir" && "$ADVISORCTL" --local --catalog "$CATALOG" --policy "$SCRATCH/policy-enforce.yaml" \
		check --script "$_script" "$@") > "$_base.txt" 2> "$_base.txt.err"
	_rt=$?
	(cd "$_dir" && "$ADVISORCTL" --local --catalog "$CATALOG" --policy "$SCRATCH/policy-enforce.yaml" \
		--json check --script "$_script" "$@") > "$_base.json" 2> "$_base.json.err"
	_rj=$?
	documented "$_rt" || { bad "$_name $_var text: $(why "$_rt")" "$_base.txt.err"; return; }
	documented "$_rj" || { bad "$_name $_var --json: $(why "$_rj")" "$_base.json.err"; return; }
	[ "$_rt" -le 2 ] || { bad "$_name $_var text: exit $_rt, not a verdict" "$_base.txt.err"; return; }
	[ "$_rj" -le 2 ] || { bad "$_name $_var --json: exit $_rj, not a verdict" "$_base.json.err"; return; }
	[ "$_rt" -eq "$_rj" ] || { bad "$_name $_var: text exits $_rt, --json $_rj"; return; }
	echo "text $_name.$_var $_base.txt $_rt" >> "$RUNS"
	echo "check $_name.$_var $_base.json $_rj" >> "$RUNS"
}

busy_mark
start=$(date +%s)
total=0
for dir in "$JOBDIR"/${JOBS:-*}/; do
	[ -d "$dir" ] || continue
	dir=${dir%/}
	name=$(basename "$dir")
	script=$(script_of "$dir")
	[ -n "$script" ] || { bad "$name: no job.sbatch or run.sh"; continue; }
	total=$((total + 1))
	check_local "$name" "$dir" "$script" own
	# shellcheck disable=SC2086
	check_local "$name" "$dir" "$script" given $RES_GIVEN
done
[ "$total" -gt 0 ] || fail "no jobs matched ${JOBS:-*} in $JOBDIR"
local_s=$(($(date +%s) - start))
pass "$total jobs x 4 in-process checks: documented exit statuses ($local_s s)"

# ---- through the daemon, and back out of its log ---------------------------------
start_daemon
start=$(date +%s)
: > "$SCRATCH/ids"
for dir in "$JOBDIR"/${JOBS:-*}/; do
	[ -d "$dir" ] || continue
	dir=${dir%/}
	name=$(basename "$dir")
	script=$(script_of "$dir")
	[ -n "$script" ] || continue
	base=$OUT/$name.daemon
	(cd "$dir" && ctl --json check --script "$script") > "$base.json" 2> "$base.err"
	rc=$?
	documented "$rc" || { bad "$name through advisord: $(why "$rc")" "$base.err"; continue; }
	[ "$rc" -le 2 ] || { bad "$name through advisord: exit $rc, not a verdict" "$base.err"; continue; }
	id=$(sed -n 's/^  "decision_id": "\(.*\)",$/\1/p' "$base.json")
	[ -n "$id" ] || { bad "$name through advisord: no decision_id in the answer" "$base.err"; continue; }
	echo "check $name.daemon $base.json $rc" >> "$RUNS"
	echo "$name $id" >> "$SCRATCH/ids"
done
n_ids=$(wc -l < "$SCRATCH/ids")

# The writer thread logs a query a moment after its answer: wait for all.
logged() {
	[ "$(ctl --json history --include-queries --limit 5000 | grep -c '"id":')" -ge "$n_ids" ]
}
wait_until -s 'ctl --json history --include-queries --limit 5000 | grep -c "\"id\":"' \
	30 "the $n_ids queries in the decision log" logged

while read -r name id; do
	base=$OUT/$name.show
	ctl show "$id" > "$base.txt" 2> "$base.txt.err"
	rt=$?
	ctl --json show "$id" > "$base.json" 2> "$base.json.err"
	rj=$?
	[ "$rt" -eq 0 ] || { bad "$name: show $id: $(why "$rt")" "$base.txt.err"; continue; }
	[ "$rj" -eq 0 ] || { bad "$name: show --json $id: $(why "$rj")" "$base.json.err"; continue; }
	echo "showtext $name.show $base.txt $OUT/$name.daemon.json" >> "$RUNS"
	echo "show $name.show $base.json $OUT/$name.daemon.json" >> "$RUNS"
done < "$SCRATCH/ids"
daemon_s=$(($(date +%s) - start))
pass "$n_ids jobs through advisord, each shown back from the log, text and --json ($daemon_s s)"

# ---- what the outputs say ---------------------------------------------------------
"$PY" - "$RUNS" <<'EOF' || failed=$((failed + 1))
import json
import sys

VERDICTS = ["accept", "warn", "reject"]
# doc/interfaces.md: check --json prints at least these (null where they
# do not apply); the rest are print.c's, all present in every answer.
CHECK_KEYS = ["verdict", "layout", "memory", "checkpoint", "estimate", "findings", "mode",
              "mode_partition", "decision_id", "workload", "serving", "llm_job", "model",
              "sources", "unknown"]
SHOW_KEYS = ["id", "verdict", "codes", "workload", "recorded", "findings", "findings_left_out",
             "sources", "sources_left_out", "parent", "children"]
bad = 0


def fail(what, why):
    global bad
    bad += 1
    print("not ok - %s: %s" % (what, why))


def load(what, path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        fail(what, "not JSON (%s): %r" % (e, raw[:200]))
        return None
    if not isinstance(doc, dict):
        fail(what, "not one JSON object: %r" % raw[:200])
        return None
    return doc


def text_ok(what, path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(what, "not UTF-8 (%s)" % e)
        return None
    for i, c in enumerate(text):
        if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0:
            fail(what, "a control character %r at %d: %r" % (c, i, text[max(0, i - 40):i + 40]))
            return None
    return text


def check_json(what, doc, rc):
    missing = [k for k in CHECK_KEYS if k not in doc]
    if missing:
        fail(what, "keys missing: %s" % " ".join(missing))
    if doc.get("verdict") != VERDICTS[rc]:
        fail(what, "verdict %r, exit status %d" % (doc.get("verdict"), rc))
    findings = doc.get("findings")
    if not isinstance(findings, list):
        fail(what, "findings is %r" % findings)
        return
    for f in findings:
        if not isinstance(f, dict) or not f.get("code") or not f.get("message") or \
                f.get("severity") not in ("info", "warn", "reject"):
            fail(what, "a finding without code, message or severity: %r" % f)


n = 0
for line in open(sys.argv[1]):
    kind, what, path, extra = line.split()
    n += 1
    if kind == "text":
        text = text_ok(what, path)
        want = "verdict: %s" % VERDICTS[int(extra)]
        if text is not None and not text.startswith(want):
            fail(what, "text does not start with %r: %r" % (want, text[:80]))
    elif kind == "check":
        doc = load(what, path)
        if doc is not None:
            check_json(what, doc, int(extra))
    elif kind == "showtext":
        text = text_ok(what, path)
        check = load(what, extra)
        if text is None or check is None:
            continue
        want = "verdict: %s" % check.get("verdict")
        if not text.startswith("decision %s " % check.get("decision_id")) or want not in text:
            fail(what, "show does not say decision %s and %r: %r" %
                 (check.get("decision_id"), want, text[:200]))
        for f in check.get("findings", []):
            if f["code"] not in text:
                fail(what, "finding %s of the check not shown" % f["code"])
    elif kind == "show":
        doc = load(what, path)
        check = load(what, extra)
        if doc is None or check is None:
            continue
        missing = [k for k in SHOW_KEYS if k not in doc]
        if missing:
            fail(what, "keys missing: %s" % " ".join(missing))
            continue
        if doc["id"] != check.get("decision_id") or doc["verdict"] != check.get("verdict"):
            fail(what, "decision %r verdict %r, the check answered %r %r" %
                 (doc["id"], doc["verdict"], check.get("decision_id"), check.get("verdict")))
        if doc["recorded"] is not True or not isinstance(doc["findings"], list):
            fail(what, "what the user saw was not recorded: %r" % doc.get("recorded"))
            continue
        # Every finding is logged, or counted as left out (the log's bound).
        seen = [f.get("code") for f in doc["findings"]]
        want = [f["code"] for f in check.get("findings", [])]
        if len(seen) + doc["findings_left_out"] != len(want) or seen != want[:len(seen)]:
            fail(what, "findings %s (+%d left out), the check had %s" %
                 (seen, doc["findings_left_out"], want))
        srcs = doc["sources"] or []
        if len(srcs) + doc["sources_left_out"] != len(check.get("sources") or {}):
            fail(what, "%d sources (+%d left out), the check had %d" %
                 (len(srcs), doc["sources_left_out"], len(check.get("sources") or {})))
    else:
        fail(what, "unknown kind %s" % kind)
print("%s - %d outputs read: %s" % ("ok" if not bad else "not ok", n,
                                    "as documented" if not bad else "%d wrong" % bad))
sys.exit(1 if bad else 0)
EOF

echo "# in-process checks $local_s s, through advisord and show $daemon_s s (others used $(busy_others)% of the CPUs)"
if [ $failed -gt 0 ]; then
	echo "FAIL: $failed failures"
	exit 1
fi
echo "ok - every output of all $total jobs as documented"
