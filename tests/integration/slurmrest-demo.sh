#!/bin/sh
# slurmrest-demo.sh - slurmrest.sh by hand (issue 31; in no Makefile): a
# private cluster whose job_submit.lua refuses jobs named "bad" with
# slurm.log_user("advisor: test rejection") and gives the others the
# AdminComment "advisor: seen"; slurmrestd in front of it; one bad job and
# one good held job submitted through it.  Prints the refusal's text and
# the good job's AdminComment, and takes everything down again.  As root:
#
#   tests/integration/slurmrest-demo.sh
#
# DEMO_PORT (default 32400) is the cluster's first port (it uses 8).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"
# shellcheck source=tests/integration/slurmrest.sh
. "$here/slurmrest.sh"

[ "$(id -u)" -eq 0 ] || skip_all "run as root (scripts/cluster, test user)"
scratch_dir

demo_cleanup() {
	rest_stop
	"$top_srcdir/scripts/cluster" stop > /dev/null 2>&1 || :
	# Job processes slurmd started, if any, and the like.
	end_by_path "$SCRATCH"
	cleanup
}
trap demo_cleanup EXIT

cat > "$SCRATCH/job_submit.lua" <<'EOT'
function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.name == "bad" then
    slurm.log_user("advisor: test rejection")
    return slurm.ERROR
  end
  job_desc.admin_comment = "advisor: seen"
  return slurm.SUCCESS
end
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end
return slurm.SUCCESS
EOT

export CLUSTER_DIR="$SCRATCH/cluster" CLUSTER_PORT="${DEMO_PORT:-32400}"
export CLUSTER_JOB_SUBMIT="$SCRATCH/job_submit.lua"
"$top_srcdir/scripts/cluster" start || fail "the private cluster did not start"
export SLURM_CONF="$CLUSTER_DIR/slurm.conf"

rest_start "$SCRATCH/rest"
echo "slurmrestd $(slurmrestd -V 2>&1 | head -n 1): $REST_PLUGINS, $REST_API ($REST_STYLE), pid $REST_PID"

rest_spec "$SCRATCH/bad.json" name=bad partition=h100 gres=gpu:h100:2 nodes=1 hold=true
rest_spec "$SCRATCH/good.json" name=good partition=h100 gres=gpu:h100:2 nodes=1 hold=true \
	account=advtest env=PATH=/usr/bin:/bin,ADVISOR_DEMO=1

if id=$(rest_submit "$REST_USER" "$SCRATCH/bad.json" "$SCRATCH/bad.out"); then
	fail "the bad job was accepted as job $id"
fi
echo "bad job refused (HTTP $(rest_http "$SCRATCH/bad.out")); the user is told:"
rest_error "$SCRATCH/bad.out" | sed 's/^/    /'
rest_error "$SCRATCH/bad.out" | grep -qx 'advisor: test rejection' ||
	fail "no 'advisor: test rejection' in what the refusal says"

id=$(rest_submit "$REST_USER" "$SCRATCH/good.json" "$SCRATCH/good.out") || {
	rest_error "$SCRATCH/good.out" >&2
	fail "the good job was refused (HTTP $(rest_http "$SCRATCH/good.out"))"
}
echo "good job accepted as job $id (HTTP $(rest_http "$SCRATCH/good.out")); the response also says:"
rest_error "$SCRATCH/good.out" | sed 's/^/    /'
scontrol show job "$id" > "$SCRATCH/job" || fail "scontrol show job $id"
grep -E 'UserId|JobState|AdminComment|TresPerNode|Account' "$SCRATCH/job" | sed 's/^ */    /'
grep -q 'AdminComment=advisor: seen' "$SCRATCH/job" || fail "job $id has no AdminComment 'advisor: seen'"
scancel "$id"
pass "slurmrestd demo"
