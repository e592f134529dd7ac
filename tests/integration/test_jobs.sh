#!/bin/sh
# test_jobs.sh - the job corpus (tests/jobs, issue 11): real-style job
# scripts with their config files, read by `advisorctl check --script`
# with no --llm-* option, and judged against each job's `expect` file
# (format in tests/jobs/README).  Every job is checked even when an earlier
# one fails; each failure prints what was expected and what came back.
#
# JOBS=PATTERN (a shell glob, e.g. JOBS='0[1-3]-*') runs a subset;
# VERBOSE=1 prints the JSON of every job.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
JOBDIR=$top_srcdir/tests/jobs
[ -d "$JOBDIR" ] || fail "no job corpus at $JOBDIR"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/advisor-jobs.XXXXXX") || fail "mktemp"
trap cleanup EXIT
trap 'exit 1' INT TERM
# The jobs' default policy: the shipped one, enforcing (tests/jobs/README).
enforcing_policy "$SCRATCH/policy-enforce.yaml"

total=0
failed=0
failed_names=

# bad MESSAGE: one expectation of the current job failed.
bad() {
	job_ok=0
	echo "    - $*"
}

# has_sub HAYSTACK NEEDLE: NEEDLE occurs in HAYSTACK.
has_sub() {
	case "$1" in *"$2"*) return 0 ;; esac
	return 1
}

# findings_of CODE FIELD: FIELD (message, fix, fix_job) of every finding
# with that code, one per line.
findings_of() {
	jq -r --arg c "$1" --arg f "$2" \
		'.findings[]? | select(.code == $c) | (.[$f] // "null") | tostring' "$OUT"
}

# check_finding_text CODE FIELD WANT: some finding CODE has WANT in FIELD.
check_finding_text() {
	texts=$(findings_of "$1" "$2")
	if [ -z "$texts" ]; then
		bad "$2 of $1: no $1 finding"
		return
	fi
	has_sub "$texts" "$3" || bad "$2 of $1: want it to contain '$3', got: $(echo "$texts" | tr '\n' '|')"
}

# summary: what the reader and the engine said, for a failing job.
summary() {
	jq -r '
		"    got: verdict \(.verdict // "?"), llm_job \(.llm_job), model \(.model // "null"), layout \(
			if .layout then "tp\(.layout.tp).pp\(.layout.pp).cp\(.layout.cp).ep\(.layout.ep).dp\(.layout.dp) zero\(.layout.zero) sp \(.layout.sp) on \(.layout.gpus) GPUs / \(.layout.nodes) nodes" else "null" end)",
		"    workload: \(.workload // {} | tojson)",
		(.findings[]? | "    finding \(.code) [\(.severity)]: \(.message)" +
			(if .fix then "\n        fix: \(.fix)" else "" end) +
			(if .fix_job then "\n        fix_job: \(.fix_job)" else "" end)),
		"    sources: \(.sources // {} | tojson)",
		"    unknown: \(.unknown // [] | tojson)"' "$OUT" 2>/dev/null ||
		sed 's/^/    out: /' "$OUT"
	[ -s "$ERR" ] && sed 's/^/    stderr: /' "$ERR"
}

# run_job DIR: reads DIR/expect, runs advisorctl in DIR, checks.
run_job() {
	dir=$1
	name=$(basename "$dir")
	OUT=$SCRATCH/$name.json
	ERR=$SCRATCH/$name.err
	job_ok=1
	total=$((total + 1))
	echo "# $name"

	if [ -f "$dir/job.sbatch" ]; then
		script=job.sbatch
	elif [ -f "$dir/run.sh" ]; then
		script=run.sh
	else
		bad "no job.sbatch or run.sh"
	fi
	[ -f "$dir/expect" ] || bad "no expect file"
	if [ $job_ok -eq 0 ]; then
		failed=$((failed + 1)); failed_names="$failed_names $name"
		echo "not ok - $name"
		return
	fi

	# First pass: the options of the run itself.
	args=
	policy=$SCRATCH/policy-enforce.yaml
	verdict=
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in
		args:*) args=${line#args:} ;;
		policy:*)
			p=$(printf "%s\n" "${line#policy:}" | sed 's/^ *//; s/ *$//')
			case "$p" in /*) policy=$p ;; *) policy=$dir/$p ;; esac ;;
		verdict:*) verdict=$(printf "%s\n" "${line#verdict:}" | tr -d ' ') ;;
		esac
	done < "$dir/expect"

	# shellcheck disable=SC2086
	(cd "$dir" && "$ADVISORCTL" --local --catalog "$CATALOG" --policy "$policy" --json \
		check --script "$script" $args) > "$OUT" 2> "$ERR"
	rc=$?
	if ! jq -e -s 'length == 1 and (.[0] | type == "object")' "$OUT" > /dev/null 2>&1; then
		bad "advisorctl exited $rc without a JSON object"
		summary
		failed=$((failed + 1)); failed_names="$failed_names $name"
		echo "not ok - $name"
		return
	fi
	[ -n "${VERBOSE:-}" ] && jq . "$OUT"

	got_verdict=$(jq -r '.verdict // "null"' "$OUT")
	if [ -n "$verdict" ]; then
		[ "$got_verdict" = "$verdict" ] || bad "verdict: want $verdict, got $got_verdict"
		case "$verdict" in
		accept) want_rc=0 ;; warn) want_rc=1 ;; reject) want_rc=2 ;; *) want_rc=x ;;
		esac
		[ "$want_rc" = x ] && bad "expect: verdict '$verdict' is not accept, warn or reject"
		[ "$want_rc" = x ] || [ "$rc" -eq "$want_rc" ] ||
			bad "exit status: want $want_rc for $verdict, got $rc"
	else
		bad "expect: no verdict line"
	fi
	codes=" $(jq -r '[.findings[]?.code] | join(" ")' "$OUT") "

	while IFS= read -r line || [ -n "$line" ]; do
		# Trim leading blanks; skip blank lines and comments.
		line=$(printf "%s\n" "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		case "$line" in '' | '#'*) continue ;; esac
		key=${line%%:*}
		val=$(printf "%s\n" "${line#*:}" | sed 's/^ *//')
		case "$key" in
		args | policy | verdict) ;;
		codes)
			for c in $val; do
				has_sub "$codes" " $c " || bad "codes: want $c, got [$codes]"
			done ;;
		not-codes)
			for c in $val; do
				has_sub "$codes" " $c " && bad "not-codes: $c must not appear, got [$codes]"
			done ;;
		no-findings)
			[ "$codes" = "  " ] || bad "no-findings: want none, got [$codes]" ;;
		"value "*)
			path=${key#value }
			got=$(jq -r ".$path | tostring" "$OUT" 2>/dev/null) || got="(bad path .$path)"
			[ "$got" = "$val" ] || bad "value $path: want $val, got $got" ;;
		"source "*)
			field=${key#source }
			got=$(jq -r --arg f "$field" '.sources[$f]? // "null" | tostring' "$OUT")
			has_sub "$got" "$val" || bad "source $field: want '$val' in it, got '$got'" ;;
		"fix-job "*) check_finding_text "${key#fix-job }" fix_job "$val" ;;
		"fix "*) check_finding_text "${key#fix }" fix "$val" ;;
		"message "*) check_finding_text "${key#message }" message "$val" ;;
		unknown)
			got=$(jq -r '.unknown[]? | tostring' "$OUT")
			has_sub "$got" "$val" ||
				bad "unknown: want an entry with '$val', got $(jq -c '.unknown' "$OUT")" ;;
		*) bad "expect: unknown line '$line'" ;;
		esac
	done < "$dir/expect"

	if [ $job_ok -eq 1 ]; then
		echo "ok - $name ($got_verdict)"
	else
		summary
		failed=$((failed + 1)); failed_names="$failed_names $name"
		echo "not ok - $name"
	fi
}

for dir in "$JOBDIR"/${JOBS:-*}/; do
	[ -d "$dir" ] || continue
	run_job "${dir%/}"
done

[ $total -gt 0 ] || fail "no jobs matched ${JOBS:-*} in $JOBDIR"
if [ -z "${JOBS:-}" ]; then
	[ $total -ge 30 ] || { echo "FAIL: only $total jobs in the corpus, want at least 30"; exit 1; }
	n=$(find "$JOBDIR" -name slurm -type f | wc -l)
	[ "$n" -ge 6 ] || { echo "FAIL: only $n cluster jobs (a 'slurm' file), want at least 6"; exit 1; }
fi
if [ $failed -gt 0 ]; then
	echo "FAIL: $failed of $total jobs:$failed_names"
	exit 1
fi
echo "ok - all $total jobs judged as expected"
