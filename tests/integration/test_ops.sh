#!/bin/sh
# Operations (issue 8): Prometheus exposition of advisorctl stats, the
# node_exporter textfile recipe, decisions as JSON lines (--log-json on
# stderr, --syslog-json through a private /dev/log), the rollout report
# and history filters, and the decision log migration of an older schema.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
command -v sqlite3 > /dev/null || skip_all "the sqlite3 CLI is needed (Debian package sqlite3)"
scratch_dir
write_policy 2048

# metric NAME{LABELS} FILE: the value of one sample ("" when absent).
metric() {
	awk -v k="$1" 'substr($0, 1, 1) != "#" && $1 == k { print $2 }' "$2"
}

# expect_metric SAMPLE WANT FILE
expect_metric() {
	got=$(metric "$1" "$3")
	[ "$got" = "$2" ] || fail "$1 is '${got}', want $2"
}

# valid_exposition FILE: the text format's rules that a scraper enforces.
valid_exposition() {
	awk '
	/^# HELP / { if (help[$3]++) { print "second HELP for " $3; bad = 1 }; next }
	/^# TYPE / {
		if (type[$3]) { print "second TYPE for " $3; bad = 1 }
		if ($4 !~ /^(counter|gauge|histogram|summary|untyped)$/) { print "bad type " $4; bad = 1 }
		type[$3] = $4; next
	}
	/^#/ { next }
	{
		if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eE]+(Inf)?$/) {
			print "malformed sample: " $0; bad = 1; next
		}
		name = $1; sub(/\{.*/, "", name)
		fam = name
		if (!(fam in type)) sub(/_(bucket|sum|count)$/, "", fam)
		if (!(fam in type)) { print "sample before its TYPE: " $0; bad = 1 }
		if (type[fam] == "counter" && $2 < 0) { print "negative counter: " $0; bad = 1 }
		if (seen[$1]++) { print "duplicate series: " $1; bad = 1 }
	}
	END { exit bad }' "$1"
}

# buckets_sane FILE KIND: le ascending, counts not decreasing, +Inf = _count.
buckets_sane() {
	awk -v kind="$2" '
	index($1, "advisor_request_duration_seconds_bucket{kind=\"" kind "\"") == 1 {
		le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
		if (le != "+Inf" && n && le + 0 <= prev_le) { print "le not ascending at " le; bad = 1 }
		if (n && $2 + 0 < prev) { print "bucket count decreases at le=" le; bad = 1 }
		prev = $2 + 0; prev_le = le + 0; n++
		if (le == "+Inf") inf = $2
	}
	$1 == "advisor_request_duration_seconds_count{kind=\"" kind "\"}" { count = $2 }
	END {
		if (n < 2) { print "no buckets for " kind; bad = 1 }
		if (inf != count) { print "+Inf bucket " inf " != _count " count; bad = 1 }
		exit bad
	}' "$1"
}

# decide K=V...: a check as the plugin sends it at sbatch: a decision.  An
# advisorctl check is a what-if query, kept out of the decisions (issue 14).
decide() {
	"$WIRECLIENT" "$SOCK" decide sbatch "$@"
}

# --- decisions with known verdicts --------------------------------------------------
start_daemon --log-json
t0=$(date +%s)
expect_status 2 "enforce: reject" decide partition=h100 gpus=32 model=llama3-70b layout=tp3
expect_status 2 "enforce: reject" decide partition=h100 gpus=32 model=llama3-70b layout=tp3
expect_status 0 "enforce: accept" decide partition=h100 gpus=8 model=llama3-8b layout=tp2 zero=1
expect_status 1 "warn mode: what enforce rejects is a warning" \
	decide partition=debug gpus=8 model=llama3-70b layout=tp3
grep -q "TP_NOT_DIVIDE_HEADS" "$SCRATCH/out" || fail "warn-mode answer lacks TP_NOT_DIVIDE_HEADS"
as_nobody "$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=8 model=llama3-8b layout=tp2 \
	zero=1 > /dev/null || fail "check as nobody"
# What-if queries: answered, in no figure below.
expect_status 2 "a what-if query" ctl check --partition h100 --gpus 32 --model llama3-70b --layout tp3
expect_status 0 "a what-if query as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" check \
	--partition h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1
pass "5 checks: 2 rejected and 1 accepted in enforce partition h100, 1 unenforced in warn partition debug, 1 without partition"

# --- stats --prometheus -------------------------------------------------------------
expect_status 0 "stats --prometheus" ctl stats --prometheus
cp "$SCRATCH/out" "$SCRATCH/prom"
valid_exposition "$SCRATCH/prom" > "$SCRATCH/why" || fail "invalid exposition: $(cat "$SCRATCH/why")"
buckets_sane "$SCRATCH/prom" check > "$SCRATCH/why" || fail "check histogram: $(cat "$SCRATCH/why")"
buckets_sane "$SCRATCH/prom" other > "$SCRATCH/why" || fail "other histogram: $(cat "$SCRATCH/why")"
if command -v promtool > /dev/null; then
	promtool check metrics < "$SCRATCH/prom" > "$SCRATCH/why" 2>&1 ||
		fail "promtool: $(cat "$SCRATCH/why")"
fi
expect_metric 'advisor_up' 1 "$SCRATCH/prom"
# Issue 30: the metric set advisord(8) lists is the one printed, family by family.
doc=$(sed -n '/^The metric set, one family each:/,/says what each counts/p' "$top_srcdir/man/advisord.8.in" |
	grep -o 'advisor_[a-z_]*' | sort -u | tr '\n' ' ')
got=$(awk '$1 == "#" && $2 == "TYPE" { print $3 }' "$SCRATCH/prom" | sort -u | tr '\n' ' ')
[ -n "$doc" ] && [ "$doc" = "$got" ] || fail "advisord(8) lists the metrics '$doc', stats prints '$got'"
expect_metric 'advisor_requests_total{kind="check"}' 7 "$SCRATCH/prom"
expect_metric 'advisor_decisions_total{partition="h100",verdict="reject"}' 2 "$SCRATCH/prom"
expect_metric 'advisor_decisions_total{partition="h100",verdict="accept"}' 1 "$SCRATCH/prom"
expect_metric 'advisor_decisions_total{partition="debug",verdict="warn"}' 1 "$SCRATCH/prom"
expect_metric 'advisor_decisions_total{partition="",verdict="accept"}' 1 "$SCRATCH/prom"
expect_metric 'advisor_unenforced_rejects_total{partition="debug"}' 1 "$SCRATCH/prom"
expect_metric 'advisor_unenforced_rejects_total{partition="h100"}' 0 "$SCRATCH/prom"
expect_metric 'advisor_findings_total{code="TP_NOT_DIVIDE_HEADS",severity="reject"}' 2 "$SCRATCH/prom"
expect_metric 'advisor_findings_total{code="TP_NOT_DIVIDE_HEADS",severity="warn"}' 1 "$SCRATCH/prom"
expect_metric 'advisor_request_duration_seconds_count{kind="check"}' 7 "$SCRATCH/prom"
expect_metric 'advisor_reloads_total' 0 "$SCRATCH/prom"
expect_metric 'advisor_last_reload_success' 1 "$SCRATCH/prom"
expect_metric 'advisor_decision_log_dropped_total' 0 "$SCRATCH/prom"
expect_metric 'advisor_request_errors_total' 0 "$SCRATCH/prom"
[ -n "$(metric advisor_decision_log_queue "$SCRATCH/prom")" ] || fail "no advisor_decision_log_queue"
start=$(metric advisor_start_time_seconds "$SCRATCH/prom")
[ "$start" -le "$t0" ] && [ "$start" -ge $((t0 - 60)) ] || fail "start time $start, test began at $t0"
up=$(metric advisor_uptime_seconds "$SCRATCH/prom")
[ "$up" -ge 0 ] && [ "$up" -le $(( $(date +%s) - start + 1 )) ] || fail "uptime $up"
sum=$(metric 'advisor_request_duration_seconds_sum{kind="check"}' "$SCRATCH/prom")
awk -v s="$sum" 'BEGIN { exit !(s > 0 && s < 5) }' || fail "check latency sum $sum s"
grep -q '^advisor_build_info{version="[0-9]' "$SCRATCH/prom" || fail "no advisor_build_info"
pass "stats --prometheus: valid exposition, counters by partition, verdict, code and severity, histogram, uptime"

# The same figures as JSON for scripts.
ctl --json stats > "$SCRATCH/stats.json" || fail "stats --json"
jq -e '(.decisions[] | select(.partition == "h100" and .verdict == "reject") | .count) == 2
	and (.unenforced[] | select(.partition == "debug") | .count) == 1
	and (.latency[] | select(.kind == "check") | .count) == 7' "$SCRATCH/stats.json" > /dev/null ||
	fail "stats --json lacks the labelled counters: $(cat "$SCRATCH/stats.json")"
pass "stats --json carries the same labelled counters"

# Reloads: one good (SIGHUP), one broken (advisorctl reload).
kill -HUP "$DAEMON_PID"
hup_counted() { ctl stats --prometheus | grep -qx 'advisor_reloads_total 1'; }
wait_until -s 'ctl stats --prometheus | grep reload' 5 "the SIGHUP reload to be counted" hup_counted
cp "$POLICY" "$SCRATCH/policy.good"
printf 'mode: enforce\npartitions: [\n' > "$POLICY"
expect_status 65 "reload of a broken policy" ctl reload
ctl stats --prometheus > "$SCRATCH/prom2"
expect_metric 'advisor_reloads_total' 2 "$SCRATCH/prom2"
expect_metric 'advisor_last_reload_success' 0 "$SCRATCH/prom2"
cp "$SCRATCH/policy.good" "$POLICY"
expect_status 0 "reload of the good policy" ctl reload
ctl stats --prometheus > "$SCRATCH/prom3"
expect_metric 'advisor_last_reload_success' 1 "$SCRATCH/prom3"
loaded=$(metric advisor_config_loaded_timestamp_seconds "$SCRATCH/prom3")
[ "$loaded" -ge "$start" ] || fail "config loaded at $loaded, before the start $start"
pass "reload count and last reload status (1, 0 after a broken file, 1 again)"

# node_exporter textfile collector recipe of README.md, verbatim but for the paths.
TEXTFILE_DIR=$SCRATCH/node-exporter
mkdir -p "$TEXTFILE_DIR"
ctl stats --prometheus > "$TEXTFILE_DIR/advisor.prom.$$"; mv "$TEXTFILE_DIR/advisor.prom.$$" "$TEXTFILE_DIR/advisor.prom"
expect_metric advisor_up 1 "$TEXTFILE_DIR/advisor.prom"
[ "$(find "$TEXTFILE_DIR" -name '*.prom.*' | wc -l)" -eq 0 ] || fail "temporary file left behind"
pass "textfile collector recipe writes advisor.prom atomically"

# --- decisions as JSON lines ------------------------------------------------------------
grep '^{' "$SCRATCH/advisord.log" > "$SCRATCH/json.log"
[ "$(wc -l < "$SCRATCH/json.log")" -eq 5 ] || fail "want 5 JSON decision lines, got $(wc -l < "$SCRATCH/json.log")"
grep -q '^advisord: decision ' "$SCRATCH/advisord.log" && fail "--log-json still writes the plain decision line"
jq -e -s 'all(.[]; has("id") and has("time") and has("user") and has("uid") and has("job_id")
	and has("context") and has("partition") and has("gpu") and has("gpus") and has("model")
	and has("layout") and has("verdict") and has("codes") and has("mem_gib")
	and has("ckpt_interval_s") and has("parent") and has("script"))' "$SCRATCH/json.log" > /dev/null ||
	fail "JSON line lacks a field"
jq -e -s '[.[] | select(.partition == "debug")][0]
	| .verdict == "warn" and .mode == "warn" and (.unenforced | index("TP_NOT_DIVIDE_HEADS")) != null
	  and .model == "llama3-70b" and .gpus == 8 and .context == "sbatch"' "$SCRATCH/json.log" > /dev/null ||
	fail "warn-mode JSON line wrong: $(grep debug "$SCRATCH/json.log")"
jq -e -s '[.[] | select(.user == "nobody")] | length == 1' "$SCRATCH/json.log" > /dev/null ||
	fail "no JSON line for nobody's check"
first_id=$(head -n 1 "$SCRATCH/json.log" | jq -r .id)
[ "$(sqlite3 "$DB" "SELECT count(*) FROM decisions WHERE id = '$first_id'")" = 1 ] ||
	fail "JSON id $first_id is not in the decision log"
pass "--log-json: one JSON line per decision with the history --json fields, ids as in the log"

# Issue 30: advisord(8) says the lines have history --json's fields; every
# field of a line is in history --json with the same value (history adds
# repeat and query, which only the log has), the rollout fields included.
expect_status 0 "history --json" ctl --json history --since 1h
cp "$SCRATCH/out" "$SCRATCH/hist.json"
jq -e -n --slurpfile lines "$SCRATCH/json.log" --slurpfile h "$SCRATCH/hist.json" '
	[$lines[] as $l | ($h[0].decisions[] | select(.id == $l.id)) as $d
	 | ($l | keys) - ($d | keys) == [] and ($l | to_entries | all(.value == $d[.key]))]
	| length >= 4 and all' > /dev/null ||
	fail "a --log-json line and history --json disagree: $(head -n 1 "$SCRATCH/json.log"); $(cat "$SCRATCH/hist.json")"
jq -e '[.decisions[] | select(.partition == "debug")][0]
	| .mode == "warn" and (.unenforced | index("TP_NOT_DIVIDE_HEADS")) != null' "$SCRATCH/hist.json" > /dev/null ||
	fail "history --json lacks the warn decision's mode and unenforced: $(cat "$SCRATCH/hist.json")"
# The decision id's shape, as advisord(8) gives it: d-TIME-PID-N, time and
# pid in hex, a decimal counter.
pid_hex=$(printf '%x' "$DAEMON_PID")
jq -r '.decisions[].id' "$SCRATCH/hist.json" > "$SCRATCH/ids"
while read -r id; do
	case $id in d-*-"$pid_hex"-*) ;; *) fail "decision id $id does not carry the daemon's pid $pid_hex";; esac
	echo "$id" | grep -Eq '^d-[0-9a-f]{8}-[0-9a-f]+-[0-9]+$' || fail "decision id $id is not d-TIME-PID-N"
	t=$(printf '%d' "0x$(echo "$id" | cut -d- -f2)")
	[ "$t" -ge "$t0" ] && [ "$t" -le "$(date +%s)" ] || fail "decision id $id: time $t is not the decision's"
done < "$SCRATCH/ids"
pass "history --json has every field of the JSON lines with the same values (mode, unenforced too); ids are d-TIME-PID-N"

# --- report and history over the decision log ---------------------------------------------
expect_status 0 "history --verdict reject --since 7d" ctl --json history --verdict reject --since 7d
jq -e '(.decisions | length) == 2 and all(.decisions[]; .verdict == "reject" and .partition == "h100")' \
	"$SCRATCH/out" > /dev/null || fail "history --verdict reject --since 7d: $(cat "$SCRATCH/out")"
expect_status 0 "history --since tomorrow" ctl --json history --since "$(date -d tomorrow +%Y-%m-%d)"
jq -e '.decisions | length == 0' "$SCRATCH/out" > /dev/null || fail "--since a future date found decisions"
pass "history --verdict reject --since 7d lists the 2 rejects; a future --since none"

expect_status 0 "report --json" ctl --json report --since 7d
cp "$SCRATCH/out" "$SCRATCH/report.json"
jq -e '.decisions == 5 and .users == 2 and .rejected == 2 and .unenforced == 1 and .unenforced_users == 1
	and ([.verdicts[] | select(.verdict == "reject") | .count][0] == 2)
	and ([.modes[] | select(.mode == "warn") | .count][0] == 1)
	and ([.modes[] | select(.mode == "enforce") | .count][0] == 4)' "$SCRATCH/report.json" > /dev/null ||
	fail "report totals: $(cat "$SCRATCH/report.json")"
jq -e '[.codes[] | select(.code == "TP_NOT_DIVIDE_HEADS")] | length == 1 and .[0].severity == "reject"
	and .[0].decisions == 3 and .[0].users == 1 and .[0].unenforced == 1 and .[0].rejected == 2' \
	"$SCRATCH/report.json" > /dev/null || fail "report TP_NOT_DIVIDE_HEADS row: $(cat "$SCRATCH/report.json")"
jq -e '[.partitions[] | select(.partition == "debug")][0] | .decisions == 1 and .warn == 1 and .unenforced == 1' \
	"$SCRATCH/report.json" > /dev/null || fail "report debug partition row"
jq -e '[.partitions[] | select(.partition == null)][0] | .decisions == 1 and .users == 1 and .accept == 1' \
	"$SCRATCH/report.json" > /dev/null || fail "report row of checks without a partition"
expect_status 0 "report (table)" ctl report
grep -q "enforcement would have rejected 1 more job by 1 user" "$SCRATCH/out" ||
	fail "report summary line: $(cat "$SCRATCH/out")"
grep -Eq '^TP_NOT_DIVIDE_HEADS +reject +3 +1 +1 +2$' "$SCRATCH/out" || fail "report table row: $(cat "$SCRATCH/out")"
pass "report: per code and severity, per partition, by verdict and mode, distinct users, what enforce would reject"

expect_status 0 "report as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" --json report
jq -e '.decisions == 1 and .users == 1' "$SCRATCH/out" > /dev/null || fail "nobody sees others in report: $(cat "$SCRATCH/out")"
expect_status 77 "report on another user as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" report --user root
expect_status 64 "report --since garbage" ctl report --since yesterdayish
expect_status 0 "report since tomorrow" ctl --json report --since "$(date -d tomorrow +%Y-%m-%d)"
jq -e '.decisions == 0 and (.codes | length) == 0' "$SCRATCH/out" > /dev/null || fail "empty period not empty"
pass "report: users see their own, others' need admin (77), bad --since is 64, an empty period is empty"

stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS"

# --- the daemon down: advisor_up 0 for the textfile collector -----------------------------
expect_status 69 "stats --prometheus without a daemon" ctl stats --prometheus
expect_metric advisor_up 0 "$SCRATCH/out"
valid_exposition "$SCRATCH/out" > "$SCRATCH/why" || fail "invalid exposition when down: $(cat "$SCRATCH/why")"
pass "daemon down: stats --prometheus prints advisor_up 0 and exits 69"

# --- a decision log written before modes were recorded ---------------------------------
OLD=$SCRATCH/old.db
now=$(date +%s)
sqlite3 "$OLD" "CREATE TABLE decisions (id TEXT PRIMARY KEY, time INTEGER NOT NULL,
	uid INTEGER NOT NULL, user TEXT, job_id INTEGER, context TEXT, parent TEXT, gpu TEXT,
	gpus INTEGER, nodes INTEGER, partition TEXT, model TEXT, layout TEXT, workload TEXT,
	verdict INTEGER NOT NULL, verdict_name TEXT, codes TEXT, mem_gib REAL, ckpt_interval_s REAL);
	INSERT INTO decisions (id, time, uid, user, partition, verdict, verdict_name, codes)
	VALUES ('d-old-1', $now, 0, 'root', 'h100', 2, 'reject', 'TP_NOT_DIVIDE_HEADS MEM_OVER_CAPACITY');"
DB=$OLD
start_daemon
[ "$(sqlite3 "$OLD" "SELECT count(*) FROM pragma_table_info('decisions') WHERE name IN ('mode','severities','unenforced')")" = 3 ] ||
	fail "the old log did not gain the new columns"
expect_status 1 "a warn-mode check on the old log" decide partition=debug gpus=8 model=llama3-70b layout=tp3
ctl --json report > "$SCRATCH/old.json" || fail "report on the migrated log"
jq -e '.decisions == 2 and .unenforced == 1
	and ([.modes[] | select(has("mode") | not) | .count][0] == 1)
	and ([.codes[] | select(.code == "TP_NOT_DIVIDE_HEADS" and .severity == null) | .decisions][0] == 1)
	and ([.codes[] | select(.code == "TP_NOT_DIVIDE_HEADS" and .severity == "reject") | .unenforced][0] == 1)' \
	"$SCRATCH/old.json" > /dev/null || fail "report on the migrated log: $(cat "$SCRATCH/old.json")"
ctl --json history --limit 5 | jq -e '.decisions | length == 2' > /dev/null || fail "history on the migrated log"
stop_daemon TERM
pass "an older decision log gains mode, severities, unenforced on open; its rows report as mode unknown"

# --- --syslog-json through syslog(3) to a private /dev/log --------------------------------
PY=$(command -v python3 || true)
if [ -z "$PY" ] || ! unshare --mount true 2> /dev/null; then
	echo "# skip --syslog-json: needs python3 and unshare --mount (a private /dev/log)"
	exit 0
fi
mkdir "$SCRATCH/dev"
for d in null zero urandom random; do cp -a "/dev/$d" "$SCRATCH/dev/"; done
dgram_listen "$SCRATCH/dev/log" "$SCRATCH/syslog.txt" "test syslog socket"
DB=$SCRATCH/lib/decisions.db
spawn unshare --mount sh -c 'mount --bind "$1" /dev && shift && exec "$@"' sh "$SCRATCH/dev" \
	"$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" --socket "$SOCK" \
	--db "$DB" --syslog-json > "$SCRATCH/syslog-daemon.log" 2>&1
DAEMON_PID=$!
wait_until -p "$DAEMON_PID" -s 'tail -n 5 "$SCRATCH/syslog-daemon.log"' 10 "advisord with --syslog-json to answer" ctl_answers
decide partition=h100 gpus=32 model=llama3-70b layout=tp3 > /dev/null
decide partition=h100 gpus=8 model=llama3-8b layout=tp2 zero=1 > /dev/null
stop_daemon TERM
# "<30>Nov 21 12:00:00 advisord[123]: {...}": LOG_DAEMON|LOG_INFO = 30.
SYSLOG_JSON='^<30>.* advisord\[[0-9]*\]: {'
# Both were sent before the daemon exited; the listener may not have written them yet.
two_lines() { [ "$(count "$SYSLOG_JSON" "$SCRATCH/syslog.txt")" -ge 2 ]; }
wait_until -s 'cat "$SCRATCH/syslog.txt"' 5 "the listener to write 2 JSON decisions" two_lines
stop_pid "$LISTENER" TERM 5 "the syslog listener"
[ "$(count "$SYSLOG_JSON" "$SCRATCH/syslog.txt")" -eq 2 ] || fail "want 2 JSON decisions on syslog: $(cat "$SCRATCH/syslog.txt")"
sed -n 's/^<30>.* advisord\[[0-9]*\]: //p' "$SCRATCH/syslog.txt" |
	jq -e -s 'length == 2 and .[0].verdict == "reject" and .[1].verdict == "accept"
		and .[0].mode == "enforce" and (.[0].codes | index("TP_NOT_DIVIDE_HEADS")) != null' > /dev/null ||
	fail "syslog JSON lines: $(cat "$SCRATCH/syslog.txt")"
grep -q '^advisord: decision ' "$SCRATCH/syslog-daemon.log" || fail "--syslog-json alone dropped the stderr decision line"
pass "--syslog-json: one JSON line per decision through syslog(3), facility daemon, priority info"
