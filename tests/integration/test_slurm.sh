#!/bin/sh
# The SPANK plugin on a real Slurm cluster: a private slurmctld with six
# slurmd (gpu[1-4]: 8 fake H100 each, partitions h100 and debug; gpu[5-6]:
# 8 fake H200 each, partition h200) and a private advisord, all in a scratch
# directory on non-default ports (scripts/cluster).  Every case runs real
# sbatch, salloc or srun and checks the exit status, what the user saw on
# stderr, and what the job saw in its environment.
#
# Skips (77) only when not root or when Slurm/munge are not installed, or
# when ADVISOR_SKIP_SLURM is set (make distcheck runs without a cluster).
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# For spawn, wait_until, stop_pid and end_by_path (issue 25); this test's
# own fail, pass, run, start_daemon... below replace lib.sh's.
. "$(dirname "$0")/lib.sh"

skip() { echo "SKIP: $*"; exit 77; }
[ -z "${ADVISOR_SKIP_SLURM:-}" ] || skip "ADVISOR_SKIP_SLURM is set"
[ "$(id -u)" -eq 0 ] || skip "needs root to run a private Slurm cluster (slurmd, munged)"
for b in slurmctld slurmd sbatch salloc srun squeue sinfo munged nm; do
	command -v "$b" >/dev/null 2>&1 || skip "$b not found (Debian packages slurm-wlm, munge, binutils)"
done

plugin=$top_builddir/plugin/.libs/spank_advisor.so
advisord=$top_builddir/daemon/advisord
advisorctl=$top_builddir/daemon/advisorctl
for f in "$plugin" "$advisord" "$advisorctl"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done

CLUSTER_DIR=$(mktemp -d /tmp/advisor-slurm-test.XXXXXX)
# A free block of 7 ports (slurmctld + 6 slurmd): several test runs (e.g.
# two build directories) may share the machine.  Any socket counts, not only
# listeners: slurmd cannot bind a port an earlier run left in TIME-WAIT.
port_free() { ! ss -tanH 2>/dev/null | awk '{print $4}' | grep -Eq ":($1|$(($1 + 1))|$(($1 + 2))|$(($1 + 3))|$(($1 + 4))|$(($1 + 5))|$(($1 + 6)))\$"; }
CLUSTER_PORT=${ADVISOR_TEST_PORT:-$((20000 + ($$ % 4000) * 10))}
while ! port_free "$CLUSTER_PORT"; do CLUSTER_PORT=$((CLUSTER_PORT + 10)); done
export CLUSTER_DIR CLUSTER_PORT
export SLURM_CONF=$CLUSTER_DIR/slurm.conf
sock=$CLUSTER_DIR/advisord.sock
export ADVISOR_SOCKET=$sock
out=$CLUSTER_DIR/out
mkdir -p "$out"
chmod 755 "$CLUSTER_DIR"
daemon_pid=
failures=0
cases=0
current=setup
last=

stop_daemon() {
	if [ -n "$daemon_pid" ] && running "$daemon_pid"; then
		stop_pid "$daemon_pid" TERM 10 advisord
	fi
	daemon_pid=
}

cleanup() {
	rc=$?
	stop_daemon
	"$top_srcdir/scripts/cluster" stop >/dev/null 2>&1 || :
	# scripts/cluster stop ends slurmctld and slurmd, not the job steps
	# still running (slurmstepd and its tasks): they name this directory.
	end_by_path "$CLUSTER_DIR"
	# What this test spawned: the daemons, the hung listener.
	end_spawned
	if [ "$failures" -ne 0 ] || [ "$rc" -ne 0 ]; then
		echo "---- logs kept in $CLUSTER_DIR"
		tail -n 20 "$CLUSTER_DIR/advisord.log" 2>/dev/null
	else
		rm -rf "$CLUSTER_DIR"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cluster_policy "$CLUSTER_DIR/policy.yaml"

start_daemon() {
	rm -f "$sock"
	spawn "$advisord" -f -c "$top_srcdir/etc/catalog.yaml" -p "$CLUSTER_DIR/policy.yaml" \
		-s "$sock" -d "$CLUSTER_DIR/decisions.db" >> "$CLUSTER_DIR/advisord.log" 2>&1
	daemon_pid=$!
	wait_until -p "$daemon_pid" 10 "advisord to answer on $sock" daemon_answers ||
		{ echo "FAIL: advisord did not start"; cat "$CLUSTER_DIR/advisord.log"; exit 1; }
}
daemon_answers() { [ -S "$sock" ] && "$advisorctl" --socket "$sock" status >/dev/null 2>&1; }

plugstack() {
	printf 'required %s socket=%s %s\n' "$plugin" "$sock" "$*" > "$CLUSTER_DIR/plugstack.conf"
}

# run NAME CMD...: stdout, stderr and status of one command, bounded in time.
run() {
	name=$1; shift
	timeout 60 "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
	status=$?
	last=$name
}

fail() {
	failures=$((failures + 1))
	echo "FAIL [$current]: $*"
	for f in "$out/$last.stderr" "$out/$last.stdout"; do
		[ -s "$f" ] && { echo "  --- $f"; sed 's/^/  | /' "$f" | head -n 30; }
	done
}

begin() { current=$1; cases=$((cases + 1)); case_failures=$failures; }
pass() {
	if [ "$failures" -eq "$case_failures" ]; then echo "ok $cases - $current"
	else echo "not ok $cases - $current"; fi
}

expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"; }
expect_status_not() { [ "$status" -ne "$1" ] || fail "exit status $status, expected anything else"; }
expect_err() { grep -qF -- "$1" "$out/$last.stderr" || fail "stderr lacks '$1'"; }
expect_no_err() { ! grep -qF -- "$1" "$out/$last.stderr" || fail "stderr has '$1'"; }
expect_file() { grep -qF -- "$2" "$1" 2>/dev/null || { fail "$(basename "$1") lacks '$2'"; [ -f "$1" ] && sed 's/^/  | /' "$1" | head -n 20; }; }
no_job_named() {
	[ -z "$(squeue -h --states=all -n "$1" -o %i 2>/dev/null)" ] || fail "a job named $1 exists"
}
job_id() { sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$out/$last.stdout"; }
wait_job() {
	wait_until -s "squeue -j $1" 60 "job $1 to leave the queue" job_gone "$1"
}
job_gone() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
# Nodes back to idle once the queue has drained: a drained or down node
# stays so, while a node still finishing the last job (mix, comp) gets
# there within the wait.
all_idle() {
	wait_until -s 'echo "$bad"; squeue' 60 "the nodes to settle (idle, or drained with an empty queue)" nodes_settled ||
		return 1
	[ -z "$bad" ] || fail "nodes not idle: $bad"
}
nodes_settled() {
	# A node the backfill scheduler planned for a heterogeneous job (Slurm
	# starts those from backfill only) stays "plnd" after it ran, until a
	# later pass with a pending job: with an empty queue it is idle.
	bad=$(sinfo -h -N -o '%N %t' | awk '$2 != "idle" && $2 != "plnd"' | sort -u)
	[ -z "$bad" ] || [ -z "$(squeue -h -o %i 2>/dev/null)$(echo "$bad" | grep -E 'mix|alloc|comp')" ]
}

# ---------------------------------------------------------------- setup
"$top_srcdir/scripts/cluster" start "$plugin" > "$out/cluster.log" 2>&1 || {
	cat "$out/cluster.log"; echo "FAIL: cannot start the private cluster"; exit 1; }
start_daemon
plugstack timeout_ms=2000
cd "$CLUSTER_DIR" || exit 1

good="--llm-model=llama3-70b --llm-layout=tp8,pp4 --llm-zero=1"

# ---------------------------------------------------------------- cases
begin "plugin exports only the SPANK symbols"
syms=$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort | tr '\n' ' ')
case $syms in
"plugin_name plugin_type plugin_version slurm_spank_"*) ;;
*) fail "exported: $syms" ;;
esac
extra=$(nm -D --defined-only "$plugin" | awk '{print $3}' |
	grep -v -E '^(slurm_spank_[a-z_]+|plugin_name|plugin_type|plugin_version|spank_plugin_version)$')
[ -z "$extra" ] || fail "exports more than SPANK symbols: $extra"
pass

begin "--llm-* options listed in sbatch --help"
run help sbatch --help
expect_status 0
grep -q -- '--llm-layout' "$out/help.stdout" || fail "--llm-layout not in sbatch --help"
grep -q -- 'bf16, fp16, fp8 or fp32' "$out/help.stdout" || fail "accepted precisions not in --help"
pass

begin "bad option value names the option and the accepted values"
run badopt sbatch -N1 --gres=gpu:8 --llm-precision=fp12 --wrap true
expect_status_not 0
expect_err "--llm-precision"
expect_err "bf16"
pass

begin "accepted job: silent, and the job sees ADVISOR_VERDICT and ADVISOR_LAYOUT"
run accept sbatch -J adv-accept -N4 --gres=gpu:8 $good -o "$out/accept.job" \
	--wrap 'env | grep -E "^(SLURM_SPANK_)?ADVISOR_" | sort'
expect_status 0
expect_no_err "advisor:"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/accept.job" "ADVISOR_VERDICT=accept"
expect_file "$out/accept.job" "ADVISOR_LAYOUT=tp8.pp4."
expect_file "$out/accept.job" "ADVISOR_DECISION_ID=d-"
expect_file "$out/accept.job" "SLURM_SPANK_ADVISOR_DECISION_ID=d-"
expect_file "$out/accept.job" "ADVISOR_MEM_GIB="
pass

begin "layout that does not divide the GPUs: rejected at sbatch with the fix, no job"
run badlayout sbatch -J adv-badlayout -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp8,pp3 --wrap true
expect_status 1
expect_err "advisor: job rejected"
expect_err "GPU_COUNT_MISMATCH"
expect_err "advisor:   fix: request 24 or 48 GPUs"
expect_err "init_post_opt() failed"
no_job_named adv-badlayout
pass

begin "tensor parallel size that does not divide the heads: the fix names a layout"
run badtp sbatch -J adv-badtp -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 --wrap true
expect_status 1
expect_err "TP_NOT_DIVIDE_HEADS"
expect_err "fix: --llm-layout=tp4"
no_job_named adv-badtp
pass

begin "model that does not fit: rejected with a fitting alternative"
run nofit sbatch -J adv-nofit -N1 --gres=gpu:8 --llm-model=llama3-405b --llm-layout=tp8 --wrap true
expect_status 1
expect_err "MEM_OVER_CAPACITY"
expect_err "fix: request at least"
no_job_named adv-nofit
pass

begin "the sbatch examples of README.md and spank_advisor(8) print what the docs show (issue 30)"
# As test_docs.sh does for advisorctl: docexamples makes a cram test of each
# "$ sbatch ..." example and the lines the docs show after it; decision ids
# are matched by their shape, the exit status by the "$ echo $?" shown.
cram_bin=$(command -v cram3 || command -v cram || :)
if [ -z "$cram_bin" ]; then
	fail "cram is needed (Debian package python3-cram)"
else
	printf 'printf "#!/bin/sh\\ntrue\\n" > train.sh; chmod +x train.sh\n' > "$out/docs.prelude"
	"$top_srcdir/tests/integration/docexamples" --only sbatch --prelude "$out/docs.prelude" \
		"$top_srcdir/README.md" "$top_builddir/man/spank_advisor.8" > "$out/docs.t" 2> "$out/docs.stderr" ||
		fail "docexamples: $(cat "$out/docs.stderr")"
	run docs "$cram_bin" "$out/docs.t"
	# The whole diff: fail shows only the first lines of the output.
	[ "$status" -eq 0 ] || { sed 's/^/  | /' "$out/docs.stdout"; last=docs.prelude
		fail "the docs' sbatch examples differ from what runs (- shown, + got): above"; }
fi
pass

begin "warn-mode partition lets the same job through with warnings"
run warnpart sbatch -J adv-warn -p debug -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 \
	-o "$out/warn.job" --wrap 'echo verdict=$ADVISOR_VERDICT'
expect_status 0
expect_err "advisor: job accepted with warnings"
expect_err "warning: TP_NOT_DIVIDE_HEADS"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/warn.job" "verdict=warn"
pass

begin "-p debug,h100: the strictest listed mode (h100's enforce) applies, and the message names it; other GPUs in a listed partition are said (issue 20)"
for res in slurm parse; do
	plugstack timeout_ms=2000 resources=$res
	run "partlist_$res" sbatch -J adv-partlist -p debug,h100 -N4 --gres=gpu:8 --llm-model=llama3-70b \
		--llm-layout=tp3 --wrap true
	expect_status 1
	expect_err "advisor: job rejected"
	expect_err "[enforce mode, set by partition h100 of -p debug,h100]"
	# Other GPUs in a listed partition (h200's from Slurm): said, judged on the first's.
	run "partgpu_$res" sbatch -J adv-partlist -p h100,h200 -N4 --gres=gpu:8 --llm-model=llama3-70b \
		--llm-layout=tp3 --wrap true
	expect_status 1
	expect_err "PARTITION_GPUS_DIFFER: -p h100,h200: judged on h100-sxm of partition h100, the first listed; the job may also start in h200 (h200)"
done
no_job_named adv-partlist
plugstack timeout_ms=2000
pass

begin "exempt: accounts applies to sbatch (-A, SBATCH_ACCOUNT, #SBATCH --account), salloc and srun, and on the node (issue 20)"
bad="-p h100 -N1 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3"
cat > "$CLUSTER_DIR/acct.sbatch" <<'EOF'
#!/bin/sh
#SBATCH --account=llm-free
echo "ran=$SLURM_JOB_ACCOUNT"
EOF
# Without the account the same job is rejected.
run acct_none sbatch -J adv-acct-none $bad --wrap true
expect_status 1
no_job_named adv-acct-none
for res in slurm parse; do
	plugstack timeout_ms=2000 resources=$res
	for how in opt env script; do
		case $how in
		opt) run "acct_${how}_$res" sbatch -J adv-acct -A llm-free $bad -o "$out/acct_$how$res.job" \
			--wrap 'echo "ran=$SLURM_JOB_ACCOUNT"' ;;
		env) run "acct_${how}_$res" env SBATCH_ACCOUNT=llm-free sbatch -J adv-acct $bad \
			-o "$out/acct_$how$res.job" --wrap 'echo "ran=$SLURM_JOB_ACCOUNT"' ;;
		script) run "acct_${how}_$res" sbatch -J adv-acct $bad -o "$out/acct_$how$res.job" \
			"$CLUSTER_DIR/acct.sbatch" ;;
		esac
		expect_status 0
		expect_no_err "rejected"
		id=$(job_id); [ -n "$id" ] && wait_job "$id"
		# The node's check in task_init exempts it too (SLURM_JOB_ACCOUNT).
		expect_file "$out/acct_$how$res.job" "ran=llm-free"
	done
	run "acct_salloc_$res" salloc -J adv-acct -A llm-free $bad true
	expect_status 0
	expect_no_err "rejected"
	# Accounts compare without case, as Slurm stores them in lower case.
	run "acct_srun_$res" srun -J adv-acct -A LLM-free $bad true
	expect_status 0
	expect_no_err "rejected"
	run "acct_srunenv_$res" env SLURM_ACCOUNT=llm-free srun -J adv-acct $bad true
	expect_status 0
	expect_no_err "rejected"
done
plugstack timeout_ms=2000
pass

begin "job described by #SBATCH lines only"
cat > "$CLUSTER_DIR/good.sbatch" <<EOF
#!/bin/sh
# a Llama 3 70B pretraining job
#SBATCH -J adv-script
#SBATCH --nodes=4
#SBATCH --gres=gpu:h100:8
#SBATCH --llm-model=llama3-70b
#SBATCH --llm-layout=tp8,pp4
#SBATCH --llm-zero=1
#SBATCH -o $out/script.job
env | grep ^ADVISOR_
EOF
sed -e 's/tp8,pp4/tp8,pp3/' -e 's/adv-script/adv-script-bad/' "$CLUSTER_DIR/good.sbatch" > "$CLUSTER_DIR/bad.sbatch"
run script sbatch "$CLUSTER_DIR/good.sbatch"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/script.job" "ADVISOR_LAYOUT=tp8.pp4."
run scriptbad sbatch "$CLUSTER_DIR/bad.sbatch"
expect_status 1
expect_err "32 GPUs cannot be split"
no_job_named adv-script-bad
run scriptstdin sh -c "sbatch < '$CLUSTER_DIR/bad.sbatch'"
expect_status 1
expect_err "32 GPUs cannot be split"
pass

begin "--gpus, --gres, --gpus-per-node, -G and SBATCH_GPUS_PER_NODE forms give the same 32 GPUs"
for form in "-N4 --gpus=32" "-N4 --gres=gpu:h100:8" "-N 4 --gres gres:gpu:8" "-N4 --gpus-per-node=8" \
	"-N4 -G 32" "-n 32 --ntasks-per-node=8 --gpus-per-task=1"; do
	# shellcheck disable=SC2086
	run form sbatch -J adv-form $form --llm-model=llama3-70b --llm-layout=tp8,pp3 --wrap true
	expect_status 1
	expect_err "32 GPUs cannot be split"
done
run formenv env SBATCH_GPUS_PER_NODE=h100:8 sbatch -J adv-form -N4 --llm-model=llama3-70b \
	--llm-layout=tp8,pp3 --wrap true
expect_status 1
expect_err "32 GPUs cannot be split"
no_job_named adv-form
pass

begin "H200 partition: GPU type from the live cluster's Gres"
# ZeRO 0 and fp32 gradients stated (issue 26): a reject rests only on what
# the job states.
run h200 sbatch -J adv-h200 -p h200 -N1 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp8 \
	--llm-zero=0 --llm-grad-dtype=fp32 --wrap true
expect_status 1
expect_err "usable on h200"
pass

begin "advisorctl --local and the daemon take the partition's GPU type from Slurm alike"
# issue 21: the same code (daemon/service/slurmgres.c) asks slurmctld in
# both; no --gpu: the default partition (h100, Gres=gpu:h100:8) and h200
# (no gpu: in the policy, Gres=gpu:h200:8).
for p in default h200; do
	popt=
	[ "$p" = default ] || popt="-p $p"
	# shellcheck disable=SC2086
	run "gpu_daemon_$p" "$advisorctl" --socket "$sock" --json check $popt --gpus 8 --model llama3-8b
	# shellcheck disable=SC2086
	run "gpu_local_$p" "$advisorctl" --local --catalog "$top_srcdir/etc/catalog.yaml" \
		--policy "$CLUSTER_DIR/policy.yaml" --json check $popt --gpus 8 --model llama3-8b
	for w in daemon local; do
		f=$out/gpu_${w}_$p.stdout
		jq -e '[.findings[].code] | index("GPU_TYPE_UNKNOWN") == null' "$f" > /dev/null 2>&1 ||
			fail "$w, partition $p: GPU type not taken from Slurm: $(jq -c '.findings' "$f" 2>/dev/null)"
	done
	d=$(jq -c '.memory.capacity_gib' "$out/gpu_daemon_$p.stdout" 2>/dev/null)
	l=$(jq -c '.memory.capacity_gib' "$out/gpu_local_$p.stdout" 2>/dev/null)
	want=79.65
	[ "$p" = h200 ] && want=140.4
	[ "$d" = "$want" ] && [ "$l" = "$want" ] ||
		fail "partition $p: GPU memory daemon $d, --local $l, expected $want (the partition's GPU)"
done
pass

begin "configless Slurm: no slurm.conf, the configuration fetched from slurmctld, the same GPU types"
# issue 30: a site running configless (SlurmctldParameters=enable_configless)
# has no slurm.conf on the advisor host.  libslurm then fetches the
# configuration from the slurmctld that SLURM_CONF_SERVER (or a DNS SRV
# record) names; advisord does so in a child (slurmgres.c).  The default
# /etc/slurm/slurm.conf would come first, as it does for Slurm's commands.
if [ -e /etc/slurm/slurm.conf ] || [ -e /run/slurm/conf/slurm.conf ]; then
	echo "# skipped: this machine has a slurm.conf of its own, which libslurm takes first"
else
	csock=$CLUSTER_DIR/configless.sock
	env -u SLURM_CONF SLURM_CONF_SERVER="127.0.0.1:$CLUSTER_PORT" \
		"$advisord" --check-config -c "$top_srcdir/etc/catalog.yaml" \
		-p "$CLUSTER_DIR/policy.yaml" -d "$CLUSTER_DIR/configless.db" > "$out/cl_check.out" 2>&1 ||
		fail "--check-config configless: $(cat "$out/cl_check.out")"
	grep -q "Slurm asked through configless, from slurmctld 127.0.0.1:$CLUSTER_PORT (SLURM_CONF_SERVER): 3 partitions" \
		"$out/cl_check.out" || fail "--check-config does not say Slurm answered configless: $(cat "$out/cl_check.out")"
	spawn env -u SLURM_CONF SLURM_CONF_SERVER="127.0.0.1:$CLUSTER_PORT" \
		"$advisord" -f -c "$top_srcdir/etc/catalog.yaml" -p "$CLUSTER_DIR/policy.yaml" \
		-s "$csock" -d "$CLUSTER_DIR/configless.db" >> "$CLUSTER_DIR/advisord-configless.log" 2>&1
	cpid=$!
	wait_until -p "$cpid" 10 "the configless advisord to answer" \
		sh -c "[ -S '$csock' ] && '$advisorctl' --socket '$csock' status >/dev/null 2>&1" ||
		fail "configless advisord did not start: $(cat "$CLUSTER_DIR/advisord-configless.log")"
	run cl_status "$advisorctl" --socket "$csock" --json status
	jq -e '.slurm_answered == true' "$out/cl_status.stdout" > /dev/null 2>&1 ||
		fail "status of a configless daemon: $(cat "$out/cl_status.stdout")"
	for p in default h200; do
		popt=
		[ "$p" = default ] || popt="-p $p"
		# shellcheck disable=SC2086
		run "cl_daemon_$p" "$advisorctl" --socket "$csock" --json check $popt --gpus 8 --model llama3-8b
		# shellcheck disable=SC2086
		env -u SLURM_CONF SLURM_CONF_SERVER="127.0.0.1:$CLUSTER_PORT" \
			"$advisorctl" --local --catalog "$top_srcdir/etc/catalog.yaml" \
			--policy "$CLUSTER_DIR/policy.yaml" --json check $popt --gpus 8 --model llama3-8b \
			> "$out/cl_local_$p.stdout" 2> "$out/cl_local_$p.stderr"
		for w in daemon local; do
			a=$(jq -c '[.verdict, .memory.capacity_gib, ([.findings[].code] | sort)]' "$out/cl_${w}_$p.stdout" 2>/dev/null)
			b=$(jq -c '[.verdict, .memory.capacity_gib, ([.findings[].code] | sort)]' "$out/gpu_${w}_$p.stdout" 2>/dev/null)
			[ -n "$a" ] && [ "$a" = "$b" ] ||
				fail "$w, partition $p: configless $a, with slurm.conf $b"
		done
	done
	# check --script reads Slurm's max_script_size from the same configless
	# load (slurmgres_script_max): judged as with slurm.conf.
	script_check() {   # NAME ENV...: the corpus job judged --local under ENV
		_sc=$1; shift
		(cd "$top_srcdir/tests/jobs/03-torchtitan-405b-one-node" &&
			env "$@" "$advisorctl" --local --catalog "$top_srcdir/etc/catalog.yaml" \
			--policy "$CLUSTER_DIR/policy.yaml" --json check --script job.sbatch) \
			> "$out/script_$_sc.stdout" 2> "$out/script_$_sc.stderr"
	}
	script_check cl -u SLURM_CONF SLURM_CONF_SERVER="127.0.0.1:$CLUSTER_PORT"
	script_check file
	a=$(jq -c '[.llm_job, .verdict, .memory.capacity_gib, ([.findings[].code] | sort)]' "$out/script_cl.stdout" 2>/dev/null)
	b=$(jq -c '[.llm_job, .verdict, .memory.capacity_gib, ([.findings[].code] | sort)]' "$out/script_file.stdout" 2>/dev/null)
	[ -n "$a" ] && [ "$a" = "$b" ] && case $a in '[true,'*) ;; *) false ;; esac ||
		fail "check --script: configless $a, with slurm.conf $b"
	stop_pid "$cpid" TERM 10 "configless advisord"
	# No configuration anywhere: said at start-up, by --check-config and status.
	env -u SLURM_CONF "$advisord" --check-config -c "$top_srcdir/etc/catalog.yaml" \
		-p "$CLUSTER_DIR/policy.yaml" -d "$CLUSTER_DIR/configless.db" > "$out/cl_none.out" 2>&1
	grep -q "WARNING: Slurm not asked: /etc/slurm/slurm.conf: No such file or directory, no /run/slurm/conf/slurm.conf, no SLURM_CONF_SERVER and no DNS SRV _slurmctld._tcp" \
		"$out/cl_none.out" || fail "--check-config without Slurm: $(cat "$out/cl_none.out")"
fi
pass

begin "srun inside an salloc allocation"
run salloc salloc -J adv-salloc -N2 -G16 sh -c \
	'srun --llm-model=llama3-70b --llm-layout=tp3 true; echo "bad_rc=$?";
	 srun --llm-model=llama3-8b --llm-layout=tp8 sh -c "echo step_verdict=\$ADVISOR_VERDICT"; echo "good_rc=$?"'
expect_status 0
expect_err "srun: error: advisor: job rejected"
expect_err "TP_NOT_DIVIDE_HEADS"
grep -q "bad_rc=1" "$out/salloc.stdout" || fail "bad srun did not fail"
grep -q "step_verdict=accept" "$out/salloc.stdout" || fail "good step did not see ADVISOR_VERDICT=accept"
grep -q "good_rc=0" "$out/salloc.stdout" || fail "good srun failed"
pass

begin "--llm-advisor=off refused when policy forbids user override"
run override sbatch -J adv-override -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 \
	--llm-advisor=off --wrap true
expect_status 1
expect_err "POLICY_MODE_OVERRIDE_DENIED"
no_job_named adv-override
pass

begin "no -p: the default partition's policy applies (h100 in warn mode lets a bad layout through)"
sed 's/^  h100:  { gpu: h100-sxm, gpus_per_node: 8, mode: enforce }/  h100:  { gpu: h100-sxm, gpus_per_node: 8, mode: warn }/' \
	"$CLUSTER_DIR/policy.yaml" > "$CLUSTER_DIR/policy-warn.yaml"
grep -q 'mode: warn }' "$CLUSTER_DIR/policy-warn.yaml" || fail "test policy not rewritten"
cp "$CLUSTER_DIR/policy.yaml" "$CLUSTER_DIR/policy-enforce.yaml"
cp "$CLUSTER_DIR/policy-warn.yaml" "$CLUSTER_DIR/policy.yaml"
run reloadwarn "$advisorctl" --socket "$sock" reload
expect_status 0
run defpart sbatch -J adv-defpart -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 -o /dev/null --wrap true
expect_status 0
expect_err "advisor: job accepted with warnings"
expect_err "[warn mode"
# An explicit partition with its own enforce mode is still enforced.
run defpart_h200 sbatch -J adv-defpart2 -p h200 -N1 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 --wrap true
expect_status 1
cp "$CLUSTER_DIR/policy-enforce.yaml" "$CLUSTER_DIR/policy.yaml"
run reloadenforce "$advisorctl" --socket "$sock" reload
expect_status 0
run defpart_back sbatch -J adv-defpart3 -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 --wrap true
expect_status 1
no_job_named adv-defpart3
pass

begin "quiet=1: a reject still shows BEST_PLAN and its fix, and no other warning"
plugstack timeout_ms=2000 quiet=1
run quietbest sbatch -J adv-quiet -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp8,pp3 --wrap true
expect_status 1
expect_err "GPU_COUNT_MISMATCH"
expect_err "BEST_PLAN"
expect_err "advisor:   fix: --llm-layout="
expect_no_err "PP_UNEVEN_LAYERS"
no_job_named adv-quiet
plugstack timeout_ms=2000
pass

# Issue 30: the README's "Rollout: warn, then enforce", step by step, with
# the shipped policy as the package installs it.  The job: a real-style
# script advisor rejects when enforcing (tests/jobs/03: torchtitan 405B on
# one node of 8 GPUs, MEM_OVER_CAPACITY) that fits this cluster's nodes, so
# that "it runs" is seen to happen.
begin "the README's rollout: the shipped policy blocks nothing, the report shows the would-reject, enforce per partition then at the top"
# As the package installs it: the shipped policy, an empty decision log (the
# test's own is set aside, and put back at the end).
cp "$CLUSTER_DIR/policy.yaml" "$CLUSTER_DIR/policy-test.yaml"
cp "$top_srcdir/etc/policy.yaml" "$CLUSTER_DIR/policy.yaml"
stop_daemon
mkdir -p "$CLUSTER_DIR/log-before-rollout"
mv "$CLUSTER_DIR"/decisions.db* "$CLUSTER_DIR/log-before-rollout/"
start_daemon
rdir=$CLUSTER_DIR/rollout
rm -rf "$rdir"
cp -R "$top_srcdir/tests/jobs/03-torchtitan-405b-one-node" "$rdir"
chmod -R a+rX "$rdir"
grep -q '^verdict: reject$' "$rdir/expect" || fail "tests/jobs/03 is no longer a rejected job"
# rsub NAME [SBATCH OPTIONS]: the job submitted as its user would, from its directory.
rsub() {
	_n=$1; shift
	run "rollout_$_n" sh -c "cd '$rdir' && exec sbatch -J 'adv-rollout-$_n' -o '$out/rollout_$_n.job' $* job.sbatch"
}
# The job ran to its end on a node: its first line, the plugin's variables.
rran() {
	id=$(job_id)
	[ -n "$id" ] || { fail "no job id"; return; }
	wait_job "$id"
	expect_file "$out/rollout_$1.job" "advisor: verdict=warn"
}
run rollout_check "$advisord" --check-config -c "$top_srcdir/etc/catalog.yaml" -p "$CLUSTER_DIR/policy.yaml"
expect_status 0
grep -q "configuration OK" "$out/$last.stdout" || fail "--check-config did not say 'configuration OK'"
# Step 1, warn: queued and run; the user sees why and that it is not enforced.
current="rollout step 1: warn"
rsub warn
expect_status 0
expect_err "advisor: job accepted with warnings"
expect_err "[warn mode: problems are not enforced here]"
expect_err "advisor: warning: MEM_OVER_CAPACITY"
expect_err "[not enforced: advisor mode warn]"
expect_err "advisor:   fix: request at least"
expect_no_err "job rejected"
rran warn
# The silent shadow: quiet=1 on the plugin's line, nothing shown, all logged.
current="rollout step 1: silent shadow (quiet=1)"
plugstack timeout_ms=2000 quiet=1
rsub shadow
expect_status 0
expect_no_err "advisor"
rran shadow
run rollout_shadow_v sh -c "cd '$rdir' && exec sbatch -v -J adv-rollout-shadowv -o /dev/null job.sbatch"
expect_status 0
expect_err "advisor: job accepted with warnings (llama3-405b on 8 h100 GPUs"
expect_err "[warn mode: problems are not enforced here]"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
plugstack timeout_ms=2000
# Step 2, review: the README's commands, text and --json.
current="rollout step 2: report and history"
run rollout_report "$advisorctl" --socket "$sock" report --since 14d
expect_status 0
expect_out() { grep -qE -- "$1" "$out/$last.stdout" || fail "stdout has no line like '$1'"; }
expect_out '^enforcement would have rejected [1-9][0-9]* more (jobs?|decisions?) by 1 user'
# CODE SEVERITY DECISIONS USERS WOULD-REJECT REJECTED
expect_out '^MEM_OVER_CAPACITY +reject +[1-9][0-9]* +1 +[1-9][0-9]* +0$'
# PARTITION DECISIONS USERS ACCEPT WARN REJECT WOULD-REJECT
expect_out '^h100 +[1-9][0-9]* +1 +[0-9]+ +[1-9][0-9]* +0 +[1-9][0-9]*$'
"$advisorctl" --socket "$sock" --json report --since 14d > "$out/rollout_report.json"
# Three submissions (step 1, the shadow, its -v) and their node checks.
jq -e '[.codes[] | select(.code == "MEM_OVER_CAPACITY") | .unenforced][0] >= 3' \
	"$out/rollout_report.json" > /dev/null || fail "report --json: under 3 unenforced MEM_OVER_CAPACITY"
run rollout_history "$advisorctl" --socket "$sock" history --verdict warn --since 7d
expect_status 0
[ "$(grep -c ' sbatch .*llama3-405b .* warn  *MEM_OVER_CAPACITY' "$out/rollout_history.stdout")" -ge 3 ] ||
	fail "history --verdict warn lists fewer than the 3 submissions"
# TIME (2 words) DECISION HOST USER JOB FROM ...
wid=$(awk '$7 == "sbatch" && /llama3-405b/ { print $3; exit }' "$out/rollout_history.stdout")
run rollout_show "$advisorctl" --socket "$sock" show "$wid"
expect_status 0
grep -q "MEM_OVER_CAPACITY" "$out/rollout_show.stdout" || fail "show $wid lacks MEM_OVER_CAPACITY"
# Step 3, enforce one partition: the README's line, check, reload.
current="rollout step 3: enforce on h100"
sed 's/^  h100:  { gpu: h100-sxm, gpus_per_node: 8, max_gpus: 2048 }$/  h100:  { gpu: h100-sxm, gpus_per_node: 8, mode: enforce, max_gpus: 2048 }/' \
	"$top_srcdir/etc/policy.yaml" > "$CLUSTER_DIR/policy.yaml"
grep -q '^  h100:  {.* mode: enforce,' "$CLUSTER_DIR/policy.yaml" || fail "the README's h100 line is not in etc/policy.yaml"
run rollout_check2 "$advisord" --check-config -c "$top_srcdir/etc/catalog.yaml" -p "$CLUSTER_DIR/policy.yaml"
expect_status 0
run rollout_reload2 "$advisorctl" --socket "$sock" reload
expect_status 0
rsub enforce
expect_status 1
expect_err "advisor: job rejected"
expect_err "MEM_OVER_CAPACITY"
expect_err "nothing was submitted"
expect_no_err "not enforced"
no_job_named adv-rollout-enforce
# Another partition, no mode of its own: still the top-level warn.
rsub h200 -p h200 --gres=gpu:h200:8
expect_status 0
expect_err "advisor: warning: MEM_OVER_CAPACITY"
expect_err "[warn mode: problems are not enforced here]"
rran h200
# Then the top-level mode: every partition without its own (debug keeps warn).
current="rollout step 3: enforce at the top"
sed -i 's/^mode: warn$/mode: enforce/' "$CLUSTER_DIR/policy.yaml"
grep -q '^mode: enforce$' "$CLUSTER_DIR/policy.yaml" || fail "etc/policy.yaml has no top-level 'mode: warn'"
run rollout_check3 "$advisord" --check-config -c "$top_srcdir/etc/catalog.yaml" -p "$CLUSTER_DIR/policy.yaml"
expect_status 0
run rollout_reload3 "$advisorctl" --socket "$sock" reload
expect_status 0
rsub h200_enforce -p h200 --gres=gpu:h200:8
expect_status 1
expect_err "advisor: job rejected"
expect_err "MEM_OVER_CAPACITY"
no_job_named adv-rollout-h200_enforce
rsub debug -p debug
expect_status 0
expect_err "[warn mode: problems are not enforced here]"
rran debug
# What was turned away: the README's command after enforcing.
run rollout_rejected "$advisorctl" --socket "$sock" history --verdict reject --since 1d
expect_status 0
[ "$(grep -c ' sbatch .*llama3-405b .* reject  *MEM_OVER_CAPACITY' "$out/rollout_rejected.stdout")" -ge 2 ] ||
	fail "history --verdict reject lists fewer than the 2 rejected submissions"
current="the README's rollout"
all_idle
stop_daemon
rm -f "$CLUSTER_DIR"/decisions.db*
mv "$CLUSTER_DIR"/log-before-rollout/decisions.db* "$CLUSTER_DIR/"
cp "$CLUSTER_DIR/policy-test.yaml" "$CLUSTER_DIR/policy.yaml"
start_daemon
pass

begin "another SPANK plugin's option given as '--opt value' is not taken for the script"
cat > "$CLUSTER_DIR/other.c" <<'EOF2'
#include <slurm/spank.h>
SPANK_PLUGIN(otherp, 1);
static int other_cb(int val, const char *optarg, int remote) { (void)val; (void)optarg; (void)remote; return 0; }
static struct spank_option other_opt = { "other-image", "IMAGE", "test option", 1, 0, other_cb };
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)ac; (void)av;
	return spank_option_register(sp, &other_opt) == ESPANK_SUCCESS ? 0 : -1;
}
EOF2
if ${CC:-cc} -shared -fPIC -o "$CLUSTER_DIR/other.so" "$CLUSTER_DIR/other.c" > "$out/other-cc.log" 2>&1; then
	{ echo "optional $CLUSTER_DIR/other.so"
	  printf 'required %s socket=%s timeout_ms=2000\n' "$plugin" "$sock"; } > "$CLUSTER_DIR/plugstack.conf"
	run otheropt sbatch --other-image nvcr.io/nvidia/pytorch:24.01 "$CLUSTER_DIR/bad.sbatch"
	expect_status 1
	expect_err "32 GPUs cannot be split"
	no_job_named adv-script-bad
	plugstack timeout_ms=2000
else
	echo "# no C compiler: case skipped"; cat "$out/other-cc.log"
fi
pass

begin "bypass at submission caught on the node in task_init; node stays idle"
: > "$CLUSTER_DIR/empty-plugstack.conf"
sed "s|^PlugStackConfig=.*|PlugStackConfig=$CLUSTER_DIR/empty-plugstack.conf|" "$SLURM_CONF" \
	> "$CLUSTER_DIR/user-slurm.conf"
run bypass env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" \
	SLURM_SPANK__SLURM_SPANK_OPTION_advisor_llm_model=llama3-70b \
	SLURM_SPANK__SLURM_SPANK_OPTION_advisor_llm_layout=tp3 \
	sbatch -J adv-bypass -N4 --gres=gpu:8 -o "$out/bypass.job" \
	--wrap "export SLURM_CONF=$SLURM_CONF; srun -N4 sh -c 'sleep 50 && echo late_task'; echo srun_rc=\$?"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
# remote.c prints these lines only from slurm_spank_task_init, just before
# it cancels the step and returns -1.  Slurm's own "task_init() failed" line
# comes after and is lost when the cancel kills the task first, so it is
# not asserted; the step's exit status and the idle nodes are.
expect_file "$out/bypass.job" "advisor: step rejected on the node"
expect_file "$out/bypass.job" "TP_NOT_DIVIDE_HEADS"
# The node hides warnings but not the layout that would pass.
expect_file "$out/bypass.job" "BEST_PLAN"
expect_file "$out/bypass.job" "srun_rc="
grep -q "srun_rc=0" "$out/bypass.job" && fail "the rejected step exited 0"
# Node 0 cancels the whole step: the other nodes' tasks never finish.
# They sleep 50 s so that a cancel slowed by a loaded machine (CI runs
# fuzzers beside this) still comes first; when it works the job ends at
# once, so the sleep costs nothing.  'sleep && echo': the cancel signals
# the step's processes one by one, and a shell whose sleep was killed
# first could echo before its own signal came (CI: late_task printed
# 1.2 s into a step cancelled at 1.1 s).
grep -q "late_task" "$out/bypass.job" && fail "tasks of the rejected step ran on other nodes"
all_idle
pass

begin "a batch script no submission check read is judged on the node from the script the node holds"
# Issue 20: a broken Megatron layout (TP=3, 64 heads) with no --llm-*
# option, (a) submitted past the plugin (a slurm.conf copy with an empty
# PlugStackConfig), (b) fed to sbatch on a pipe (sbatch consumed it before
# the plugin ran: the submission saw the resources only).  The node reads
# slurmd's copy of the script and fails the batch step in task_init; the
# node is not drained.  (c) on_unchecked=allow: the job runs as before.
# (d) A script judged at submission is not read again on the node.  (e)
# A job submitted while the daemon was unavailable is judged at its start.
# (f) An srun past the plugin: the node reads the step's command.  (g) The
# same as (a) for an unprivileged user.  (h) The same as (a) with a
# made-up ADVISOR_DECISION_ID in the environment.
# The corpus job, one task per node: 8 tasks of 2 CPUs do not fit these
# 2-CPU nodes (the layout is as broken; no GPU is used: the batch step
# fails before srun).
megatron=$CLUSTER_DIR/megatron-tp3.sbatch
sed -e '/^#SBATCH --cpus-per-task=/d' -e '/^#SBATCH --ntasks-per-node=/d' \
	"$top_srcdir/tests/jobs/01-megatron-tp3-heads/job.sbatch" > "$megatron"
node_log() { cat "$CLUSTER_DIR"/log/slurmd.*.log 2>/dev/null | grep -F "job $1 node check"; }
run unchecked_bypass env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" \
	sbatch -J adv-unchecked -o "$out/unchecked_bypass.job" "$megatron"
expect_status 0
expect_no_err "advisor"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/unchecked_bypass.job" "TP_NOT_DIVIDE_HEADS"
expect_file "$out/unchecked_bypass.job" "advisor:   fix: --tensor-model-parallel-size"
expect_file "$out/unchecked_bypass.job" "batch script was not checked at submission"
expect_file "$out/unchecked_bypass.job" "advisor: step rejected on the node"
grep -q "advisor: verdict=" "$out/unchecked_bypass.job" && fail "the rejected batch script ran"
[ -n "$id" ] && { sacct_state=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
	[ -z "$sacct_state" ] || [ "$sacct_state" = FAILED ] || fail "job $id ended $sacct_state, expected FAILED"; }
node_log "${id:-x}" | grep -q "batch script read" || fail "the node did not say it read the script: $(node_log "${id:-x}")"
all_idle
run unchecked_pipe sh -c "cat '$megatron' | sbatch -J adv-unchecked-pipe -o '$out/unchecked_pipe.job'"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/unchecked_pipe.job" "TP_NOT_DIVIDE_HEADS"
expect_file "$out/unchecked_pipe.job" "advisor: step rejected on the node"
grep -q "advisor: verdict=" "$out/unchecked_pipe.job" && fail "the rejected batch script ran"
all_idle
# (e) Submitted (held) while the daemon was down, started once it is back.
stop_daemon
plugstack timeout_ms=300
run unchecked_down sbatch -H -J adv-unchecked-down -o "$out/unchecked_down.job" "$megatron"
expect_status 0
expect_err "advisor: daemon unavailable"
id=$(job_id)
start_daemon
plugstack timeout_ms=2000
[ -n "$id" ] && scontrol release "$id" && wait_job "$id"
expect_file "$out/unchecked_down.job" "TP_NOT_DIVIDE_HEADS"
expect_file "$out/unchecked_down.job" "advisor: step rejected on the node"
all_idle
# (f) srun past the plugin: the step's command is read on the node.
run unchecked_srun env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" srun -J adv-unchecked-srun -N4 \
	--gres=gpu:8 python pretrain_gpt.py --tensor-model-parallel-size 3 --num-layers 80 \
	--hidden-size 8192 --ffn-hidden-size 28672 --num-attention-heads 64 --seq-length 4096 \
	--micro-batch-size 1 --bf16
expect_status_not 0
expect_err "TP_NOT_DIVIDE_HEADS"
expect_err "advisor: this step's command was not checked at submission"
all_idle
# (g) As an unprivileged user: user_init reads slurmd's copy as the job's
# user, not as root.
if id nobody > /dev/null 2>&1; then
	mkdir -p "$CLUSTER_DIR/nobody" && chmod 777 "$CLUSTER_DIR/nobody"
	cp "$megatron" "$CLUSTER_DIR/nobody/job.sbatch"
	chmod 644 "$CLUSTER_DIR/nobody/job.sbatch" "$CLUSTER_DIR/user-slurm.conf"
	run unchecked_nobody su -s /bin/sh nobody -c "cd '$CLUSTER_DIR/nobody' &&
		SLURM_CONF='$CLUSTER_DIR/user-slurm.conf' exec sbatch -J adv-unchecked-nobody \
		-o '$CLUSTER_DIR/nobody/job.out' job.sbatch"
	expect_status 0
	id=$(job_id); [ -n "$id" ] && wait_job "$id"
	expect_file "$CLUSTER_DIR/nobody/job.out" "TP_NOT_DIVIDE_HEADS"
	expect_file "$CLUSTER_DIR/nobody/job.out" "advisor: step rejected on the node"
	all_idle
fi
# (h) Past the plugin with a made-up ADVISOR_DECISION_ID: the parent is in
# the job's environment, which the user controls; advisord's log does not
# confirm it, so the script is judged all the same (PARENT_UNCONFIRMED).
run unchecked_forged env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" \
	ADVISOR_DECISION_ID=20260101T000000-made-up \
	sbatch -J adv-unchecked-forged -o "$out/unchecked_forged.job" "$megatron"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/unchecked_forged.job" "TP_NOT_DIVIDE_HEADS"
expect_file "$out/unchecked_forged.job" "advisor: step rejected on the node"
grep -q "advisor: verdict=" "$out/unchecked_forged.job" && fail "a made-up parent let the rejected script run"
node_log "${id:-x}" | grep -q "batch script read" ||
	fail "the node did not read the script of a job with a made-up parent: $(node_log "${id:-x}")"
all_idle
# (i) Issue 27: past the plugin with the id of the script's own rejection,
# then with an accepted decision of the same user made for another script:
# a parent vouches only for an accepted or warned job of the same text.
run unchecked_rejected_sub sbatch -J adv-unchecked-rej -o /dev/null "$megatron"
expect_status_not 0
rid=$(grep -o 'd-[0-9a-f]*-[0-9a-f]*-[0-9]*' "$out/$last.stderr" | head -n 1)
[ -n "$rid" ] || fail "the rejection names no decision: $(cat "$out/$last.stderr")"
run unchecked_own_reject env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" ADVISOR_DECISION_ID="$rid" \
	sbatch -J adv-unchecked-own -o "$out/unchecked_own.job" "$megatron"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/unchecked_own.job" "advisor: step rejected on the node"
# Why the id did not count is a note of the node's decision (advisorctl show).
node_said() {   # JOBFILE TEXT: the node decision named in JOBFILE says TEXT
	_nd=$(sed -n 's/.*step rejected on the node (decision \(d-[^)]*\)).*/\1/p' "$1" | head -n 1)
	"$advisorctl" --socket "$sock" show "$_nd" 2>&1 | grep -q "$2" ||
		fail "decision $_nd of $1 does not say '$2': $("$advisorctl" --socket "$sock" show "$_nd" 2>&1 | grep PARENT)"
}
node_said "$out/unchecked_own.job" "is a rejected submission"
grep -q "advisor: verdict=" "$out/unchecked_own.job" && fail "a rejected job ran with its own decision id"
all_idle
run unchecked_good_sub sbatch -J adv-unchecked-good -o /dev/null "$CLUSTER_DIR/good.sbatch"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
gid=$("$advisorctl" --socket "$sock" --json history --script good.sbatch --limit 1 | jq -r '.decisions[0].id')
run unchecked_other_accept env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" ADVISOR_DECISION_ID="$gid" \
	sbatch -J adv-unchecked-other -o "$out/unchecked_other.job" "$megatron"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/unchecked_other.job" "advisor: step rejected on the node"
node_said "$out/unchecked_other.job" "was made for another script"
all_idle
plugstack timeout_ms=2000 on_unchecked=allow
run unchecked_allow env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" \
	sbatch -J adv-unchecked-allow -o "$out/unchecked_allow.job" "$megatron"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/unchecked_allow.job" "advisor: verdict="
grep -q "TP_NOT_DIVIDE_HEADS" "$out/unchecked_allow.job" && fail "on_unchecked=allow, yet the script was judged"
plugstack timeout_ms=2000
run unchecked_judged sbatch "$CLUSTER_DIR/good.sbatch"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/script.job" "ADVISOR_LAYOUT=tp8.pp4."
node_log "${id:-x}" | grep -q . || fail "no node check logged for job $id"
node_log "${id:-x}" | grep -q "batch script read" && fail "a script judged at submission was read again on the node"
all_idle
pass

begin "scripts as long as sbatch allows: comments cost a byte a line, a cut script is said and read again on the node"
# Issue 27.  long_job FILE LINES FORMAT: $megatron (TP=3 on 64 heads) with
# LINES lines of FORMAT (each %d: the line's index) before its TP=3 line.
long_job() {
	awk -v n="$2" -v f="$3" '/^TP=3$/ { for (i = 0; i < n; i++) printf f "\n", i, i } { print }' \
		"$megatron" > "$1"
}
# (a) The probe: 300 KiB of comments before the broken launch.  The script
# ships with its comment lines emptied: rejected, at the lines it names.
long_job "$CLUSTER_DIR/long-comments.sbatch" 4100 \
	'# %05d: notes on the data mix, the tokenizer and the logging, kept for the record'
tp_line=$(grep -n '^TP=3$' "$CLUSTER_DIR/long-comments.sbatch" | cut -d: -f1)
run long_comments sbatch -J adv-long-comments -o /dev/null "$CLUSTER_DIR/long-comments.sbatch"
expect_status 1
expect_err "TP_NOT_DIVIDE_HEADS"
expect_err "line $tp_line"
expect_no_err "SCRIPT_TRUNCATED"
no_job_named adv-long-comments
# (b) 400 KiB of commands before it: more than the reader takes.  sbatch
# says so and submits; the node reads slurmd's copy and judges it itself
# (ADVISOR_SCRIPT_UNREAD=partial), cut at the same line: a warning again.
long_job "$CLUSTER_DIR/long-commands.sbatch" 8300 'export DATA_SHARD_%05d=/fsx/data/shard_%05d.bin'
size=$(wc -c < "$CLUSTER_DIR/long-commands.sbatch" | tr -d ' ')
run long_commands sbatch -J adv-long-commands -o "$out/long_commands.job" "$CLUSTER_DIR/long-commands.sbatch"
expect_status 0
expect_err "SCRIPT_TRUNCATED"
expect_err "($size bytes); advisor read its first 256 KiB"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
node_log "${id:-x}" | grep -q "node check: warn (.*batch script read" ||
	fail "the node did not judge the cut script itself: $(node_log "${id:-x}")"
all_idle
# (c) A submit host whose slurm.conf bounds scripts lower than the
# controller's (SchedulerParameters=max_script_size=200000): sbatch reads
# 200000 bytes of the probe and says so; the controller takes all of it,
# and the node, bound by its own max_script_size, reads it whole and
# fails the batch step.
{ cat "$SLURM_CONF"; echo "SchedulerParameters=max_script_size=200000"; } > "$CLUSTER_DIR/small-max.conf"
run long_limit env SLURM_CONF="$CLUSTER_DIR/small-max.conf" sbatch -J adv-long-limit \
	-o "$out/long_limit.job" "$CLUSTER_DIR/long-comments.sbatch"
expect_status 0
expect_err "SCRIPT_TRUNCATED"
expect_err "max_script_size"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/long_limit.job" "TP_NOT_DIVIDE_HEADS"
expect_file "$out/long_limit.job" "batch script was checked only in part at submission"
expect_file "$out/long_limit.job" "advisor: step rejected on the node"
grep -q "advisor: verdict=" "$out/long_limit.job" && fail "the rejected batch script ran"
all_idle
pass

begin "no --llm-* option and no GPU: no daemon call, nothing printed"
before=$("$advisorctl" --socket "$sock" --json stats 2>/dev/null | tr -d ' \n' | sed -n 's/.*"requests":\([0-9]*\).*/\1/p')
run nogpu sbatch -J adv-nogpu -N2 -o /dev/null --wrap true
expect_status 0
expect_no_err "advisor"
id=$(job_id); [ -n "$id" ] && wait_job "$id"
after=$("$advisorctl" --socket "$sock" --json stats 2>/dev/null | tr -d ' \n' | sed -n 's/.*"requests":\([0-9]*\).*/\1/p')
# advisorctl's own stats call is one request.
[ -n "$before" ] || fail "advisorctl --json stats gave no request count"
[ "$after" = "$((before + 1))" ] || fail "daemon saw requests: $before -> $after"
pass

begin "resources=slurm and resources=parse: same request, same verdict"
# Each submission runs once with the request read from sbatch's, salloc's
# or srun's own parsed options (slurmopt.c) and once re-parsed by the
# plugin (jobreq.c); -v shows which path sbatch and salloc took.  The advisor's lines
# (decision ids aside) must be the same.
cat > "$CLUSTER_DIR/res.sbatch" <<EOF2
#!/bin/sh
#SBATCH -N 4
#SBATCH --gres=gpu:h100:8
#SBATCH --llm-model=llama3-70b
#SBATCH --llm-layout=tp8,pp3
true
EOF2
res_forms="-N4_--gres=gpu:8 -N4_--gpus=32 -N_4_--gres_gres:gpu:8 -N4_--gpus-per-node=8 -N4_-G_32
-n_32_--ntasks-per-node=8_--gpus-per-task=1 -p_h200_-N1_--gres=gpu:8 -p_debug_-N4_--gres=gpu:8
-N2-4_--gres=gpu:h100:8 -N1_--gres=gpu:8_--mem-per-gpu=10G"
for mode in slurm parse; do
	plugstack timeout_ms=2000 resources=$mode
	case $mode in
	slurm) path="resources as Slurm resolved them" ;;
	*) path="resources as parsed" ;;
	esac
	i=0
	for form in $res_forms; do
		i=$((i + 1))
		# shellcheck disable=SC2046
		run "res_${mode}_$i" sbatch -v -J adv-res $(echo "$form" | tr _ ' ') \
			--llm-model=llama3-70b --llm-layout=tp8,pp3 -o /dev/null --wrap true
		expect_err "$path"
	done
	run "res_${mode}_env1" env SBATCH_GPUS_PER_NODE=h100:8 sbatch -v -J adv-res -N4 \
		--llm-model=llama3-70b --llm-layout=tp8,pp3 -o /dev/null --wrap true
	expect_err "$path"
	run "res_${mode}_env2" env SBATCH_PARTITION=debug SBATCH_GRES=gpu:8 sbatch -v -J adv-res -N4 \
		--llm-model=llama3-70b --llm-layout=tp3 -o /dev/null --wrap true
	expect_err "$path"
	run "res_${mode}_script" sbatch -v -J adv-res -o /dev/null "$CLUSTER_DIR/res.sbatch"
	expect_err "$path"
	run "res_${mode}_cmdwins" sbatch -v -J adv-res -N2 -o /dev/null "$CLUSTER_DIR/res.sbatch"
	expect_err "$path"
	# srun applies -v only after init_post_opt: its path is not shown.
	run "res_${mode}_srun" srun -J adv-res -N4 --gres=gpu:8 --llm-model=llama3-70b \
		--llm-layout=tp8,pp3 true
	expect_status 1
	run "res_${mode}_salloc" salloc -v -J adv-res -N4 -G 32 --llm-model=llama3-70b \
		--llm-layout=tp3 true
	expect_err "$path"
done
for f in "$out"/res_slurm_*.stderr; do
	b=$(basename "$f" .stderr)
	p=$out/$(echo "$b" | sed 's/^res_slurm_/res_parse_/')
	grep -F 'advisor:' "$f" | grep -v -e 'resources as' -e 'advisor: decision' |
		sed 's/decision d-[0-9a-f-]*/decision D/' > "$out/$b.sum"
	grep -F 'advisor:' "$p.stderr" | grep -v -e 'resources as' -e 'advisor: decision' |
		sed 's/decision d-[0-9a-f-]*/decision D/' > "$p.sum"
	[ -s "$out/$b.sum" ] || { last=$b; fail "no advisor line"; }
	cmp -s "$out/$b.sum" "$p.sum" || {
		last=$b
		fail "resources=slurm and resources=parse disagree:"
		diff "$out/$b.sum" "$p.sum" | sed 's/^/  | /'
	}
done
grep -q "job rejected" "$out/res_slurm_1.stderr" || { last=res_slurm_1; fail "-N4 --gres=gpu:8 tp8,pp3 not rejected"; }
grep -q "32 GPUs cannot be split" "$out/res_slurm_6.stderr" || { last=res_slurm_6; fail "--gpus-per-task form lost its GPUs"; }
grep -q "accepted with warnings" "$out/res_slurm_env2.stderr" || { last=res_slurm_env2; fail "SBATCH_PARTITION=debug not seen"; }
grep -q "on 16 " "$out/res_slurm_cmdwins.stderr" || { last=res_slurm_cmdwins; fail "-N2 on the command line did not win over #SBATCH -N 4"; }
plugstack timeout_ms=2000
pass

begin "a job with no GPU, no --llm-* and no launcher costs no daemon call"
printf '#!/bin/sh\n#SBATCH -N1\necho hello\n' > "$CLUSTER_DIR/plain.sbatch"
printf '#!/bin/sh\n#SBATCH -N1\nsrun hostname\n' > "$CLUSTER_DIR/plain-srun.sbatch"
stats_requests() {
	"$advisorctl" --socket "$sock" --json stats 2>/dev/null | tr -d ' \n' | sed -n 's/.*"requests":\([0-9]*\).*/\1/p'
}
# The earlier cases' jobs check their steps on the nodes when they start:
# on a busy machine that can fall between the two counts below.
wait_queue() {
	wait_until -s squeue 60 "the queue to drain" queue_empty
}
queue_empty() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
wait_queue
before=$(stats_requests)
run plain sbatch -J adv-plain -o /dev/null "$CLUSTER_DIR/plain.sbatch"
expect_status 0
expect_no_err "advisor"
after=$(stats_requests)
[ "$after" = "$((before + 1))" ] || fail "no launcher word, yet the daemon saw requests: $before -> $after"
# A launcher word is worth a look; the reader finds no LLM job: silent.
wait_queue
before=$(stats_requests)
run plainsrun sbatch -J adv-plain -o /dev/null "$CLUSTER_DIR/plain-srun.sbatch"
expect_status 0
expect_no_err "advisor"
after=$(stats_requests)
[ "$after" = "$((before + 2))" ] || fail "srun in the script, yet no daemon call: $before -> $after"
pass

# The corpus jobs meant for the cluster (tests/jobs/*/slurm), as a new user
# would submit them: no --llm-* option, from the job's own directory.  They
# need the daemon's job reader (advisorctl check --script).
if "$advisorctl" check --help 2>&1 | grep -q -- '--script'; then
begin "real-style job scripts with no --llm-* option: rejected, accepted and warned as their expect files say"
cp "$CLUSTER_DIR/policy.yaml" "$CLUSTER_DIR/policy-test.yaml"
# The expect files' policy: the shipped one, enforcing (tests/jobs/README).
enforcing_policy "$CLUSTER_DIR/policy.yaml"
run reloadshipped "$advisorctl" --socket "$sock" reload
expect_status 0
n_reject=0; n_accept=0; n_warn=0
for dir in "$top_srcdir"/tests/jobs/*/; do
	[ -f "$dir/slurm" ] && [ -f "$dir/job.sbatch" ] || continue
	jname=$(basename "$dir")
	current="job $jname"
	want=$(sed -n 's/^verdict: *//p' "$dir/expect")
	if grep -q -- '--llm-' "$dir/job.sbatch"; then
		fail "$jname/job.sbatch carries an --llm-* option"; continue
	fi
	# A copy: the job runs in its directory and the source tree may be read-only.
	rm -rf "$CLUSTER_DIR/jobs/$jname"
	mkdir -p "$CLUSTER_DIR/jobs"
	cp -R "$dir" "$CLUSTER_DIR/jobs/$jname"
	chmod -R a+rX "$CLUSTER_DIR/jobs"
	for mode in slurm parse; do
		# Accepted jobs run once; rejected ones (nothing queued) under both paths.
		[ "$mode" = parse ] && [ "$want" != reject ] && continue
		plugstack timeout_ms=2000 resources=$mode
		run "job_${jname}_$mode" sh -c "cd '$CLUSTER_DIR/jobs/$jname' &&
			exec sbatch -J 'adv-job-$jname' -o '$out/job_$jname.out' job.sbatch"
		for code in $(sed -n 's/^codes: *//p' "$dir/expect"); do expect_err "$code"; done
		case $want in
		reject)
			expect_status 1
			expect_err "advisor: job rejected"
			expect_err "nothing was submitted"
			# The fix names the line and the flag, in the job's own terms.
			sed -n 's/^fix-job [A-Z_]*: *//p' "$dir/expect" > "$out/fixjob.want"
			# One line per setting: "fix: A" then "and: B" read back as "A; B".
			awk 'index($0, "advisor:   fix: ") { if (f != "") print f; f = substr($0, index($0, "fix: ") + 5); next }
			     index($0, "advisor:   and: ") && f != "" { f = f "; " substr($0, index($0, "and: ") + 5); next }
			     { if (f != "") print f; f = "" }
			     END { if (f != "") print f }' "$out/$last.stderr" > "$out/fixjob.got"
			while IFS= read -r text; do
				grep -qF -- "$text" "$out/fixjob.got" ||
					fail "no 'advisor:   fix:' line with '$text'"
			done < "$out/fixjob.want"
			no_job_named "adv-job-$jname"
			;;
		accept|warn)
			expect_status 0
			expect_no_err "job rejected"
			if [ "$want" = warn ]; then expect_err "advisor: job accepted with warnings"
			else expect_no_err "advisor: job accepted with warnings"; fi
			id=$(job_id); [ -n "$id" ] && wait_job "$id"
			expect_file "$out/job_$jname.out" "advisor: verdict=$want"
			expect_file "$out/job_$jname.out" "layout=tp"
			;;
		*) fail "$jname: expect has no verdict" ;;
		esac
	done
	case $want in reject) n_reject=$((n_reject + 1)) ;; accept) n_accept=$((n_accept + 1)) ;;
	warn) n_warn=$((n_warn + 1)) ;; esac
done
current="real-style job scripts"
echo "# corpus jobs on the cluster: $n_reject rejected, $n_accept accepted, $n_warn warned"
[ "$n_reject" -ge 2 ] && [ "$n_accept" -ge 2 ] && [ "$n_warn" -ge 1 ] ||
	fail "want at least 2 rejected, 2 accepted and 1 warned corpus jobs with a slurm file"
plugstack timeout_ms=2000
cp "$CLUSTER_DIR/policy-test.yaml" "$CLUSTER_DIR/policy.yaml"
run reloadtest "$advisorctl" --socket "$sock" reload
expect_status 0
all_idle
pass

begin "srun reads its own command: a Megatron launch with TP=3 is rejected at srun"
run sruncmd srun -J adv-sruncmd -N4 --gres=gpu:8 python pretrain_gpt.py \
	--tensor-model-parallel-size 3 --num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 \
	--num-attention-heads 64 --group-query-attention --num-query-groups 8 --swiglu \
	--seq-length 4096 --max-position-embeddings 8192 --micro-batch-size 1 --bf16
expect_status 1
expect_err "TP_NOT_DIVIDE_HEADS"
expect_err "advisor:   fix: --tensor-model-parallel-size"
expect_err "advisor:   or:  --llm-layout="
pass
else
	echo "# advisorctl has no check --script yet: corpus jobs not submitted"
fi

begin "decisions recorded with the job id (submission and node)"
run history "$advisorctl" --socket "$sock" history --limit 200
expect_status 0
grep -q "reject" "$out/history.stdout" || fail "history has no reject"
pass

begin "a rejected sbatch names the one command that shows the full reason; show links a job's node checks (issue 21)"
printf '#!/bin/sh\n#SBATCH -N4 --gres=gpu:8\nsrun true\n' > "$CLUSTER_DIR/why.sbatch"
run why sbatch -J adv-why --llm-model=llama3-70b --llm-layout=tp3 -o /dev/null "$CLUSTER_DIR/why.sbatch"
expect_status 1
did=$(sed -n 's/.*advisor: decision \([^;]*\); nothing was submitted; see: advisorctl show .*/\1/p' "$out/why.stderr")
see=$(sed -n 's/.*advisor: decision [^;]*; nothing was submitted; see: \(advisorctl show .*\)$/\1/p' "$out/why.stderr")
[ -n "$did" ] && [ "$see" = "advisorctl show $did" ] || fail "the rejection names no show command: '$see'"
no_job_named adv-why
# The printed command, as printed (only the test daemon's socket added).
# shellcheck disable=SC2086
run whyshow "$advisorctl" --socket "$sock" ${see#advisorctl }
expect_status 0
grep -qF "script: $CLUSTER_DIR/why.sbatch" "$out/whyshow.stdout" || fail "show names no script: $(cat "$out/whyshow.stdout")"
# Every line sbatch printed for a finding, show prints again.
sed -n 's/^sbatch: error: \(advisor: .*\)/\1/p' "$out/why.stderr" |
	grep -v -e 'advisor: job rejected' -e 'advisor: decision ' > "$out/why.lines"
[ -s "$out/why.lines" ] || fail "no finding lines from sbatch"
while IFS= read -r l; do
	grep -qF -- "$l" "$out/whyshow.stdout" || fail "show lacks sbatch's line '$l'"
done < "$out/why.lines"
# Found without a job id: by the script's name.
run whyscript "$advisorctl" --socket "$sock" --json history --script why.sbatch --verdict reject --since 1h
jq -e --arg d "$did" '[.decisions[].id] | index($d) != null' "$out/whyscript.stdout" > /dev/null ||
	fail "history --script why.sbatch lacks $did"
# An accepted job: its submission lists the node checks of its steps, and they name it.
run whyok sbatch -J adv-whyok -N4 --gres=gpu:8 $good -o "$out/whyok.job" \
	--wrap 'echo "sub=$ADVISOR_DECISION_ID"; srun -N4 true'
expect_status 0
jid=$(job_id); [ -n "$jid" ] && wait_job "$jid"
sub=$(sed -n 's/^sub=//p' "$out/whyok.job")
run whyoksub "$advisorctl" --socket "$sock" --json show "$sub"
expect_status 0
jq -e --argjson j "${jid:-0}" '.children | length >= 1 and all(.[]; .context == "step" and .job_id == $j)' \
	"$out/whyoksub.stdout" > /dev/null || fail "the submission $sub lists no node check of job $jid"
child=$(jq -r '.children[0].id' "$out/whyoksub.stdout")
run whyokchild "$advisorctl" --socket "$sock" --json show "$child"
jq -e --arg s "$sub" '.parent.id == $s' "$out/whyokchild.stdout" > /dev/null || fail "node check $child names no submission"
pass

begin "daemon stopped, on_unavailable=allow: one warning, job submitted"
stop_daemon
run unavail_allow sbatch -J adv-unavail -N4 --gres=gpu:8 $good -o /dev/null --wrap true
expect_status 0
expect_err "advisor: daemon unavailable at $sock"
expect_err "job not checked"
[ "$(grep -c 'advisor:' "$out/unavail_allow.stderr")" -eq 1 ] || fail "more than one advisor line"
run unavail_nogpu sbatch -J adv-unavail2 -N1 -o /dev/null --wrap true
expect_status 0
expect_no_err "advisor"
pass

begin "daemon stopped, on_unavailable=deny: rejected, saying the advisor is unavailable"
plugstack timeout_ms=300 on_unavailable=deny
run unavail_deny sbatch -J adv-deny -N4 --gres=gpu:8 $good --wrap true
expect_status 1
expect_err "the advisor is unavailable"
no_job_named adv-deny
pass

begin "daemon hung (accepts, never answers): bounded by timeout_ms"
# A listening socket nobody reads: connect succeeds, the answer never comes.
if command -v python3 >/dev/null 2>&1; then
	spawn python3 -c "
import socket, time, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16); time.sleep(30)" "$sock"
	hung=$!
	wait_until -p "$hung" 5 "the hung listener on $sock" test -S "$sock"
	plugstack timeout_ms=300 on_unavailable=allow
	run hung timeout 10 sbatch -J adv-hung -N4 --gres=gpu:8 $good -o /dev/null --wrap true
	expect_status 0
	expect_err "advisor: daemon unavailable"
	stop_pid "$hung" TERM 10 "the hung listener"
	rm -f "$sock"
fi
pass

begin "plugstack.conf with an unknown key or a bad value: error in the log, ignored"
start_daemon
plugstack timeout_ms=2000 colour=blue
run badkey sbatch -J adv-badkey -N4 --gres=gpu:8 $good -o /dev/null --wrap true
expect_status 0
expect_err "unknown plugstack.conf argument"
expect_err "colour=blue"
# A bad value: said with the argument; the key keeps its default.
plugstack timeout_ms=2000 on_unchecked=sometimes
run badvalue sbatch -J adv-badvalue -N4 --gres=gpu:8 $good -o /dev/null --wrap true
expect_status 0
expect_err "bad value in plugstack.conf argument"
expect_err "on_unchecked=sometimes"
plugstack timeout_ms=2000
pass

begin "login and compute nodes served over MUNGE-authenticated TCP: plugstack server=, no local daemon"
# A second advisord on its own socket and log, serving TCP on loopback; the
# plugin's socket= names nothing, and its server= list starts with a port
# nobody listens on (failover within timeout_ms).
# Ports picked now, not with the cluster's block minutes ago: a port of
# the ephemeral range may have been taken since by any connection (a CI
# run saw "Address already in use"); a start that loses the race picks
# another pair.
tcp_port=$((CLUSTER_PORT + 8))
tcp_answers() { "$advisorctl" --server "127.0.0.1:$tcp_port" status > /dev/null 2>&1; }
for _try in 1 2 3 4 5; do
	while ! port_free "$tcp_port"; do tcp_port=$((tcp_port + 10)); done
	dead_port=$((tcp_port + 1))
	: > "$CLUSTER_DIR/advisord-tcp.log"
	spawn "$advisord" -f -c "$top_srcdir/etc/catalog.yaml" -p "$CLUSTER_DIR/policy.yaml" \
		-s "$CLUSTER_DIR/tcp.sock" -d "$CLUSTER_DIR/tcp.db" --listen "127.0.0.1:$tcp_port" \
		>> "$CLUSTER_DIR/advisord-tcp.log" 2>&1
	tcp_pid=$!
	tcp_up_or_gone() { tcp_answers || ! kill -0 "$tcp_pid" 2> /dev/null; }
	wait_until 10 "the TCP advisord to answer or end" tcp_up_or_gone
	grep -q "Address already in use" "$CLUSTER_DIR/advisord-tcp.log" || break
	wait "$tcp_pid" 2> /dev/null || :
	tcp_port=$((tcp_port + 10))
done
wait_until -p "$tcp_pid" -s 'tail -n 5 "$CLUSTER_DIR/advisord-tcp.log"' 10 "the TCP advisord to answer" tcp_answers
printf 'required %s socket=%s/nothing.sock server=127.0.0.1:%s,127.0.0.1:%s timeout_ms=3000\n' \
	"$plugin" "$CLUSTER_DIR" "$dead_port" "$tcp_port" > "$CLUSTER_DIR/plugstack.conf"
run tcp_bad sbatch -J adv-tcp-bad -N4 --gres=gpu:8 --llm-model=llama3-70b --llm-layout=tp3 --wrap true
expect_status 1
expect_err "TP_NOT_DIVIDE_HEADS"
no_job_named adv-tcp-bad
run tcp_good sbatch -J adv-tcp-good -N4 --gres=gpu:8 $good -o "$out/tcp_good.job" \
	--wrap 'echo verdict=$ADVISOR_VERDICT'
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/tcp_good.job" "verdict=accept"
# Submitted without the plugin, judged on the nodes over TCP in task_init.
run tcp_bypass env SLURM_CONF="$CLUSTER_DIR/user-slurm.conf" \
	SLURM_SPANK__SLURM_SPANK_OPTION_advisor_llm_model=llama3-70b \
	SLURM_SPANK__SLURM_SPANK_OPTION_advisor_llm_layout=tp3 \
	sbatch -J adv-tcp-bypass -N4 --gres=gpu:8 -o "$out/tcp_bypass.job" \
	--wrap "export SLURM_CONF=$SLURM_CONF; srun -N4 sh -c 'sleep 50 && echo late_task'; echo srun_rc=\$?"
expect_status 0
id=$(job_id); [ -n "$id" ] && wait_job "$id"
expect_file "$out/tcp_bypass.job" "advisor: step rejected on the node"
grep -q "srun_rc=0" "$out/tcp_bypass.job" && fail "the step rejected over TCP exited 0"
"$advisorctl" --server "127.0.0.1:$tcp_port" --json history > "$out/tcp_history.json" 2>&1
for ctx in sbatch step; do
	jq -e --arg c "$ctx" '[.decisions[] | select(.context == $c)] | length > 0' \
		"$out/tcp_history.json" > /dev/null || fail "no $ctx decision in the TCP daemon's log"
done
all_idle
stop_pid "$tcp_pid" TERM 10 "the TCP advisord"
plugstack timeout_ms=2000
pass

all_idle
echo "# $cases cases, $failures failed checks"
[ "$failures" -eq 0 ]
