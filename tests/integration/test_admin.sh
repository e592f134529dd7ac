#!/bin/sh
# What an admin reads in the decision log (issue 30):
#  - an exempt job (the policy's exempt: users, exempt: accounts, or a
#    partition's own mode off) is marked so, with its rule, in show,
#    history (text and --json) and the JSON log line, and counted apart in
#    report; a job of the same shape that is not exempt is rejected;
#  - report counts jobs by default (a node check that names its submission
#    is folded into it; a node check's reject counts its job once), and
#    every decision with --by decision;
#  - history --job ID lists a job's submission with its node checks, also
#    for a submission made without the job's text (sbatch on a pipe).
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip_all "jq is needed (Debian package jq)"
scratch_dir
write_policy 2048
# nobody and the account physics are exempt; partition free has its own mode off.
sed -i -e 's/^exempt: .*/exempt: { users: [nobody], accounts: [physics] }/' \
	-e 's/^  debug: .*/&\n  free: { gpu: h100-sxm, mode: off }/' "$POLICY"
grep -q "^  free: " "$POLICY" || fail "policy edit: $(cat "$POLICY")"

decide() {
	"$WIRECLIENT" "$SOCK" decide "$@"
}

start_daemon --log-json

# --- exempt decisions -------------------------------------------------------------
# TP=3 on 64 heads: rejected on h100 unless exempt.
bad="gpu=h100 gpus=32 nodes=4 model=llama3-70b layout=tp3"
# shellcheck disable=SC2086
expect_status 2 "not exempt: rejected" decide sbatch partition=h100 $bad account=chemistry
# shellcheck disable=SC2086
expect_status 0 "exempt account" decide sbatch partition=h100 $bad account=physics
acct=$(value id "$SCRATCH/out")
# shellcheck disable=SC2086
expect_status 0 "exempt user" as_nobody "$WIRECLIENT" "$SOCK" decide sbatch partition=h100 $bad
usr=$(value id "$SCRATCH/out")
# shellcheck disable=SC2086
expect_status 0 "exempt partition" decide sbatch partition=free $bad
part=$(value id "$SCRATCH/out")
[ -n "$acct" ] && [ -n "$usr" ] && [ -n "$part" ] || fail "no decision ids: $acct $usr $part"

expect_status 0 "show of the exempt account's job" ctl show "$acct"
grep -q "^verdict: accept$" "$SCRATCH/out" &&
	grep -q "^exempt: account physics (the policy's exempt: accounts lists the job's account: accepted without a check)$" "$SCRATCH/out" ||
	fail "show does not mark the exemption: $(cat "$SCRATCH/out")"
expect_status 0 "show --json" ctl --json show "$usr"
jq -e '.exempt == "user nobody" and .verdict == "accept" and .user == "nobody"' "$SCRATCH/out" > /dev/null ||
	fail "show --json of the exempt user: $(cat "$SCRATCH/out")"
expect_status 0 "show of the exempt partition's job" ctl show "$part"
grep -q "^exempt: partition free (the policy sets mode off on the partition" "$SCRATCH/out" ||
	fail "show of the partition exemption: $(cat "$SCRATCH/out")"
expect_status 0 "history --json" ctl --json history
jq -e --arg a "$acct" --arg u "$usr" --arg p "$part" '
	([.decisions[] | select(.exempt != null) | [.id, .exempt]] | sort)
	== ([[$a, "account physics"], [$u, "user nobody"], [$p, "partition free"]] | sort)
	and ([.decisions[] | select(.verdict == "reject") | .exempt] == [null])' "$SCRATCH/out" > /dev/null ||
	fail "history --json exemptions: $(cat "$SCRATCH/out")"
expect_status 0 "history" ctl history
grep -F "$acct" "$SCRATCH/out" | grep -q "exempt (account physics)" ||
	fail "history table does not mark the exemption: $(cat "$SCRATCH/out")"
grep '^{' "$SCRATCH/advisord.log" > "$SCRATCH/json.log"
jq -e -s --arg p "$part" '[.[] | select(.id == $p)][0].exempt == "partition free"
	and ([.[] | select(.exempt == null)] | length) == 1' "$SCRATCH/json.log" > /dev/null ||
	fail "JSON log lines: $(cat "$SCRATCH/json.log")"
expect_status 0 "report --json" ctl --json report
jq -e '.by == "job" and .jobs == 4 and .decisions == 4 and .exempt == 3 and .exempt_users == 2
	and .exempt_by == {"user": 1, "account": 1, "partition": 1} and .rejected == 1' "$SCRATCH/out" > /dev/null ||
	fail "report of the exemptions: $(cat "$SCRATCH/out")"
expect_status 0 "report" ctl report
grep -q "^exempt: 3 jobs by 2 users accepted unchecked (user 1, account 1, partition 1)$" "$SCRATCH/out" ||
	fail "report text of the exemptions: $(cat "$SCRATCH/out")"
pass "exempt jobs: marked with their rule in show, history, the JSON log; counted apart in report"

# --- a job's decisions: history --job, report by job and by decision --------------
cat > "$SCRATCH/good.sbatch" <<'EOT'
#!/bin/bash
#SBATCH -N 4
#SBATCH --gres=gpu:8
srun torchrun --nnodes 4 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 \
  --pipeline-model-parallel-size 4 --num-layers 80 --hidden-size 8192 --num-attention-heads 64 \
  --seq-length 4096 --micro-batch-size 1 --global-batch-size 480 --bf16
EOT
chmod 644 "$SCRATCH/good.sbatch"
good="gpu=h100 gpus=32 nodes=4 partition=h100"
# A submission with its script (vouched for by its digest), then two node checks of job 601.
# shellcheck disable=SC2086
(cd "$SCRATCH" && decide sbatch $good script=good.sbatch) > "$SCRATCH/sub" ||
	fail "submission: $(cat "$SCRATCH/sub")"
sub=$(value id "$SCRATCH/sub")
for i in 1 2; do
	# shellcheck disable=SC2086
	(cd "$SCRATCH" && decide step $good job=601 uid=0 parent="$sub" script=good.sbatch) \
		> "$SCRATCH/step$i" || fail "node check $i: $(cat "$SCRATCH/step$i")"
done
expect_status 0 "history --job 601" ctl --json history --job 601
jq -e --arg s "$sub" '(.decisions | length) == 3 and ([.decisions[] | select(.id == $s) | .context] == ["sbatch"])
	and ([.decisions[] | select(.context == "step") | .parent] == [$s, $s])
	and all(.decisions[]; .job_id == 601)' "$SCRATCH/out" > /dev/null ||
	fail "history --job lacks the submission or a node check: $(cat "$SCRATCH/out")"
# A submission without the job's text (sbatch on a pipe): no digest, so it
# vouches for nothing (the node reads the job), yet it is the job's.
# shellcheck disable=SC2086
decide sbatch $good model=llama3-70b layout=tp8,pp4 > "$SCRATCH/pipe" || fail "pipe submission: $(cat "$SCRATCH/pipe")"
pipe=$(value id "$SCRATCH/pipe")
# shellcheck disable=SC2086
(cd "$SCRATCH" && decide step $good job=602 uid=0 parent="$pipe" script=good.sbatch) > "$SCRATCH/step3" ||
	fail "node check of the piped job: $(cat "$SCRATCH/step3")"
[ "$(value text_read "$SCRATCH/step3")" = 1 ] || fail "a submission without a digest vouched: $(cat "$SCRATCH/step3")"
expect_status 0 "history --job 602" ctl --json history --job 602
jq -e --arg s "$pipe" '[.decisions[].id] | length == 2 and index($s) != null' "$SCRATCH/out" > /dev/null ||
	fail "history --job of a piped job lacks its submission: $(cat "$SCRATCH/out")"
# Another job naming the piped submission: not its job.
# shellcheck disable=SC2086
(cd "$SCRATCH" && decide step $good job=603 uid=0 parent="$pipe" script=good.sbatch) > /dev/null
expect_status 0 "history --job 603" ctl --json history --job 603
jq -e --arg s "$pipe" '[.decisions[].id] | length == 1 and index($s) == null' "$SCRATCH/out" > /dev/null ||
	fail "a second job took the piped submission: $(cat "$SCRATCH/out")"
# A node check that rejects (TP=3 shipped under the good submission's id): its job counts once.
sed 's/--tensor-model-parallel-size 8/--tensor-model-parallel-size 3/' "$SCRATCH/good.sbatch" > "$SCRATCH/bad.sbatch"
chmod 644 "$SCRATCH/bad.sbatch"
for i in 1 2; do
	# shellcheck disable=SC2086
	(cd "$SCRATCH" && decide step $good job=601 uid=0 parent="$sub" script=bad.sbatch) > "$SCRATCH/rej$i"
	[ "$(value verdict "$SCRATCH/rej$i")" = 2 ] || fail "the bad node check was not rejected: $(cat "$SCRATCH/rej$i")"
done
# Jobs: the 4 above, $sub, $pipe and job 603's node check (its parent is job 602's, yet it
# names one: folded).  Decisions: 4 + 1 + 2 + 1 + 1 + 1 + 2 = 12.
expect_status 0 "report by job" ctl --json report
jq -e '.by == "job" and .decisions == 12 and .jobs == 6 and .node_checks == 6 and .node_rejected == 1
	and ([.verdicts[] | .count] | add) == 6' "$SCRATCH/out" > /dev/null ||
	fail "report by job: $(cat "$SCRATCH/out")"
expect_status 0 "report text by job" ctl report
grep -q "^jobs .*: 6 by 2 users (accept 5, warn 0, reject 1)$" "$SCRATCH/out" &&
	grep -q "^from 12 decisions: 6 node checks counted with the submission they name; 1 job rejected on the node$" "$SCRATCH/out" ||
	fail "report text by job: $(cat "$SCRATCH/out")"
expect_status 0 "report by decision" ctl --json report --by decision
jq -e '.by == "decision" and .decisions == 12 and .jobs == null and ([.verdicts[] | .count] | add) == 12
	and ([.verdicts[] | select(.verdict == "reject") | .count][0] == 3)' "$SCRATCH/out" > /dev/null ||
	fail "report by decision: $(cat "$SCRATCH/out")"
expect_status 0 "report text by decision" ctl report --by decision
grep -q "^decisions .*: 12 by 2 users" "$SCRATCH/out" && ! grep -q "^from " "$SCRATCH/out" ||
	fail "report text by decision: $(cat "$SCRATCH/out")"
expect_status 64 "report --by something else" ctl report --by user
pass "history --job lists a job's submission (with or without its text) and its node checks; report counts jobs, or decisions with --by decision"

stop_daemon TERM
[ "$DAEMON_STATUS" -eq 0 ] || fail "advisord exited $DAEMON_STATUS"
pass "daemon stopped cleanly"
