#!/bin/sh
# advisorctl audit (issue 30): past jobs judged with a candidate policy, on
# the private Slurm cluster (scripts/cluster) with real accounting: a
# slurmdbd on a private mariadbd (lib.sh mariadb_start) keeping the batch
# scripts and environments (AccountingStoreFlags=job_script,job_env).  The
# plugin is not loaded, so every job runs, as before a rollout; then:
#  - tests/jobs/03 (torchtitan 405B on one node: MEM_OVER_CAPACITY when
#    enforcing), whose config file the audit reads from the job's working
#    directory, is listed as reject under the enforcing policy and warn under
#    the shipped one, with its real state (FAILED: there is no torchrun);
#  - a GPU job that is not an LLM job is accept, COMPLETED, with its GPUs
#    and GPU-hours from AllocTRES;
#  - a job with no batch script (srun) is listed as "no script stored";
#  - --json gives the same rows and the summary; --user, --partition and
#    --limit narrow the list;
#  - without sacct, or with a Slurm that has no accounting, audit says so
#    and exits 69.
# Skips (77) when not root, or when Slurm, slurmdbd, munge or MariaDB are
# not installed, or when ADVISOR_SKIP_SLURM is set.
. "$(dirname "$0")/lib.sh"

[ -z "${ADVISOR_SKIP_SLURM:-}" ] && [ "$(id -u)" -eq 0 ] ||
	skip_all "needs root and a private Slurm cluster (or ADVISOR_SKIP_SLURM is set)"
for b in slurmctld slurmd slurmdbd sbatch srun squeue sacct sacctmgr munged mariadbd \
	mariadb-install-db mariadb-admin jq; do
	command -v "$b" > /dev/null 2>&1 ||
		skip_all "$b not found (Debian packages slurm-wlm, slurmdbd, munge, mariadb-server, jq)"
done

scratch_dir
CLUSTER_DIR=$SCRATCH/cluster
mkdir -p "$CLUSTER_DIR"
chmod 755 "$CLUSTER_DIR"
# A free block of 8 ports (slurmctld, 6 slurmd, slurmdbd), as test_slurm.sh.
port_free() {
	! ss -tanH 2> /dev/null | awk '{print $4}' | sed 's/.*://' |
		awk -v p="$1" '$1 >= p && $1 <= p + 7 { found = 1 } END { exit !found }'
}
CLUSTER_PORT=${ADVISOR_TEST_PORT:-$((24000 + ($$ % 4000) * 10))}
while ! port_free "$CLUSTER_PORT"; do CLUSTER_PORT=$((CLUSTER_PORT + 10)); done
export CLUSTER_DIR CLUSTER_PORT
export SLURM_CONF=$CLUSTER_DIR/slurm.conf

audit_cleanup() {
	rc=$?
	"$top_srcdir/scripts/cluster" stop > /dev/null 2>&1 || :
	# slurmstepd and job tasks name the cluster's directory.
	end_by_path "$CLUSTER_DIR"
	[ "$rc" -eq 0 ] || { echo "--- slurmdbd log"; tail -n 20 "$CLUSTER_DIR/log/slurmdbd.log" 2> /dev/null; }
	cleanup
}
trap audit_cleanup EXIT

mariadb_start "$SCRATCH/mariadb"
DBPW=slurmdbd-test-pw
mariadb_sql <<EOT || fail "cannot create the slurmdbd user"
CREATE USER 'slurm'@'%' IDENTIFIED BY '$DBPW';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'%';
EOT
CLUSTER_DB_PORT=$MARIADB_PORT CLUSTER_DB_USER=slurm CLUSTER_DB_PASS=$DBPW \
	"$top_srcdir/scripts/cluster" start > "$SCRATCH/cluster.out" 2>&1 ||
	fail "scripts/cluster start: $(cat "$SCRATCH/cluster.out")"
[ "$(stat -c '%a %U' "$CLUSTER_DIR/slurmdbd.conf")" = "600 root" ] ||
	fail "slurmdbd.conf is not 0600 root"
pass "cluster up with slurmdbd on MariaDB"

# The jobs, submitted as a user would, from their directories.
jobs=$SCRATCH/jobs
mkdir -p "$jobs/ok"
cp -R "$top_srcdir/tests/jobs/03-torchtitan-405b-one-node" "$jobs/titan"
cat > "$jobs/ok/job.sbatch" <<'EOT'
#!/bin/sh
#SBATCH --job-name=adv-audit-ok
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:2
#SBATCH --partition=h100
# A GPU job that is not an LLM job: nothing for advisor to say.
sleep 1
echo done
EOT
chmod -R a+rX "$jobs"
submit() { (cd "$1" && sbatch -o "$SCRATCH/$2.out" job.sbatch) | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p'; }
titan=$(submit "$jobs/titan" titan)
ok=$(submit "$jobs/ok" ok)
[ -n "$titan" ] && [ -n "$ok" ] || fail "sbatch did not submit the jobs"
srun_id=$(timeout 60 srun -N1 -p h200 -J adv-audit-srun sh -c 'echo $SLURM_JOB_ID' 2> /dev/null) ||
	fail "srun failed"
# Ended, and the end recorded in slurmdbd (slurmctld sends it on).
ended() {
	for j in "$titan" "$ok" "$srun_id"; do
		s=$(sacct -n -X -P -o State -j "$j" 2> /dev/null)
		case $s in COMPLETED | FAILED* | CANCELLED* | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) ;; *) return 1 ;; esac
	done
}
wait_until -s "sacct -a -X -o JobID,JobName,State" 90 "the jobs to end in sacct" ended
pass "jobs $titan (titan), $ok (ok) and $srun_id (srun) ran and are in slurmdbd"

enforcing_policy "$SCRATCH/enforce.yaml"
audit() { "$ADVISORCTL" --catalog "$CATALOG" "$@"; }
# sacct -j can see a job before a period query (-S) does: slurmdbd may
# index the end a moment later.  What audit must do is list the three.
audit_lists_all() {
	audit --policy "$SCRATCH/enforce.yaml" audit --since 1h > "$SCRATCH/audit.txt" 2> "$SCRATCH/audit.err" &&
		grep -q '^3 jobs' "$SCRATCH/audit.txt"
}
wait_until -s 'cat "$SCRATCH/audit.txt" "$SCRATCH/audit.err"' 30 "audit to list the 3 jobs" audit_lists_all
cat "$SCRATCH/audit.txt" | sed 's/^/# /'
row() { awk -v id="$1" '$1 == id' "$SCRATCH/audit.txt"; }
row "$titan" | grep -Eq "^$titan +root +h100 +8 +[0-9.]+ +FAILED +[0-9]+:[0-9]+ +reject +MEM_OVER_CAPACITY" ||
	fail "the torchtitan job is not listed as a FAILED reject with MEM_OVER_CAPACITY: $(row "$titan")"
row "$ok" | grep -Eq "^$ok +root +h100 +2 +0\.[0-9]+ +COMPLETED +0:0 +accept +-\$" ||
	fail "the non-LLM job is not listed as a COMPLETED accept on 2 GPUs: $(row "$ok")"
row "$srun_id" | grep -Eq "^$srun_id +root +h200 .* - +no script stored\$" ||
	fail "the srun job is not listed as 'no script stored': $(row "$srun_id")"
grep -Eq '^3 jobs, 2 judged: 1 accept, 0 warn, 1 reject, 0 exempt; 1 not judged$' "$SCRATCH/audit.txt" ||
	fail "summary counts"
grep -Eq '^The jobs advisor would reject ended: FAILED 1$' "$SCRATCH/audit.txt" ||
	fail "summary: how the rejected jobs ended"
pass "audit with the enforcing policy: reject, accept, no script stored, and the summary"

# The shipped policy (warn): the same job is a warning, a candidate policy
# changes the verdict, not the jobs.
audit --policy "$top_srcdir/etc/policy.yaml" audit --since 1h > "$SCRATCH/warn.txt" ||
	fail "audit with the shipped policy"
awk -v id="$titan" '$1 == id' "$SCRATCH/warn.txt" | grep -q " warn  *MEM_OVER_CAPACITY" ||
	fail "the shipped policy does not warn on the torchtitan job"
pass "audit with the shipped policy: warn"

audit --policy "$SCRATCH/enforce.yaml" --json audit --since 1h > "$SCRATCH/audit.json" ||
	fail "audit --json"
jq -e --arg t "$titan" --arg o "$ok" --arg s "$srun_id" '
	(.jobs | length == 3)
	and (.jobs[] | select(.job_id == $t) | .verdict == "reject" and .state == "FAILED"
		and .gpus == 8 and (.codes | index("MEM_OVER_CAPACITY")) != null)
	and (.jobs[] | select(.job_id == $o) | .verdict == "accept" and .state == "COMPLETED" and .gpu_hours > 0)
	and (.jobs[] | select(.job_id == $s) | .judged == false and .why == "no script stored")
	and .summary.judged == 2 and .summary.by_verdict.reject == 1
	and .summary.rejected_ended.FAILED == 1 and .summary.truncated == false' \
	"$SCRATCH/audit.json" > /dev/null || fail "audit --json: $(cat "$SCRATCH/audit.json")"
pass "audit --json: the rows and the summary"

audit --policy "$SCRATCH/enforce.yaml" audit --since 1h --partition h200 > "$SCRATCH/part.txt" ||
	fail "audit --partition"
grep -Eq '^1 job, 0 judged' "$SCRATCH/part.txt" || fail "--partition h200: $(cat "$SCRATCH/part.txt")"
audit --policy "$SCRATCH/enforce.yaml" audit --since 1h --limit 1 > "$SCRATCH/limit.txt" ||
	fail "audit --limit"
grep -Eq '^1 job,' "$SCRATCH/limit.txt" && grep -q '^More jobs than --limit' "$SCRATCH/limit.txt" ||
	fail "--limit 1: $(cat "$SCRATCH/limit.txt")"
audit --policy "$SCRATCH/enforce.yaml" audit --since 1h --user nobody > "$SCRATCH/user.txt" ||
	fail "audit --user"
grep -Eq '^0 jobs,' "$SCRATCH/user.txt" || fail "--user nobody: $(cat "$SCRATCH/user.txt")"
pass "--partition, --limit and --user narrow the list"

# No sacct on PATH; a Slurm without accounting: 69 and why.
PATH=/nonexistent "$ADVISORCTL" --catalog "$CATALOG" --policy "$SCRATCH/enforce.yaml" audit \
	> /dev/null 2> "$SCRATCH/nosacct.err"
[ $? -eq 69 ] && grep -q "needs Slurm's sacct" "$SCRATCH/nosacct.err" || fail "no sacct: $(cat "$SCRATCH/nosacct.err")"
grep -v '^Accounting' "$SLURM_CONF" > "$SCRATCH/noacct.conf"
SLURM_CONF=$SCRATCH/noacct.conf "$ADVISORCTL" --catalog "$CATALOG" --policy "$SCRATCH/enforce.yaml" audit \
	> /dev/null 2> "$SCRATCH/noacct.err"
[ $? -eq 69 ] && grep -q "audit reads the jobs from slurmdbd" "$SCRATCH/noacct.err" ||
	fail "no accounting: $(cat "$SCRATCH/noacct.err")"
pass "without sacct or accounting: exit 69, and why"
