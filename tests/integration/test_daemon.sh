#!/bin/sh
# advisord end to end: a private daemon on its own socket, driven through
# advisorctl and wireclient (issue 4).  Timeouts are shortened so the
# timeout cases finish quickly: frames must complete within 1 s and idle
# connections close after 1.5 s.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
scratch_dir
write_policy 2048

# --- configuration check ------------------------------------------------------
expect_status 0 "--check-config on good files" \
	"$ADVISORD" --check-config --catalog "$CATALOG" --policy "$POLICY" --db "$DB"
printf 'mode: enforce\npartitions: [\n' > "$SCRATCH/broken.yaml"
expect_status 65 "--check-config on a broken policy" \
	"$ADVISORD" --check-config --catalog "$CATALOG" --policy "$SCRATCH/broken.yaml"
grep -q "broken.yaml:[0-9]*:[0-9]*" "$SCRATCH/err" || fail "no file:line:col in: $(cat "$SCRATCH/err")"
pass "--check-config: 0 on good files, 65 with file:line:col on a broken one"

# --- the decision log's directory (issue 30) ----------------------------------
# Missing parents: --check-config says the directory can be made and makes
# nothing; advisord makes each missing component 0750 whatever the umask.
deep=$SCRATCH/state/a/b
expect_status 0 "--check-config with a log directory to be made" \
	"$ADVISORD" --check-config --catalog "$CATALOG" --policy "$POLICY" --db "$deep/decisions.db"
[ ! -e "$SCRATCH/state" ] || fail "--check-config created $SCRATCH/state"
: > "$SCRATCH/plain"
expect_status 65 "--check-config with a file in the log's path" \
	"$ADVISORD" --check-config --catalog "$CATALOG" --policy "$POLICY" --db "$SCRATCH/plain/x/decisions.db"
grep -q "cannot create the decision log directory: $SCRATCH/plain is not a directory" "$SCRATCH/err" ||
	fail "--check-config does not say why: $(cat "$SCRATCH/out" "$SCRATCH/err")"
grep -q "configuration OK" "$SCRATCH/out" && fail "--check-config printed OK beside the error"
expect_status 1 "advisord with a file in the log's path" \
	"$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" --socket "$SCRATCH/plain.sock" \
	--db "$SCRATCH/plain/x/decisions.db"
grep -q "$SCRATCH/plain is not a directory" "$SCRATCH/err" || fail "advisord does not say why: $(cat "$SCRATCH/err")"
if [ "$(id -u)" -ne 0 ]; then
	mkdir -m 0555 "$SCRATCH/ro"
	expect_status 65 "--check-config with a log directory it cannot make" \
		"$ADVISORD" --check-config --catalog "$CATALOG" --policy "$POLICY" --db "$SCRATCH/ro/a/decisions.db"
	grep -q "cannot create the decision log directory $SCRATCH/ro/a: Permission denied" "$SCRATCH/err" ||
		fail "--check-config does not say why: $(cat "$SCRATCH/err")"
	chmod 0755 "$SCRATCH/ro"
fi
(umask 077; exec "$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" \
	--socket "$SCRATCH/deep.sock" --db "$deep/decisions.db" > "$SCRATCH/deep.log" 2>&1) &
deep_pid=$!
track_pid "$deep_pid"
wait_until -p "$deep_pid" 10 "advisord with a deep --db to serve" more_than 0 ' serving ' "$SCRATCH/deep.log"
stop_pid "$deep_pid" TERM 30 advisord
for d in "$SCRATCH/state" "$SCRATCH/state/a" "$deep"; do
	[ "$(stat -c %a "$d")" = 750 ] || fail "$d created $(stat -c %a "$d"), want 750"
done
[ -f "$deep/decisions.db" ] || fail "no log in $deep"
pass "--db in missing directories: --check-config makes nothing, advisord makes each 0750 under umask 077; a file in the path fails both, naming it"

# --- unreachable daemon --------------------------------------------------------
expect_status 69 "advisorctl without a daemon" ctl status
grep -q "$SOCK" "$SCRATCH/err" || fail "message does not name the socket"
grep -q "advisord" "$SCRATCH/err" || fail "message does not say how to start advisord"
pass "no daemon: exit 69, names $SOCK and how to start it"

start_daemon --read-timeout 1000 --idle-timeout 1500
[ "$(stat -c %a "$SOCK")" = 666 ] || fail "socket mode is $(stat -c %a "$SOCK"), want 666"
[ "$(stat -c %a "$(dirname "$SOCK")")" = 755 ] || fail "socket directory is not 0755"
pass "daemon up; socket 0666 in a 0755 directory"

# --- a live daemon's socket is not stolen ---------------------------------------
expect_status 1 "second daemon on the same socket" \
	"$ADVISORD" --foreground --catalog "$CATALOG" --policy "$POLICY" --socket "$SOCK" \
	--db "$SCRATCH/other.db"
grep -q "already serving" "$SCRATCH/err" || fail "no clear message: $(cat "$SCRATCH/err")"
ctl status > /dev/null || fail "first daemon lost its socket"
pass "a second daemon refuses a live socket"

# --- check round trip equals the in-process engine ------------------------------
n=0
while read -r args; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	ctl --json check $args > "$SCRATCH/remote.json"
	rs=$?
	# shellcheck disable=SC2086
	ctl_local --json check $args > "$SCRATCH/local.json"
	ls=$?
	[ $rs -eq $ls ] || fail "case $n: exit $rs over the socket, $ls in-process ($args)"
	jq -S 'del(.decision_id)' "$SCRATCH/remote.json" > "$SCRATCH/r.json" || fail "case $n: bad JSON"
	jq -S 'del(.decision_id)' "$SCRATCH/local.json" > "$SCRATCH/l.json" || fail "case $n: bad JSON"
	cmp -s "$SCRATCH/r.json" "$SCRATCH/l.json" || {
		diff "$SCRATCH/r.json" "$SCRATCH/l.json" >&2
		fail "case $n: daemon and in-process answers differ ($args)"
	}
	jq -e '.decision_id | test("^d-")' "$SCRATCH/remote.json" > /dev/null ||
		fail "case $n: no decision id from the daemon"
done <<EOT
--gpu h100 --gpus 64 --model llama3-70b --layout tp8,pp2,sp --zero 1 --seq 8192 --mbs 1 --gbs 512 --recompute selective --ckpt 1h --tokens 1e12
--gpu h100 --gpus 64 --model llama3-70b --layout tp1 --zero 0 --precision bf16
--gpu h100 --gpus 32 --model llama3-70b --layout tp3
--partition h100 --gpus 4096 --model llama3-405b --layout tp8,pp16 --ckpt 30m
--gpu a100-80gb --nodes 2 --gpus-per-node 8 --model mixtral-8x7b --layout tp2,ep8 --zero 1
--gpu h100 --gpus 8 --model llama3-70b --task infer --seq 8192 --mbs 16 --layout tp8
--gpu nosuchgpu --gpus 8 --model llama3-8b
EOT
pass "check over the socket equals the in-process engine ($n jobs, JSON and exit codes)"

expect_status 2 "a rejected job" ctl check --gpu h100 --gpus 32 --model llama3-70b --layout tp3
grep -q "TP_NOT_DIVIDE_HEADS" "$SCRATCH/out" || fail "no TP_NOT_DIVIDE_HEADS finding"
expect_status 0 "an accepted job" ctl check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1
expect_status 64 "a bad option value" ctl check --gpu h100 --gpus 8 --zero 9
grep -q -- "--zero" "$SCRATCH/err" || fail "bad value message does not name --zero"
pass "exit codes: 2 reject, 0 accept, 64 bad option"

# --- 200 concurrent clients -------------------------------------------------------
"$WIRECLIENT" "$SOCK" check 200 > "$SCRATCH/c200" || { cat "$SCRATCH/c200" >&2; fail "200 clients"; }
[ "$(value correct "$SCRATCH/c200")" = 200 ] || fail "only $(value correct "$SCRATCH/c200")/200 answered correctly"
pass "200 concurrent clients all answered with their own layout"

"$WIRECLIENT" "$SOCK" multi 100 > "$SCRATCH/multi" || fail "100 requests on one connection"
pass "100 requests on one connection"

# --- silent and half-frame clients do not delay others --------------------------
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
	spawn "$WIRECLIENT" "$SOCK" silent > "$SCRATCH/silent.$i"; pids="$pids $!"
	spawn "$WIRECLIENT" "$SOCK" half > "$SCRATCH/half.$i"; pids="$pids $!"
done
all_connected() {
	[ "$(cat "$SCRATCH"/silent.* "$SCRATCH"/half.* | grep -c '^connected=1')" -eq 20 ]
}
wait_until -s 'echo "$(cat "$SCRATCH"/silent.* "$SCRATCH"/half.* | grep -c "^connected=1") of 20 connected"' \
	5 "the 10 silent and 10 half-frame clients to connect" all_connected
"$WIRECLIENT" "$SOCK" check 50 > "$SCRATCH/c50" || fail "clients beside silent ones"
max=$(value max_ms "$SCRATCH/c50")
[ "$max" -lt 1000 ] || fail "a check took $max ms beside silent clients (read timeout 1000 ms)"
# shellcheck disable=SC2086
wait $pids
for i in 1 2 3 4 5 6 7 8 9 10; do
	h=$(value closed_after_ms "$SCRATCH/half.$i")
	s=$(value closed_after_ms "$SCRATCH/silent.$i")
	[ -n "$h" ] && [ "$h" -ge 950 ] && [ "$h" -lt 10000 ] || fail "half-frame client closed after '$h' ms, want the 1000 ms read timeout"
	[ -n "$s" ] && [ "$s" -ge 1400 ] && [ "$s" -lt 10000 ] || fail "silent client closed after '$s' ms, want the 1500 ms idle timeout"
done
pass "10 silent and 10 half-frame clients: others answered within $max ms, the idle ones closed at their timeouts"

# --- a first request at the 4 KiB bound is sent whole --------------------------------
# Before its first request is decoded a connection may send 4096 bytes; a
# bigger first request goes after a `status`.  The client measured the
# request before wire_exchange added its version and id, so a script that
# made a 4093-4096-byte request went out as 4097-4100 bytes and was refused
# (CI, test_slurm, issue 28's first run).  One padding byte at a time across
# the bound: the overhead beside the script (the directory, the environment)
# is 1.5 to 1.9 KiB here (the scratch path is in it), and the sweep leaves
# room either side.
mkdir -p "$SCRATCH/pad"
pad=1600
while [ $pad -le 2900 ]; do
	{
		echo '#!/bin/bash'
		echo '#SBATCH --gpus=8'
		printf 'echo %0*d\n' "$pad" 0
		echo 'torchrun --nproc_per_node 8 train.py'
	} > "$SCRATCH/pad/pad.sbatch"
	(cd "$SCRATCH/pad" && ctl check --script pad.sbatch > "$SCRATCH/pad/out" 2> "$SCRATCH/pad/err")
	rc=$?
	[ $rc -le 2 ] || fail "a script padded by $pad bytes: exit $rc: $(cat "$SCRATCH/pad/err")"
	pad=$((pad + 1))
done
pass "first requests from 1600 to 2900 bytes of script, one byte apart: none refused at the 4 KiB bound"

# --- bad frames are refused, the daemon keeps serving ----------------------------
# bad_frame KIND CODE WHAT: the frame is answered with error CODE, then closed.
bad_frame() {
	"$WIRECLIENT" "$SOCK" "$1" > "$SCRATCH/$1" || fail "$1: $(cat "$SCRATCH/$1")"
	[ "$(value error_code "$SCRATCH/$1")" = "$2" ] && [ "$(value closed "$SCRATCH/$1")" = 1 ] ||
		fail "$3: $(cat "$SCRATCH/$1")"
}
bad_frame oversized 3 "oversized frame"
bad_frame truncated 2 "truncated frame"
bad_frame malformed 2 "malformed frame"
bad_frame version 1 "unknown version"
"$WIRECLIENT" "$SOCK" random 100 > "$SCRATCH/rnd" || fail "random frames: $(cat "$SCRATCH/rnd")"
running "$DAEMON_PID" || fail "advisord died on bad frames"
"$WIRECLIENT" "$SOCK" check 20 > "$SCRATCH/after" || fail "checks after bad frames"
pass "oversized (ERR_TOO_LARGE), truncated/malformed (ERR_MALFORMED), version 99 (ERR_VERSION), 100 random: refused and closed; daemon still serving"

# --- reload ----------------------------------------------------------------------
job="--partition h100 --gpus 4096 --model llama3-8b --layout tp1 --zero 1 --ckpt 1h"
# shellcheck disable=SC2086
ctl --json check $job | jq -e '[.findings[].code] | index("POLICY_MAX_GPUS")' > /dev/null ||
	fail "POLICY_MAX_GPUS expected with max_gpus 2048"
write_policy 8192
expect_status 0 "reload of a good policy" ctl reload
# shellcheck disable=SC2086
ctl --json check $job | jq -e '[.findings[].code] | index("POLICY_MAX_GPUS") | not' > /dev/null ||
	fail "answers did not change after reload"
pass "reload with a good file changes the answers"

cp "$POLICY" "$SCRATCH/policy.good"
printf 'mode: enforce\nmemory: { reserve_gib: 3\npartitions: {}\n' > "$POLICY"
expect_status 65 "reload of a broken policy" ctl reload
grep -q "policy.yaml:[0-9]*:[0-9]*" "$SCRATCH/err" || fail "reload error lacks file:line:col: $(cat "$SCRATCH/err")"
# shellcheck disable=SC2086
ctl --json check $job | jq -e '[.findings[].code] | index("POLICY_MAX_GPUS") | not' > /dev/null ||
	fail "a broken reload changed the answers"
ctl --json stats | jq -e '.reloads == 2 and .last_reload_ok == false' > /dev/null ||
	fail "stats do not show the failed reload"
pass "reload with a broken file: exit 65, file:line:col, old answers stay"

cp "$SCRATCH/policy.good" "$POLICY"
kill -HUP "$DAEMON_PID"
hup_reloaded() { ctl --json stats | jq -e '.reloads == 3 and .last_reload_ok' > /dev/null; }
wait_until -s 'ctl --json stats | jq -c "{reloads, last_reload_ok}"' 5 "a good reload after SIGHUP" hup_reloaded
pass "SIGHUP reloads"

expect_status 77 "reload as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" reload
grep -q "admins" "$SCRATCH/err" || fail "denied reload does not say why"
pass "non-admin reload refused (exit 77)"

# --- history and access ------------------------------------------------------------
expect_status 0 "check as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1
expect_status 0 "history" ctl --json history --limit 5000
jq -e '.decisions | length > 300' "$SCRATCH/out" > /dev/null || fail "history lacks decisions"
# An advisorctl check is a what-if query (issue 14): only --include-queries shows it.
expect_status 0 "own history as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" --json history
jq -e '.decisions | length == 0' "$SCRATCH/out" > /dev/null ||
	fail "nobody's what-if query shown as a decision: $(cat "$SCRATCH/out")"
expect_status 0 "own history as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" --json history --include-queries
jq -e '(.decisions | length) == 1 and .decisions[0].user == "nobody"' "$SCRATCH/out" > /dev/null ||
	fail "nobody should see exactly its own decision: $(cat "$SCRATCH/out")"
expect_status 77 "root's history as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" history --user root
expect_status 0 "history filters" ctl --json history --verdict reject --since 1h --limit 3
jq -e '(.decisions | length) == 3 and all(.decisions[]; .verdict == "reject")' "$SCRATCH/out" > /dev/null ||
	fail "history filters: $(cat "$SCRATCH/out")"
expect_status 0 "history table" ctl history --limit 3
head -n 1 "$SCRATCH/out" | grep -q "DECISION" || fail "history table has no header"
pass "history: filters, table, own decisions for users, others' for admins only"

# --- show: a decision as its user saw it, linked both ways (issue 21) -----------------
cat > "$SCRATCH/train.sbatch" <<'EOT'
#!/bin/bash
#SBATCH -N 4
#SBATCH --gres=gpu:8
srun torchrun --nnodes 4 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 3 \
  --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --seq-length 4096 \
  --micro-batch-size 1 --global-batch-size 480 --bf16
EOT
# The submission as sbatch sends it (no job id yet), then a node check of its job.
(cd "$SCRATCH" && "$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=32 nodes=4 partition=h100 \
	script=train.sbatch) > "$SCRATCH/sub"
sub=$(value id "$SCRATCH/sub")
[ -n "$sub" ] || fail "no decision for the submission: $(cat "$SCRATCH/sub")"
"$WIRECLIENT" "$SOCK" decide step gpu=h100 gpus=32 nodes=4 partition=h100 job=77 parent="$sub" \
	model=llama3-70b layout=tp8,pp4 > "$SCRATCH/node" || fail "node check: $(cat "$SCRATCH/node")"
node=$(value id "$SCRATCH/node")
expect_status 0 "show" ctl show "$sub"
# Every finding, the note sbatch hides on a reject included.
for want in "script: train.sbatch" "verdict: reject" "advisor: TP_NOT_DIVIDE_HEADS: TP=3 does not divide the 64 attention heads" \
	"advisor: note: SCRIPT_ASSUMED: " \
	"advisor:   fix: --tensor-model-parallel-size 4 (train.sbatch line 4, TP=3)" \
	"advisor:   or:  --llm-layout=tp4" "workload: task=train framework=megatron" "  $node  "; do
	grep -qF -- "$want" "$SCRATCH/out" || fail "show lacks '$want': $(cat "$SCRATCH/out")"
done
grep -Eq '^  tp +train\.sbatch:4 --tensor-model-parallel-size$' "$SCRATCH/out" ||
	fail "show lacks where tp came from: $(cat "$SCRATCH/out")"
expect_status 0 "show --json" ctl --json show "$sub"
jq -e --arg n "$node" '.recorded and .script == "train.sbatch" and .verdict == "reject" and .parent == null
	and (.findings | map(.code) | index("TP_NOT_DIVIDE_HEADS"))
	and (.findings[] | select(.code == "TP_NOT_DIVIDE_HEADS") | .lines[0] | startswith("advisor: TP_NOT_DIVIDE_HEADS: "))
	and (.sources[] | select(.field == "tp") | .where) == "train.sbatch:4 --tensor-model-parallel-size"
	and (.workload | test("precision=bf16")) and .findings_left_out == 0
	and ([.children[].id] == [$n])' "$SCRATCH/out" > /dev/null || fail "show --json: $(cat "$SCRATCH/out")"
expect_status 0 "show of a node check" ctl --json show "$node"
jq -e --arg s "$sub" '.parent.id == $s and .parent.script == "train.sbatch" and .job_id == 77
	and .recorded and .findings == [] and .children == []' "$SCRATCH/out" > /dev/null ||
	fail "a node check does not link its submission: $(cat "$SCRATCH/out")"
cp "$SCRATCH/out" "$SCRATCH/show.node"
expect_status 0 "history --decision" ctl --json history --decision "$node"
cmp -s "$SCRATCH/out" "$SCRATCH/show.node" || fail "history --decision differs from show"
expect_status 0 "show of a node check, text" ctl show "$node"
grep -q "^submission: $sub " "$SCRATCH/out" || fail "show names no submission: $(cat "$SCRATCH/out")"
# A rejected submission has no job id: found by its script's name (as given, or its file name).
expect_status 0 "history --script" ctl --json history --script train.sbatch --since 1h --verdict reject
jq -e --arg s "$sub" '[.decisions[].id] == [$s] and .decisions[0].script == "train.sbatch"' "$SCRATCH/out" > /dev/null ||
	fail "history --script: $(cat "$SCRATCH/out")"
(cd "$SCRATCH" && "$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=32 nodes=4 partition=h100 \
	script=./train.sbatch) > /dev/null
expect_status 0 "history --script, a path" ctl --json history --script train.sbatch
jq -e '[.decisions[].script] == ["./train.sbatch", "train.sbatch"]' "$SCRATCH/out" > /dev/null ||
	fail "history --script by file name: $(cat "$SCRATCH/out")"
expect_status 0 "history --script, a part" ctl --json history --script rain.sbatch
jq -e '.decisions == []' "$SCRATCH/out" > /dev/null || fail "--script matched part of a name: $(cat "$SCRATCH/out")"
expect_status 0 "history --until" ctl --json history --script train.sbatch --until 1h
jq -e '.decisions == []' "$SCRATCH/out" > /dev/null || fail "--until 1h shows recent decisions: $(cat "$SCRATCH/out")"
# --- confirmation (issue 27): a parent vouches only for the job it was made for -------
# A node check names its submission in ADVISOR_DECISION_ID, which the job's
# user sets as he likes; advisord leaves the job's text out only when the
# parent is the user's accepted or warned decision of the same text, used
# by no other job, and believes the uid only from root (slurmstepd).
sed 's/--tensor-model-parallel-size 3/--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4/' \
	"$SCRATCH/train.sbatch" > "$SCRATCH/good.sbatch"
chmod 644 "$SCRATCH/good.sbatch" "$SCRATCH/train.sbatch"
(cd "$SCRATCH" && "$WIRECLIENT" "$SOCK" decide sbatch gpu=h100 gpus=32 nodes=4 partition=h100 \
	script=good.sbatch) > "$SCRATCH/subg"
good=$(value id "$SCRATCH/subg")
[ -n "$good" ] && [ "$(value verdict "$SCRATCH/subg")" != 2 ] || fail "good.sbatch not accepted: $(cat "$SCRATCH/subg")"
# step JOB PARENT SCRIPT [as_nobody]: a node check of job JOB for uid 0 shipping SCRIPT.
step() {
	(cd "$SCRATCH" && ${4:-} "$WIRECLIENT" "$SOCK" decide step gpu=h100 gpus=32 nodes=4 \
		partition=h100 job="$1" uid=0 parent="$2" script="$3") > "$SCRATCH/step" 2>&1
	cat "$SCRATCH/step" >> "$SCRATCH/steps.log"
}
unconfirmed() {   # WHY: judged from the text, with PARENT_UNCONFIRMED
	[ "$(value text_read "$SCRATCH/step")" = 1 ] && grep -q "PARENT_UNCONFIRMED" "$SCRATCH/step" ||
		fail "$1: the parent vouched: $(cat "$SCRATCH/step")"
}
step 501 "$sub" train.sbatch
unconfirmed "the rejected submission's own id"
[ "$(value verdict "$SCRATCH/step")" = 2 ] || fail "a rejected job ran with its own id: $(cat "$SCRATCH/step")"
step 502 "$good" train.sbatch
unconfirmed "another accepted id of the same user"
[ "$(value verdict "$SCRATCH/step")" = 2 ] || fail "a rejected job ran with another's id: $(cat "$SCRATCH/step")"
step 503 "$good" good.sbatch
[ "$(value text_read "$SCRATCH/step")" = 0 ] && ! grep -q PARENT_UNCONFIRMED "$SCRATCH/step" ||
	fail "the job's own submission did not vouch for it: $(cat "$SCRATCH/step")"
step 503 "$good" good.sbatch
[ "$(value text_read "$SCRATCH/step")" = 0 ] || fail "a second step of the job: $(cat "$SCRATCH/step")"
step 504 "$good" good.sbatch
unconfirmed "a submission another job used"
grep -q "used by another job" "$SCRATCH/step" || :
expect_status 0 "history --job of the job that used it" ctl --json history --job 503
jq -e --arg g "$good" '[.decisions[] | select(.id == $g)] | length == 1' "$SCRATCH/out" > /dev/null ||
	fail "the submission is not job 503's: $(cat "$SCRATCH/out")"
# From nobody, uid=0 and the parent are nobody's say-so: judged as nobody's own, no parent.
step 503 "$good" good.sbatch as_nobody
forged=$(value id "$SCRATCH/step")
[ "$(value text_read "$SCRATCH/step")" = 1 ] && [ -n "$forged" ] ||
	fail "a forged job_uid was believed: $(cat "$SCRATCH/step")"
expect_status 0 "show of the forged check" ctl --json show "$forged"
jq -e '.parent == null and .user == "nobody"' "$SCRATCH/out" > /dev/null ||
	fail "the forged check is linked or not nobody's: $(cat "$SCRATCH/out")"
expect_status 0 "show of the submission" ctl --json show "$good"
jq -e --arg f "$forged" '[.children[].id] | index($f) == null' "$SCRATCH/out" > /dev/null ||
	fail "nobody attached a check to root's submission: $(cat "$SCRATCH/out")"
pass "confirmation: verdict, text, user and job; uid and parent only from root"

# Who may see it: history's rule.  nobody's check prints the command that shows it again.
expect_status 0 "check as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" check --gpu h100 --gpus 8 --model llama3-8b --layout tp2 --zero 1
see=$(sed -n 's/^see: //p' "$SCRATCH/out")
case $see in "advisorctl show "[dq]-*) ;; *) fail "check prints no show command: $(cat "$SCRATCH/out")" ;; esac
qid=${see#advisorctl show }
# shellcheck disable=SC2086
expect_status 0 "the printed command, as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" ${see#advisorctl }
grep -q "^decision $qid " "$SCRATCH/out" && grep -q "what-if query" "$SCRATCH/out" ||
	fail "nobody's own query: $(cat "$SCRATCH/out")"
expect_status 77 "root's decision as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" show "$sub"
grep -q "not yours" "$SCRATCH/err" || fail "refusal does not say why: $(cat "$SCRATCH/err")"
expect_status 77 "history --decision of root's, as nobody" as_nobody "$ADVISORCTL" --socket "$SOCK" history --decision "$sub"
expect_status 0 "nobody's query, as root" ctl --json show "$qid"
jq -e '.user == "nobody" and .query' "$SCRATCH/out" > /dev/null || fail "admin show: $(cat "$SCRATCH/out")"
expect_status 65 "show of no decision" ctl show d-0-0-0
grep -q "no decision d-0-0-0" "$SCRATCH/err" || fail "show of no decision: $(cat "$SCRATCH/err")"
pass "show: findings in the plugin's lines, sources, workload, submission and node checks linked both ways, --json; history --decision, --script, --until; own decisions for users, all for admins"

# --- other commands ----------------------------------------------------------------
expect_status 0 "stats" ctl --json stats
jq -e '.requests > 300 and .errors >= 4 and .p99_ms > 0' "$SCRATCH/out" > /dev/null || fail "stats: $(cat "$SCRATCH/out")"
expect_status 0 "status" ctl --json status
jq -e --arg s "$SOCK" '.socket == $s and .up' "$SCRATCH/out" > /dev/null || fail "status: $(cat "$SCRATCH/out")"
expect_status 0 "catalog" ctl --json catalog gpus h100
jq -e '.gpus[0].name == "h100-sxm"' "$SCRATCH/out" > /dev/null || fail "catalog lookup by alias"
expect_status 64 "unknown catalog name" ctl catalog models nosuchmodel
expect_status 0 "policy" ctl policy
grep -q "max_gpus: 8192" "$SCRATCH/out" || fail "policy does not show the policy in force"
expect_status 0 "plan" ctl --json plan --gpu h100 --gpus 64 --model llama3-70b --seq 8192 --gbs 512
jq -S . "$SCRATCH/out" > "$SCRATCH/plan.r"
ctl_local --json plan --gpu h100 --gpus 64 --model llama3-70b --seq 8192 --gbs 512 | jq -S . > "$SCRATCH/plan.l"
cmp -s "$SCRATCH/plan.r" "$SCRATCH/plan.l" || fail "plan over the socket differs from --local"
jq -e '.plans | length >= 1' "$SCRATCH/plan.r" > /dev/null || fail "no plan for Llama 3 70B on 64 H100"
# The best plan, passed back to check, gives the same memory figure.
best=$(jq -r '.plans[0].options' "$SCRATCH/plan.r" | sed 's/--llm-/--/g')
mem=$(jq '.plans[0].memory.per_gpu_gib' "$SCRATCH/plan.r")
# shellcheck disable=SC2086
ctl --json check --gpu h100 --gpus 64 --model llama3-70b --seq 8192 --gbs 512 $best > "$SCRATCH/bestcheck"
jq -e --argjson m "$mem" '.memory.per_gpu_gib == $m' "$SCRATCH/bestcheck" > /dev/null ||
	fail "check of the best plan ($best) does not give its memory $mem"
expect_status 2 "plan where nothing fits" ctl plan --gpu h100 --gpus 1 --model llama3-405b
expect_status 0 "ckpt raw form" ctl --json ckpt --job-mtbf-hours 24 --write-seconds 300 --restart-seconds 600
jq -e '(.daly_s / 60 | . > 115.8 and . < 118.2)' "$SCRATCH/out" > /dev/null ||
	fail "Daly's 24 h case should be 117 min: $(cat "$SCRATCH/out")"
for c in check plan ckpt catalog policy history show stats reload status; do
	expect_status 0 "$c --help" ctl "$c" --help
done
pass "stats, status, catalog, policy, plan (same as --local, best plan checks to its memory), ckpt, --help of every command"

stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS on SIGTERM"
[ ! -e "$SOCK" ] || fail "socket left behind after a clean stop"
pass "SIGTERM: exit 0, socket removed"
