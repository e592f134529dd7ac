#!/bin/sh
# advisor in slurmctld (issue 31): the Lua module and etc/job_submit.lua on
# the private Slurm cluster (scripts/cluster, JobSubmitPlugins=lua), with
# the SPANK plugin in the cluster's plugstack.conf (sbatch and the node
# check) and a private advisord.  Every submission is judged once, before
# it queues, whatever its client:
#  - a client with a copy of slurm.conf and an empty plugstack (bypass):
#    tests/jobs/01 (TP=3 on a 64-head model) refused at submission with
#    the lines sbatch's plugin prints; a good job accepted with its
#    decision in AdminComment and ADVISOR_DECISION_ID, which the node
#    check then binds to the job without judging again;
#  - sbatch through the plugin: the plugin's decision confirmed by
#    job_submit, not judged twice (one decision per job);
#  - a forged ADVISOR_DECISION_ID: judged from its text (PARENT_UNCONFIRMED);
#  - slurmrestd (rest_auth/local, slurmrest.sh): the same refusal, and a
#    good job with its decision in AdminComment;
#  - a modification that breaks a pending job's layout is refused;
#  - with accounting (slurmdbd on a private MariaDB): a user whose default
#    account is exempt is not judged against the policy (the SPANK plugin
#    sees -A only when given), and sacct shows AdminComment;
#  - advisord hung (SIGSTOP) or stopped: submissions go through within
#    the time budget (on_unavailable=allow, AdminComment "not checked"),
#    slurmctld answers meanwhile, and on_unavailable=deny refuses them.
# Skips (77) when not root, when Slurm, munge, slurmrestd, curl or jq are
# missing, when the Lua module was not built, or with ADVISOR_SKIP_SLURM.
# The accounting cases are skipped (said) without slurmdbd or MariaDB.
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/slurmrest.sh
. "$(dirname "$0")/slurmrest.sh"

[ -z "${ADVISOR_SKIP_SLURM:-}" ] && [ "$(id -u)" -eq 0 ] ||
	skip_all "needs root and a private Slurm cluster (or ADVISOR_SKIP_SLURM is set)"
for b in slurmctld slurmd sbatch squeue scontrol munged slurmrestd curl jq setpriv; do
	command -v "$b" > /dev/null 2>&1 ||
		skip_all "$b not found (Debian packages slurm-wlm, slurmrestd, munge, curl, jq)"
done
LUAMOD=$top_builddir/plugin/.libs/advisor.so
[ -f "$LUAMOD" ] || skip_all "the Lua module was not built (configure found no Lua dev package)"
[ -f "$top_builddir/etc/job_submit.lua" ] || fail "etc/job_submit.lua was not made"
accounting=yes
for b in slurmdbd sacct sacctmgr mariadbd mariadb-install-db mariadb-admin; do
	command -v "$b" > /dev/null 2>&1 || accounting=
done

scratch_dir
CLUSTER_DIR=$SCRATCH/cluster
mkdir -p "$CLUSTER_DIR" "$SCRATCH/out" "$SCRATCH/bypass"
chmod 755 "$CLUSTER_DIR" "$SCRATCH/bypass"
chmod 1777 "$SCRATCH/out"
# A free block of 8 ports (slurmctld, 6 slurmd, slurmdbd), as test_audit.sh.
port_free() {
	! ss -tanH 2> /dev/null | awk '{print $4}' | sed 's/.*://' |
		awk -v p="$1" '$1 >= p && $1 <= p + 7 { found = 1 } END { exit !found }'
}
CLUSTER_PORT=${ADVISOR_TEST_PORT:-$((28000 + ($$ % 3000) * 10))}
while ! port_free "$CLUSTER_PORT"; do CLUSTER_PORT=$((CLUSTER_PORT + 10)); done
export CLUSTER_DIR CLUSTER_PORT
export SLURM_CONF=$CLUSTER_DIR/slurm.conf

js_cleanup() {
	rc=$?
	rest_stop
	[ -z "$DAEMON_PID" ] || kill -CONT "$DAEMON_PID" 2> /dev/null
	"$top_srcdir/scripts/cluster" stop > /dev/null 2>&1 || :
	end_by_path "$CLUSTER_DIR"
	if [ "$rc" -ne 0 ]; then
		echo "--- slurmctld log"
		grep -E 'job_submit|lua|error' "$CLUSTER_DIR/log/slurmctld.log" 2> /dev/null | tail -n 20
	fi
	cleanup
}
trap js_cleanup EXIT

# Two users: advrest (default account research) and advfree (default
# account llm-free, which the policy exempts).
make_users advrest advfree
cluster_policy "$POLICY"
start_daemon
chmod 755 "$SCRATCH/run"

# js_lua TIMEOUT_MS ON_UNAVAILABLE: the built etc/job_submit.lua, pointed at
# the build's module and this daemon, as slurmctld's job_submit.lua.  The
# plugin reloads it when its mtime changes (job_submit_lua.c
# _load_script), which has a resolution of a second: a rewrite is dated
# ahead of the last one.
js_serial=0
js_lua() {
	js_serial=$((js_serial + 1))
	sed -e "s|^package.cpath = .*|package.cpath = \"$top_builddir/plugin/.libs/?.so;\" .. package.cpath|" \
		-e "s|socket = \".*\"|socket = \"$SOCK\"|" \
		-e "s|timeout_ms = 50|timeout_ms = $1|" \
		-e "s|on_unavailable = \"allow\"|on_unavailable = \"$2\"|" \
		"$top_builddir/etc/job_submit.lua" > "$SCRATCH/job_submit.lua" || fail "cannot write job_submit.lua"
	grep -q "timeout_ms = $1," "$SCRATCH/job_submit.lua" && grep -q "\"$2\"" "$SCRATCH/job_submit.lua" ||
		fail "etc/job_submit.lua no longer has the lines this test edits"
	[ ! -f "$CLUSTER_DIR/job_submit.lua" ] || {
		cp "$SCRATCH/job_submit.lua" "$CLUSTER_DIR/job_submit.lua"
		touch -d "@$(($(date +%s) + js_serial * 2))" "$CLUSTER_DIR/job_submit.lua"
	}
}
# The budget of a check from slurmctld: generous here (2 lanes share 2
# cores), short for the hung-daemon cases below.
js_lua 3000 allow

if [ -n "$accounting" ]; then
	mariadb_start "$SCRATCH/mariadb"
	mariadb_sql <<EOT || fail "cannot create the slurmdbd user"
CREATE USER 'slurm'@'%' IDENTIFIED BY 'js-test-pw';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'%';
EOT
	export CLUSTER_DB_PORT=$MARIADB_PORT CLUSTER_DB_USER=slurm CLUSTER_DB_PASS=js-test-pw
fi
PLUGIN=$(stage "$top_builddir/plugin/.libs/spank_advisor.so")
CLUSTER_JOB_SUBMIT=$SCRATCH/job_submit.lua ADVISOR_SOCKET=$SOCK ADVISOR_PLUGIN_ARGS=timeout_ms=3000 \
	"$top_srcdir/scripts/cluster" start "$PLUGIN" > "$SCRATCH/cluster.out" 2>&1 ||
	fail "scripts/cluster start: $(cat "$SCRATCH/cluster.out")"
if [ -n "$accounting" ]; then
	sacctmgr -i add account research,llm-free > /dev/null 2>&1 &&
		sacctmgr -i add user advrest account=research defaultaccount=research > /dev/null 2>&1 &&
		sacctmgr -i add user advfree account=llm-free defaultaccount=llm-free > /dev/null 2>&1 ||
		fail "sacctmgr could not add the accounts and users"
	# slurmctld learns the associations from slurmdbd.
	assoc_known() { scontrol show assoc_mgr users=advfree flags=assoc 2> /dev/null | grep -q 'Account=llm-free'; }
	wait_until -s "scontrol show assoc_mgr users=advfree flags=assoc" 30 "slurmctld to know advfree's association" assoc_known
fi
pass "cluster up with job_submit/lua and advisor's module$([ -n "$accounting" ] && echo ", accounting on MariaDB")"

# The bypassing client: the cluster's slurm.conf with an empty plugstack.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$SCRATCH/bypass/plugstack.conf|" "$SLURM_CONF" \
	> "$SCRATCH/bypass/slurm.conf"
: > "$SCRATCH/bypass/plugstack.conf"
BYPASS=$SCRATCH/bypass/slurm.conf

# The jobs: tests/jobs/01 (TP=3: 3 does not divide the 64 heads), started
# by torchrun on one task per node (the test nodes have 2 CPUs, not 16),
# and the same job made good (TP=4, PP=4 on 32 H100: accepted, warned).
mkdir -p "$SCRATCH/jobs/bad" "$SCRATCH/jobs/good"
sed -e 's/^#SBATCH --ntasks-per-node=8$/#SBATCH --ntasks-per-node=1/' \
	-e 's/^#SBATCH --cpus-per-task=2$/#SBATCH --cpus-per-task=1/' \
	-e 's/srun --cpu-bind=none python pretrain_gpt.py/srun --cpu-bind=none torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT pretrain_gpt.py/' \
	"$top_srcdir/tests/jobs/01-megatron-tp3-heads/job.sbatch" > "$SCRATCH/jobs/bad/job.sbatch"
sed -e 's/^TP=3$/TP=4/' -e 's/^PP=1$/PP=4/' "$SCRATCH/jobs/bad/job.sbatch" > "$SCRATCH/jobs/good/job.sbatch"
grep -q '^TP=4$' "$SCRATCH/jobs/good/job.sbatch" && grep -q '^PP=4$' "$SCRATCH/jobs/good/job.sbatch" &&
	grep -q 'ntasks-per-node=1$' "$SCRATCH/jobs/good/job.sbatch" && grep -q 'torchrun' "$SCRATCH/jobs/good/job.sbatch" ||
	fail "tests/jobs/01 no longer has the lines this test edits"
chmod -R a+rX "$SCRATCH/jobs"

# sub USER CONF JOB NAME [SBATCH OPTIONS...]: sbatch as USER from the job's
# directory; stdout, stderr and the status in $SCRATCH/NAME.{out,err,rc}.
sub() {
	_s_user=$1 _s_conf=$2 _s_job=$3 _s_name=$4
	shift 4
	(cd "$SCRATCH/jobs/$_s_job" && as_user "$_s_user" env SLURM_CONF="$_s_conf" \
		sbatch -J "$_s_name" -o "$SCRATCH/out/$_s_name.%j.out" "$@" job.sbatch) \
		> "$SCRATCH/$_s_name.out" 2> "$SCRATCH/$_s_name.err"
	echo $? > "$SCRATCH/$_s_name.rc"
}
jobid_of() { sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$SCRATCH/$1.out"; }
queued() { [ -n "$(squeue -h -n "$1" -o %i 2> /dev/null)" ]; }
admin_comment() { scontrol show job "$1" 2> /dev/null | sed -n 's/^ *AdminComment=\(.*\)$/\1/p' | sed 's/ *$//'; }
# comment_is JOB WANT WHOSE: the job's AdminComment is WANT.
comment_is() {
	[ "$(admin_comment "$1")" = "$2" ] || fail "job $1 AdminComment '$(admin_comment "$1")', want $3 '$2'"
}
decisions() { ctl history --json --limit 100 2> /dev/null; }
n_decisions() { decisions | jq --arg c "$1" '[.decisions[] | select(.context == $c)] | length'; }
newest() { decisions | jq -r --arg c "$1" '[.decisions[] | select(.context == $c)][0].id'; }
# The reason lines of a refusal: advisor's lines without the tool's prefix.
reasons() { sed -n 's/^.*\(advisor: .*\)$/\1/p' "$1" | grep -v '^advisor: decision '; }

# ---- a bypassing client is refused at submission ------------------------------
sub advrest "$BYPASS" bad bp-bad -A research
[ "$(cat "$SCRATCH/bp-bad.rc")" -ne 0 ] || fail "the bypassing client's TP=3 job was accepted: $(cat "$SCRATCH/bp-bad.out")"
grep -q 'advisor: TP_NOT_DIVIDE_HEADS: TP=3 does not divide the 64 attention heads' "$SCRATCH/bp-bad.err" &&
	grep -q 'fix: --tensor-model-parallel-size 4 (job.sbatch line 25, TP=3' "$SCRATCH/bp-bad.err" &&
	grep -q 'nothing was submitted; see: advisorctl show' "$SCRATCH/bp-bad.err" ||
	fail "the refusal lacks advisor's reason and fix: $(cat "$SCRATCH/bp-bad.err")"
! queued bp-bad || fail "the refused job is in the queue"
[ "$(n_decisions job_submit)" = 1 ] || fail "$(n_decisions job_submit) job_submit decisions, want 1"
decisions | jq -e '.decisions[0] | .user == "advrest" and .verdict == "reject" and .context == "job_submit"' \
	> /dev/null || fail "the decision is not advrest's reject: $(decisions | jq -c '.decisions[0]')"
pass "a bypassing client's TP=3 job refused at submission, with the reason and fix, as advrest's decision"

# ---- sbatch through the plugin: the same reason ------------------------------
sub advrest "$SLURM_CONF" bad pl-bad -A research
[ "$(cat "$SCRATCH/pl-bad.rc")" -ne 0 ] || fail "sbatch with the plugin accepted the TP=3 job"
reasons "$SCRATCH/pl-bad.err" > "$SCRATCH/pl-bad.reasons"
reasons "$SCRATCH/bp-bad.err" > "$SCRATCH/bp-bad.reasons"
[ -s "$SCRATCH/pl-bad.reasons" ] && cmp -s "$SCRATCH/pl-bad.reasons" "$SCRATCH/bp-bad.reasons" ||
	fail "job_submit's reasons differ from sbatch's plugin's: $(diff "$SCRATCH/pl-bad.reasons" "$SCRATCH/bp-bad.reasons")"
[ "$(n_decisions job_submit)" = 1 ] || fail "the plugin's refusal reached job_submit too"
pass "sbatch's plugin refuses it with the same $(wc -l < "$SCRATCH/pl-bad.reasons") lines"

# ---- one decision per job: sbatch's decision confirmed, not judged again -----
sub advrest "$SLURM_CONF" good pl-good -A research
pl_job=$(jobid_of pl-good)
[ -n "$pl_job" ] || fail "the good job was refused through the plugin: $(cat "$SCRATCH/pl-good.err")"
pl_id=$(newest sbatch)
comment_is "$pl_job" "advisor: decision $pl_id warn (sbatch)" "sbatch's decision"
[ "$(n_decisions job_submit)" = 1 ] || fail "job_submit judged the plugin's job again"
grep -q "decision $pl_id user=advrest .*context=job_submit confirmed (warn)" "$SCRATCH/advisord.log" ||
	fail "advisord did not log the confirmation of $pl_id"
pass "sbatch's decision $pl_id confirmed by job_submit, in AdminComment, judged once"

# ---- a bypassing client's good job: judged at submission, bound on the node --
sub advrest "$BYPASS" good bp-good -A research
bp_job=$(jobid_of bp-good)
[ -n "$bp_job" ] || fail "the good job was refused: $(cat "$SCRATCH/bp-good.err")"
bp_id=$(newest job_submit)
comment_is "$bp_job" "advisor: decision $bp_id warn" "job_submit's decision"
grep -q 'advisor: warning: MEM_LOW_HEADROOM' "$SCRATCH/bp-good.err" ||
	fail "the user was not told the warning: $(cat "$SCRATCH/bp-good.err")"
# Both jobs run (the trainer is missing, so they fail fast); the node
# check finds each decision in ADVISOR_DECISION_ID, and binds it.
ran() { ls "$SCRATCH/out/$1.$2.out" > /dev/null 2>&1 && ! queued "$1"; }
wait_until -s 'squeue' 90 "jobs $pl_job and $bp_job to run and end" ran pl-good "$pl_job"
wait_until -s 'squeue' 90 "job $bp_job to run and end" ran bp-good "$bp_job"
grep -q "decision=$bp_id" "$SCRATCH/out/bp-good.$bp_job.out" ||
	fail "the job did not see ADVISOR_DECISION_ID=$bp_id: $(head -n 3 "$SCRATCH/out/bp-good.$bp_job.out")"
# bound JOB ID: history --job JOB lists decision ID.
bound() { ctl history --job "$1" --json 2> /dev/null | jq -e --arg id "$2" 'any(.decisions[]; .id == $id)' > /dev/null; }
for pair in "$pl_job $pl_id" "$bp_job $bp_id"; do
	set -- $pair
	wait_until -s "ctl history --job $1" 30 "decision $2 to be bound to job $1" bound "$1" "$2"
	cat "$CLUSTER_DIR"/log/slurmd.*.log | grep -F "job $1 node check" | grep -q "parent $2)" ||
		fail "job $1's node check did not name $2 as its parent"
	! cat "$CLUSTER_DIR"/log/slurmd.*.log | grep -F "job $1 node check" | grep -q 'batch script read' ||
		fail "job $1's node check read the script again"
done
pass "a bypassing client's good job: decision $bp_id in AdminComment and the job's environment, bound to job $bp_job by the node check without a second read"

# ---- a forged decision id does not vouch for another script ------------------
as_user advrest env SLURM_CONF="$BYPASS" ADVISOR_DECISION_ID="$pl_id" \
	sh -c "cd '$SCRATCH/jobs/bad' && sbatch -J forged -A research -o /dev/null job.sbatch" \
	> "$SCRATCH/forged.out" 2> "$SCRATCH/forged.err" && fail "the TP=3 job naming $pl_id was accepted"
grep -q 'TP_NOT_DIVIDE_HEADS' "$SCRATCH/forged.err" ||
	fail "the job naming $pl_id was not judged: $(cat "$SCRATCH/forged.err")"
forged_id=$(newest job_submit)
ctl show "$forged_id" > "$SCRATCH/forged.show" 2>&1
grep -q "PARENT_UNCONFIRMED.*ADVISOR_DECISION_ID=$pl_id of this submission .*judged from its text at submission" \
	"$SCRATCH/forged.show" || fail "decision $forged_id does not say the id was not vouched for: $(cat "$SCRATCH/forged.show")"
pass "a TP=3 job naming another script's decision is judged from its text and refused"

# ---- slurmrestd -----------------------------------------------------------------
rest_start "$SCRATCH/rest" advrest
rest_acct=
[ -z "$accounting" ] || rest_acct=account=research
rest_spec "$SCRATCH/rest-bad.json" name=rest-bad partition=h100 nodes=4 gres=gpu:8 \
	script_file="$SCRATCH/jobs/bad/job.sbatch" cwd="$SCRATCH/jobs/bad" $rest_acct env=PATH=/usr/bin:/bin
if id=$(rest_submit advrest "$SCRATCH/rest-bad.json" "$SCRATCH/rest-bad.res"); then
	fail "slurmrestd accepted the TP=3 job as $id"
fi
rest_error "$SCRATCH/rest-bad.res" > "$SCRATCH/rest-bad.err"
reasons "$SCRATCH/rest-bad.err" > "$SCRATCH/rest-bad.reasons"
# The same reason; the script has no name through slurmrestd ("batch script").
sed 's/job\.sbatch line/batch script line/g' "$SCRATCH/bp-bad.reasons" > "$SCRATCH/bp-bad.rest"
cmp -s "$SCRATCH/rest-bad.reasons" "$SCRATCH/bp-bad.rest" ||
	fail "slurmrestd's refusal says otherwise: $(diff "$SCRATCH/bp-bad.rest" "$SCRATCH/rest-bad.reasons")"
! queued rest-bad || fail "the job refused through slurmrestd is queued"
rest_spec "$SCRATCH/rest-good.json" name=rest-good partition=h100 nodes=4 gres=gpu:8 hold=true \
	script_file="$SCRATCH/jobs/good/job.sbatch" cwd="$SCRATCH/jobs/good" $rest_acct env=PATH=/usr/bin:/bin
rest_job=$(rest_submit advrest "$SCRATCH/rest-good.json" "$SCRATCH/rest-good.res") ||
	fail "slurmrestd refused the good job: $(rest_error "$SCRATCH/rest-good.res")"
rest_id=$(newest job_submit)
comment_is "$rest_job" "advisor: decision $rest_id warn" "job_submit's decision"
decisions | jq -e --arg id "$rest_id" '.decisions[] | select(.id == $id) | .user == "advrest"' > /dev/null ||
	fail "the slurmrestd job's decision is not advrest's"
pass "slurmrestd ($REST_API): the TP=3 job refused before it queues with the same $(wc -l < "$SCRATCH/rest-bad.reasons") lines, the good one queued with decision $rest_id in AdminComment"

# ---- a modification that breaks the layout is refused -------------------------
# 3 nodes: 24 GPUs, which TP=4 x PP=4 does not divide.
scontrol update jobid="$rest_job" numnodes=3 > "$SCRATCH/upd.out" 2>&1 &&
	fail "scontrol update to 3 nodes was accepted: $(cat "$SCRATCH/upd.out")"
scontrol show job "$rest_job" | grep -q 'NumNodes=4' || fail "job $rest_job changed although refused"
scontrol update jobid="$rest_job" timelimit=01:00:00 > "$SCRATCH/upd2.out" 2>&1 ||
	fail "an update of the time limit alone was refused: $(cat "$SCRATCH/upd2.out")"
pass "scontrol update to 3 nodes refused (TP x PP does not divide 24 GPUs); a time limit update goes through"
scancel "$rest_job"
rest_stop

# ---- an exempt default account ------------------------------------------------
if [ -n "$accounting" ]; then
	sub advfree "$BYPASS" bad free-bad
	free_job=$(jobid_of free-bad)
	[ -n "$free_job" ] || fail "the exempt user's job was refused: $(cat "$SCRATCH/free-bad.err")"
	free_id=$(newest job_submit)
	decisions | jq -e --arg id "$free_id" '.decisions[] | select(.id == $id) | .exempt == "account llm-free" and .user == "advfree"' \
		> /dev/null || fail "decision $free_id is not advfree's exempt one: $(decisions | jq -c '.decisions[0]')"
	case $(admin_comment "$free_job") in
	"advisor: decision $free_id "*) ;;
	*) fail "job $free_job AdminComment '$(admin_comment "$free_job")'" ;;
	esac
	scancel "$free_job"
	# slurmctld sends the job to slurmdbd; sacct shows the comment.
	in_sacct() { sacct -n -X -P -j "$free_job" -o AdminComment 2> /dev/null | grep -q "advisor: decision $free_id"; }
	wait_until -s "sacct -X -j $free_job -o JobID,State,AdminComment" 30 "sacct to show job $free_job's AdminComment" in_sacct
	pass "advfree's default account llm-free is exempt without -A (decision $free_id); sacct -o AdminComment shows it"
else
	echo "SKIP: exempt default account and sacct (no slurmdbd or MariaDB)"
fi

# ---- advisord hung or stopped -------------------------------------------------
budget_ms=300
js_lua "$budget_ms" allow
ms_now() { date +%s%3N; }
# The time of a submission that advisor skips (no GPU, no launcher): the
# same client, slurmctld and Lua, without a daemon round trip.
t0=$(ms_now)
(cd "$SCRATCH" && as_user advrest env SLURM_CONF="$BYPASS" sbatch -J plain -H -o /dev/null --wrap true) \
	> /dev/null 2>&1 || fail "a plain job was refused"
base_ms=$(($(ms_now) - t0))
kill -STOP "$DAEMON_PID"
t0=$(ms_now)
sub advrest "$BYPASS" good hung-good -H -A research
hung_ms=$(($(ms_now) - t0))
# slurmctld answers meanwhile: another submission waits on the daemon.
sub advrest "$BYPASS" good hung-bg -H -A research &
bg=$!
timeout 10 squeue -h > /dev/null || fail "squeue did not answer while job_submit waited"
wait "$bg"
kill -CONT "$DAEMON_PID"
hung_job=$(jobid_of hung-good)
[ -n "$hung_job" ] || fail "with advisord hung the job was refused: $(cat "$SCRATCH/hung-good.err")"
case $(admin_comment "$hung_job") in
"advisor: not checked ("*) ;;
*) fail "job $hung_job AdminComment '$(admin_comment "$hung_job")', want 'advisor: not checked (...)'" ;;
esac
lax=1
[ -z "${ADVISOR_LAX_TIMING:-}" ] || lax=5
[ "$hung_ms" -le $((base_ms + budget_ms + 2000 * lax)) ] ||
	fail "with advisord hung a submission took $hung_ms ms (plain $base_ms ms, budget $budget_ms ms)"
pass "advisord hung: the job queued in $hung_ms ms (plain job $base_ms ms, budget $budget_ms ms) with '$(admin_comment "$hung_job")'; squeue answered meanwhile"

stop_daemon
sub advrest "$BYPASS" good down-good -H -A research
down_job=$(jobid_of down-good)
[ -n "$down_job" ] || fail "with advisord stopped the job was refused: $(cat "$SCRATCH/down-good.err")"
grep -q 'advisor: daemon unavailable at' "$SCRATCH/down-good.err" ||
	fail "the user was not told the job was not checked: $(cat "$SCRATCH/down-good.err")"
js_lua "$budget_ms" deny
sub advrest "$BYPASS" good deny-good -H -A research
[ "$(cat "$SCRATCH/deny-good.rc")" -ne 0 ] && ! queued deny-good ||
	fail "on_unavailable=deny let the job through with advisord stopped"
grep -q 'on_unavailable=deny' "$SCRATCH/deny-good.err" ||
	fail "the refusal does not say why: $(cat "$SCRATCH/deny-good.err")"
pass "advisord stopped: queued unchecked (on_unavailable=allow), refused with on_unavailable=deny"
scancel -u advrest 2> /dev/null
exit 0
