/*
 * launch.c - from a command as the script runs it to the program that
 * trains or serves: wrappers (env, time, nohup, exec, stdbuf, numactl,
 * taskset, singularity/apptainer exec|run, uv run, conda run, the Python
 * interpreter and its options) are stripped, and the launchers' own
 * options are read for the processes they start.
 *
 * Each launcher is read the way its own parser reads it:
 * - srun (Slurm src/srun/opt.c, srun(1)): -n/--ntasks, -N/--nodes,
 *   --ntasks-per-node; without them a step inherits the job's tasks
 *   (SLURM_NTASKS, one task per node by default).  srun's tasks are the
 *   world only when srun starts the trainer directly; when it starts an
 *   ML launcher once per node, that launcher's world wins.  A step that
 *   names its own part of the allocation (-N below the job's nodes, -w,
 *   -x, -r) is recorded (out->step_nodes) so that the launch is judged
 *   against that part: RL jobs run the trainer on some nodes and a
 *   generation server on the others, each in its own background step.
 * - torchrun and python -m torch.distributed.run/launch (PyTorch
 *   torch/distributed/run.py): --nnodes N or MIN:MAX, --nproc-per-node /
 *   --nproc_per_node N|gpu|auto (default 1), --standalone (one node).
 * - the deepspeed launcher (DeepSpeed deepspeed/launcher/runner.py):
 *   --num_nodes, --num_gpus/--num_accelerators (default: every GPU of the
 *   node), --hostfile, --include/--exclude (read at run time: unknown).
 * - accelerate launch (accelerate src/accelerate/commands/launch.py):
 *   --config_file first, then --num_processes (all machines),
 *   --num_machines, --mixed_precision, --use_deepspeed, --zero_stage,
 *   --deepspeed_config_file, --use_fsdp, --fsdp_sharding_strategy.
 * - mpirun/mpiexec (Open MPI mpirun(1), MPICH/Intel MPI mpiexec): -np/-n,
 *   -N/--npernode/-ppn, --map-by ppr:N:node, host lists (unknown).
 * An option is skipped with its arity (bare flags take no value, the
 * rest one, written "--opt V" or "--opt=V"), so that the first word that
 * is not an option is the program the launcher starts.
 *
 * Launch topology (issue 28): a step in a heterogeneous job runs in the
 * component(s) of srun --het-group (0 without it; Slurm's
 * heterogeneous_jobs.html); a rank flag (torchrun --node_rank, accelerate
 * --machine_rank) given the batch shell's $SLURM_NODEID/$SLURM_PROCID on
 * an srun line is the same 0 on every task, which torchrun's static
 * rendezvous takes (torch/distributed/run.py config_from_args: only
 * rdzv_backend "static" reads node_rank; accelerate utils/launch.py
 * prepare_multi_gpu_env hands machine_rank over); `scontrol show
 * hostnames` given to srun -w unquoted splits into its arguments.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "engine/findings.h"
#include "wire/jobreq.h"
#include "reader.h"
#include "util.h"

/* Wrappers and launchers nested in one command ("srun env numactl ...
 * python -m torch.distributed.run ..."): more is not a real job. */
#define LAUNCH_MAX_LAYERS 16

/* How a launcher's options are skipped. */
struct optspec {
	const char *const *bools;   /* options that take no value (long or short) */
	const char *const *pairs;   /* options that take two values (mpirun --mca K V) */
	const char *short_val;      /* single-letter options that take a value (srun: "n", "N", ...) */
	bool attached;              /* "-n16": a short option's value in the same word */
};

/* A launcher's values, kept until it is known whether the program it
 * starts is another launcher (then these do not count). */
struct starter {
	bool present;
	const char *name;
	long long world, nodes, nproc;     /* -1: not stated */
	struct jobread_src world_src, nodes_src, nproc_src;
};

/* ---- the command, a part at a time ---------------------------------------------- */

/* The view of cmd's words [from, from + n), with its per-word arrays. */
static struct jr_cmd sub(const struct jr_cmd *c, int from, int n)
{
	struct jr_cmd s = *c;

	if (from < 0)
		from = 0;
	if (from > c->argc)
		from = c->argc;
	if (n < 0 || n > c->argc - from)
		n = c->argc - from;
	s.argc = n;
	s.argv = c->argv + from;
	s.unknown = c->unknown ? c->unknown + from : NULL;
	s.word_line = c->word_line ? c->word_line + from : NULL;
	s.word_file = c->word_file ? c->word_file + from : NULL;
	s.batch_rank = c->batch_rank ? c->batch_rank + from : NULL;
	return s;
}

static bool in_list(const char *w, const char *const *list)
{
	for (size_t k = 0; list && list[k]; k++)
		if (!strcmp(w, list[k]))
			return true;
	return false;
}

/* "--opt=V" or "-n16" (attached): the word carries its own value. */
static bool has_inline_value(const char *w, const struct optspec *sp)
{
	if (strchr(w, '='))
		return true;
	return sp->attached && w[0] == '-' && w[1] && w[1] != '-' && w[2];
}

/* Words an option at i takes, itself included. */
static int opt_width(const struct jr_cmd *c, int i, const struct optspec *sp)
{
	const char *w = c->argv[i];

	if (in_list(w, sp->bools) || has_inline_value(w, sp))
		return 1;
	if (in_list(w, sp->pairs))
		return 3;
	if (w[0] == '-' && w[1] && w[1] != '-' && !w[2] && sp->short_val)
		return strchr(sp->short_val, w[1]) ? 2 : 1;
	/* An unlisted option takes a value, but never the script itself:
	 * a launcher's values are not Python files. */
	if (i + 1 < c->argc) {
		const char *v = c->argv[i + 1];
		size_t n = strlen(v);

		if (v[0] == '-' || (n > 3 && !strcmp(v + n - 3, ".py")))
			return 1;
	}
	return 2;
}

/* Index of the first word from `from` that is not an option (argc when
 * there is none).  "--" ends the options. */
static int skip_opts(const struct jr_cmd *c, int from, const struct optspec *sp)
{
	int i = from;

	while (i < c->argc) {
		const char *w = c->argv[i];

		if (!w || w[0] != '-' || !w[1])
			return i;
		if (!strcmp(w, "--"))
			return i + 1;
		i += opt_width(c, i, sp);
	}
	return c->argc;
}

/* The command's own place, for a value the launcher takes by default. */
static void src_default(struct jobread_src *s, const struct jr_cmd *launcher, const char *key)
{
	jr_src_word(s, launcher, 0, key, JR_STYLE_FLAG);
}

struct found {
	int idx;              /* the option word, -1 when absent */
	const char *which;    /* the spelling written */
	const char *value;    /* NULL: a bare flag */
	bool unknown;         /* the value is not known statically */
	struct jobread_src src;
};

/* The last occurrence of any of names in opts (a launcher's options only,
 * so that the trainer's flags of the same name are not taken). */
static bool find(const struct jr_cmd *opts, const char *const names[], bool attached,
		 struct found *f)
{
	memset(f, 0, sizeof(*f));
	f->idx = -1;
	for (int i = 0; i < opts->argc; i++) {
		const char *w = opts->argv[i];

		if (!w || w[0] != '-')
			continue;
		for (size_t k = 0; names[k]; k++) {
			size_t n = strlen(names[k]);
			int vi;

			if (strncmp(w, names[k], n) != 0)
				continue;
			if (w[n] == '\0') {
				vi = i + 1 < opts->argc ? i + 1 : -1;
				f->value = vi >= 0 ? opts->argv[vi] : NULL;
				if (f->value && f->value[0] == '-' && f->value[1] &&
				    !(f->value[1] >= '0' && f->value[1] <= '9'))
					f->value = NULL, vi = -1;
			} else if (w[n] == '=') {
				vi = i;
				f->value = w + n + 1;
			} else if (attached && n == 2 && names[k][1] != '-') {
				vi = i;
				f->value = w + n;
			} else {
				continue;
			}
			f->idx = i;
			f->which = names[k];
			f->unknown = vi >= 0 && opts->unknown && opts->unknown[vi];
			break;
		}
	}
	if (f->idx < 0)
		return false;
	jr_src_word(&f->src, opts, f->idx, f->which, strchr(opts->argv[f->idx], '=')
		 ? JR_STYLE_FLAG_EQ : JR_STYLE_FLAG);
	return true;
}

enum { V_ABSENT = 0, V_KNOWN, V_UNKNOWN, V_BAD };

/* A whole-number option.  An unknown value marks field f unknown (when f
 * >= 0); a value that is not a count is noted and ignored. */
static int opt_int(struct jr_ctx *cx, const struct jr_cmd *opts, const char *const names[],
		   bool attached, int f, struct found *fd, long long *out)
{
	if (!find(opts, names, attached, fd))
		return V_ABSENT;
	if (fd->unknown) {
		if (f >= 0)
			jr_set_unknown(cx, (enum jobread_field)f, &fd->src, "a value computed at run time");
		return V_UNKNOWN;
	}
	if (fd->value && jr_parse_ll(fd->value, out))
		return V_KNOWN;
	jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL, "%s:%d: %s '%s' is not a whole number; ignored",
		fd->src.file, fd->src.line, fd->which, fd->value ? fd->value : "");
	return V_BAD;
}

/* Nodes the job has, as Slurm resolves them (0 = not known). */
static long long job_nodes(const struct jobread_input *in)
{
	if (in->res.nodes > 0)
		return in->res.nodes;
	if (in->res.gpus > 0 && in->res.gpus_per_node > 0)
		return (in->res.gpus + in->res.gpus_per_node - 1) / in->res.gpus_per_node;
	return 0;
}

/* GPUs on each node of the job (0 = not known). */
static long long job_gpn(const struct jobread_input *in)
{
	if (in->res.gpus_per_node > 0)
		return in->res.gpus_per_node;
	if (in->res.gpus > 0 && in->res.nodes > 0 && in->res.gpus % in->res.nodes == 0)
		return in->res.gpus / in->res.nodes;
	if (in->res.gpus > 0 && in->res.nodes <= 1)
		return in->res.gpus;
	return 0;
}

/* a * b within the int range the reader keeps, -1 otherwise. */
static long long mul(long long a, long long b)
{
	if (a <= 0 || b <= 0 || a > INT_MAX / b)
		return -1;
	return a * b;
}

static void commit(struct jr_ctx *cx, const struct starter *st)
{
	if (!st->present)
		return;
	if (st->nodes > 0)
		jr_set_int(cx, JR_NODES, st->nodes, &st->nodes_src);
	if (st->nproc > 0)
		jr_set_int(cx, JR_NPROC_PER_NODE, st->nproc, &st->nproc_src);
	if (st->world > 0)
		jr_set_int(cx, JR_WORLD, st->world, &st->world_src);
}

/* ---- wrappers ------------------------------------------------------------------------ */

/* "python", "python3", "python3.11" */
static bool is_python(const char *b)
{
	if (strncmp(b, "python", 6) != 0)
		return false;
	for (const char *p = b + 6; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.'))
			return false;
	return true;
}

/*
 * The interpreter's own options (python(1)): single letters that may be
 * grouped ("-uB"), -X/-W with a value (attached or not), then the script,
 * "-m MODULE", or "-c CODE" (inline code: nothing to read).  Returns the
 * index of the script or module word, -1 when there is none.
 */
static int python_args(const struct jr_cmd *c, int i, bool *module)
{
	*module = false;
	for (i = i + 1; i < c->argc; i++) {
		const char *w = c->argv[i];

		if (!w || w[0] != '-' || !w[1])
			return w && w[0] == '-' ? -1 : i;   /* "-": stdin */
		if (w[1] == '-') {
			if (!w[2])
				return i + 1 < c->argc ? i + 1 : -1;
			if (!strcmp(w, "--check-hash-based-pycs"))
				i++;
			continue;
		}
		for (const char *p = w + 1; *p; p++) {
			if (*p == 'c')
				return -1;
			if (*p == 'm') {
				if (p[1])
					return -1;   /* "-mpkg": not written by job scripts */
				*module = true;
				return i + 1 < c->argc ? i + 1 : -1;
			}
			if (*p == 'X' || *p == 'W') {
				if (!p[1])
					i++;
				break;
			}
		}
	}
	return -1;
}

/*
 * Wrappers: programs that run the command after their own options (and,
 * for some, after an operand: the image, the CPU mask, the duration).
 * Each is described by its own parser's rules, so that stripping never
 * eats the command:
 * - GNU coreutils env(1), nice(1), timeout(1), stdbuf(1), nohup(1) and
 *   GNU time(1) (getopt_long: the options listed take a value);
 * - numactl(8) and taskset(1) (util-linux): the mask or list is an
 *   operand before the command;
 * - bash's exec builtin (exec [-cl] [-a name]);
 * - singularity/apptainer exec|run and docker/podman [container] run
 *   (cobra/pflag: a boolean flag never takes the next word, every other
 *   option takes exactly one, written "--opt V" or "--opt=V"), then the
 *   image; singularity run and docker run are taken to run the command
 *   given after the image (the image's entrypoint passing it on, as job
 *   images do), unless the image is a server's whose entrypoint takes
 *   the words after it as its options (text-generation-inference,
 *   vllm-openai, ollama: fw_serve.c), which then run as that server;
 * - trtllm-llmapi-launch (TensorRT-LLM), which runs its command in each
 *   MPI task;
 * - enroot start (enroot(1): --conf, --env, --mount take a value, --root
 *   and --rw do not), then the container name or image;
 * - nsys profile|launch (Nsight Systems CLI: every switch takes a value,
 *   "-t cuda,nvtx" or "--trace=cuda,nvtx") and ncu (Nsight Compute);
 * - ray job submit (Ray's CLI: the entrypoint is everything after "--");
 * - uv run and conda/mamba run (their options; -m/--module for uv).
 * A strict wrapper (one whose every option is listed here) meets an option
 * it does not know: whether it takes a value is not known, so the command
 * after it is not guessed but noted as not followed.
 */
struct wspec {
	const char *const *bools;   /* options that take no value */
	const char *const *vals;    /* options that take one value */
	const char *sbools;         /* single letters that take no value (grouped: "-it") */
	const char *svals;          /* single letters that take a value (attached: "-oL") */
	bool strict;                /* an option in neither list is not guessed */
};

enum {
	W_ENV = 1,          /* NAME=VALUE words follow the options (env) */
	W_DASHDASH = 2,     /* the command is everything after "--" (ray job submit) */
	W_NUMERIC = 4,      /* "-10" is an option of its own (nice) */
	W_CONTAINER = 8,    /* "docker container run" is "docker run" */
};

struct wrapper {
	const char *name;           /* the program's base name */
	const char *sub;            /* its subcommand(s) that run a command, '|'-separated, or NULL */
	const char *sub2;           /* a second word ("ray job submit"), or NULL */
	const struct wspec *sp;
	int operands;               /* words between the options and the command */
	unsigned flags;
};

static const char *const env_bools[] = { "-i", "--ignore-environment", "-0", "--null", "-v", "--debug",
					 "--list-signal-handling", "-", NULL };
static const char *const env_vals[] = { "-u", "--unset", "-C", "--chdir", "-S", "--split-string", NULL };
static const char *const time_bools[] = { "-p", "-v", "--verbose", "-a", "--append", "-q", "--quiet",
					  "--portability", NULL };
static const char *const time_vals[] = { "-f", "--format", "-o", "--output", NULL };
static const char *const exec_bools[] = { "-c", "-l", NULL };
static const char *const exec_vals[] = { "-a", NULL };
static const char *const stdbuf_vals[] = { "-i", "--input", "-o", "--output", "-e", "--error", NULL };
static const char *const nice_vals[] = { "-n", "--adjustment", NULL };
static const char *const timeout_bools[] = { "--preserve-status", "--foreground", "-v", "--verbose", NULL };
static const char *const timeout_vals[] = { "-s", "--signal", "-k", "--kill-after", NULL };
static const char *const numactl_bools[] = { "-l", "--localalloc", "-a", "--all", "-s", "--show", "-H",
					     "--hardware", "-b", "--balancing", "--strict", "-t", NULL };
static const char *const numactl_vals[] = {
	"-i", "--interleave", "-N", "--cpunodebind", "--cpubind", "-m", "--membind", "-C", "--physcpubind",
	"-p", "--preferred", "-P", "--preferred-many", "-w", "--weighted-interleave", NULL,
};
static const char *const taskset_bools[] = { "-a", "--all-tasks", "-p", "--pid", "-c", "--cpu-list", NULL };
static const char *const sing_bools[] = {
	"--nv", "--nvccli", "--rocm", "-e", "--cleanenv", "-c", "--contain", "-C", "--containall", "-w",
	"--writable", "--writable-tmpfs", "-f", "--fakeroot", "-u", "--userns", "-p", "--pid", "-i", "--ipc",
	"-n", "--net", "--uts", "--no-home", "--no-init", "--no-privs", "--compat", "--no-https",
	"--allow-setuid", "--keep-privs", "--no-umask", "--no-eval", "--boot", "--disable-cache", "--no-nv",
	"--oci", "--sif-fuse", "--unsquash", "--docker-login", "--containlibs", "--no-setgroups",
	"--oom-kill-disable", "--no-pid", "--cdi-dirs", "-h", "--help", NULL,
};
static const char *const sing_vals[] = {
	"-B", "--bind", "--mount", "-H", "--home", "-o", "--overlay", "-S", "--scratch", "-W", "--workdir",
	"--pwd", "--env", "--env-file", "--security", "--network", "--network-args", "--dns", "--hostname",
	"--app", "--fusemount", "--drop-caps", "--add-caps", "--apply-cgroups", "--cpus", "--cpu-shares",
	"--cpuset-cpus", "--cpuset-mems", "--memory", "--memory-reservation", "--memory-swap",
	"--pids-limit", "--blkio-weight", "--blkio-weight-device", "--no-mount", "--authfile",
	"--pem-path", "--passphrase", "--docker-host", "--device", "--config", NULL,
};
/* docker/cli cli/command/container/opts.go and run.go: the BoolVar flags. */
static const char *const docker_bools[] = {
	"-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--privileged", "--init", "-P",
	"--publish-all", "--read-only", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy",
	"--disable-content-trust", "-q", "--quiet", "--use-api-socket",
	/* podman run's own */
	"--replace", "--rmi", "--env-host", "--http-proxy", "--no-hosts", "--read-only-tmpfs",
	"--passwd", "--tls-verify", NULL,
};
static const char *const docker_vals[] = {
	"-a", "--attach", "-c", "--cpu-shares", "-e", "--env", "--env-file", "-h", "--hostname", "-l",
	"--label", "--label-file", "-m", "--memory", "-p", "--publish", "-u", "--user", "-v", "--volume",
	"-w", "--workdir", "--name", "--gpus", "--entrypoint", "--network", "--net", "--ipc", "--pid",
	"--uts", "--shm-size", "--ulimit", "--mount", "--tmpfs", "--volumes-from", "--device",
	"--device-cgroup-rule", "--cap-add", "--cap-drop", "--security-opt", "--runtime", "--cpus",
	"--cpuset-cpus", "--cpuset-mems", "--memory-swap", "--memory-reservation", "--restart",
	"--platform", "--pull", "--add-host", "--dns", "--dns-option", "--dns-search", "--expose",
	"--group-add", "--userns", "--cgroupns", "--cgroup-parent", "--log-driver", "--log-opt",
	"--stop-signal", "--stop-timeout", "--sysctl", "--detach-keys", "--cidfile", "--ip", "--ip6",
	"--link", "--mac-address", "--network-alias", "--pids-limit", "--storage-opt", "--domainname",
	"--health-cmd", "--health-interval", "--health-retries", "--health-timeout", "--isolation",
	"--oom-score-adj", "--annotation", "--volume-driver", "--blkio-weight",
	/* podman run's own */
	"--hooks-dir", "--userns-uid-map", "--uidmap", "--gidmap", "--subuidname", "--subgidname",
	"--systemd", "--arch", "--os", "--variant", "--authfile", "--cgroups", "--conmon-pidfile",
	"--secret", "--umask", "--timeout", "--env-merge", "--pod", NULL,
};
static const char *const enroot_bools[] = { "-r", "--root", "-w", "--rw", NULL };
static const char *const enroot_vals[] = { "-c", "--conf", "-e", "--env", "-m", "--mount", NULL };
static const char *const nsys_bools[] = { "-h", "--help", NULL };
static const char *const ncu_bools[] = {
	"-f", "--force-overwrite", "--nvtx", "--csv", "--quiet", "--call-stack", "--list-sets",
	"--list-sections", "--list-rules", "--list-metrics", "--open-in-ui", "-h", "--help", NULL,
};
static const char *const ncu_vals[] = {
	"-o", "--export", "--set", "--section", "--metrics", "-k", "--kernel-name", "-c", "--launch-count",
	"-s", "--launch-skip", "--target-processes", "--replay-mode", "--kernel-name-base",
	"--kernel-id", "--nvtx-include", "--nvtx-exclude", "--page", "--print-summary",
	"--clock-control", "--cache-control", "--graph-profiling", "--import-source", "--log-file",
	"--devices", "--section-folder", "--apply-rules", "--config-file", "--launch-skip-before-match",
	"--filter-mode", "--print-units", "--print-details", "--app-replay-buffer", NULL,
};
static const char *const ray_bools[] = { "--no-wait", "-v", "--verbose", NULL };
static const char *const ray_vals[] = {
	"--address", "--job-id", "--submission-id", "--runtime-env", "--runtime-env-json",
	"--metadata-json", "--working-dir", "--entrypoint-num-cpus", "--entrypoint-num-gpus",
	"--entrypoint-memory", "--entrypoint-resources", "--headers", "--log-style", "--log-color",
	"--entrypoint-label", "--verify", NULL,
};
static const char *const uv_bools[] = {
	"--no-sync", "--frozen", "--locked", "--isolated", "--no-project", "--all-extras", "--active",
	"--no-dev", "--dev", "--only-dev", "--offline", "-q", "--quiet", "-v", "--verbose", "--no-cache",
	"-n", "--no-editable", "--exact", "--inexact", "--all-packages", "--script", "-s", "--gui-script",
	"--no-env-file", "--no-config", "--no-progress", "--native-tls", "--no-default-groups",
	"--all-groups", "--refresh", "--no-build", "--no-binary", "--compile-bytecode", "--preview",
	"--no-python-downloads", "-m", "--module", NULL,
};
static const char *const conda_bools[] = { "--no-capture-output", "--live-stream", "-v", "--verbose",
					   "--debug-wrapper-scripts", "--dev", "-q", "--quiet", NULL };
static const char *const conda_vals[] = { "-n", "--name", "-p", "--prefix", "--cwd", NULL };

static const struct wspec env_ws = { env_bools, env_vals, "i0v", "uCS", true };
static const struct wspec time_ws = { time_bools, time_vals, "pvaq", "fo", true };
static const struct wspec exec_ws = { exec_bools, exec_vals, "cl", "a", true };
static const struct wspec stdbuf_ws = { NULL, stdbuf_vals, "", "ioe", true };
static const struct wspec nice_ws = { NULL, nice_vals, "", "n", true };
static const struct wspec timeout_ws = { timeout_bools, timeout_vals, "v", "sk", true };
static const struct wspec numactl_ws = { numactl_bools, numactl_vals, "lasHbt", "iNmCpPw", true };
static const struct wspec taskset_ws = { taskset_bools, NULL, "apc", "", true };
static const struct wspec sing_ws = { sing_bools, sing_vals, "eCcwfupin", "BHoSW", true };
static const struct wspec docker_ws = { docker_bools, docker_vals, "ditPq", "acehlmpuvw", true };
static const struct wspec enroot_ws = { enroot_bools, enroot_vals, "rw", "cem", true };
static const struct wspec nsys_ws = { nsys_bools, NULL, "h", NULL, false };
static const struct wspec ncu_ws = { ncu_bools, ncu_vals, "f", "okcs", true };
static const struct wspec ray_ws = { ray_bools, ray_vals, "v", "", true };
static const struct wspec uv_ws = { uv_bools, NULL, NULL, NULL, false };
static const struct wspec conda_ws = { conda_bools, conda_vals, "vq", "np", false };

static const struct wrapper wrappers[] = {
	{ "env", NULL, NULL, &env_ws, 0, W_ENV },
	{ "nohup", NULL, NULL, NULL, 0, 0 },
	{ "time", NULL, NULL, &time_ws, 0, 0 },
	{ "exec", NULL, NULL, &exec_ws, 0, 0 },
	{ "stdbuf", NULL, NULL, &stdbuf_ws, 0, 0 },
	{ "nice", NULL, NULL, &nice_ws, 0, W_NUMERIC },
	{ "timeout", NULL, NULL, &timeout_ws, 1, 0 },
	{ "numactl", NULL, NULL, &numactl_ws, 0, 0 },
	{ "taskset", NULL, NULL, &taskset_ws, 1, 0 },
	{ "singularity", "exec|run", NULL, &sing_ws, 1, 0 },
	{ "apptainer", "exec|run", NULL, &sing_ws, 1, 0 },
	{ "docker", "run", NULL, &docker_ws, 1, W_CONTAINER },
	{ "podman", "run", NULL, &docker_ws, 1, W_CONTAINER },
	{ "enroot", "start", NULL, &enroot_ws, 1, 0 },
	{ "nsys", "profile|launch", NULL, &nsys_ws, 0, 0 },
	{ "ncu", NULL, NULL, &ncu_ws, 0, 0 },
	{ "ray", "job", "submit", &ray_ws, 0, W_DASHDASH },
	{ "uv", "run", NULL, &uv_ws, 0, 0 },
	{ "conda", "run", NULL, &conda_ws, 0, 0 },
	{ "mamba", "run", NULL, &conda_ws, 0, 0 },
	{ "micromamba", "run", NULL, &conda_ws, 0, 0 },
	/* TensorRT-LLM's tensorrt_llm/llmapi/trtllm-llmapi-launch: a script
	 * with no options of its own that runs its command in each MPI task
	 * (rank 0 the server, the others its workers). */
	{ "trtllm-llmapi-launch", NULL, NULL, NULL, 0, 0 },
};

/* Says that the command a wrapper runs was not followed, and why. */
static void wrap_note(struct jr_ctx *cx, const struct jr_cmd *c, int i, const char *tool,
		      const char *why)
{
	struct jobread_src s;

	if (!cx)
		return;
	jr_src_word(&s, c, i, "", JR_STYLE_FLAG);
	jr_note(cx, ADV_CODE_SCRIPT_NOT_FOLLOWED, NULL,
		"%s:%d: %s: %s, so the command it runs was not followed; give the job's values "
		"with the --llm-* options", s.file, s.line, tool, why);
}

/*
 * Skips a wrapper's options from `from`.  Returns the index of the first
 * word that is not an option ("--" ends them), argc when none is left, or
 * -1 when an option of a strict wrapper is not known (then noted).
 */
static int wrap_skip(struct jr_ctx *cx, const struct jr_cmd *c, int from, const struct wrapper *wr)
{
	const struct wspec *sp = wr->sp;
	int i = from;

	while (i < c->argc) {
		const char *w = c->argv[i];
		char why[160];

		if (!sp || !w || w[0] != '-' || (!w[1] && !in_list(w, sp->bools)) ||
		    (c->unknown && c->unknown[i]))
			return i;
		if (!strcmp(w, "--"))
			return i + 1;
		if (in_list(w, sp->bools)) {
			i++;
			continue;
		}
		if (in_list(w, sp->vals)) {
			i += 2;
			continue;
		}
		if (w[1] == '-' && strchr(w, '=')) {
			i++;   /* "--opt=V" */
			continue;
		}
		if ((wr->flags & W_NUMERIC) && w[1] >= '0' && w[1] <= '9') {
			i++;   /* nice -10 */
			continue;
		}
		if (w[1] != '-' && sp->svals && strchr(sp->svals, w[1])) {
			i += w[2] ? 1 : 2;   /* "-oL" or "-o L" */
			continue;
		}
		if (w[1] != '-' && sp->sbools) {
			/* Grouped single letters ("-it"), the last of which may
			 * take a value ("-itv /a:/b"). */
			const char *p = w + 1;

			while (*p && strchr(sp->sbools, *p))
				p++;
			if (!*p) {
				i++;
				continue;
			}
			if (p > w + 1 && sp->svals && strchr(sp->svals, *p)) {
				i += p[1] ? 1 : 2;
				continue;
			}
		}
		if (!sp->strict) {
			/* Not listed: a value, unless the next word is an option
			 * or the script (a wrapper's values are not Python files). */
			const char *v = i + 1 < c->argc ? c->argv[i + 1] : NULL;
			size_t n = v ? strlen(v) : 0;

			i += v && v[0] != '-' && !(n > 3 && !strcmp(v + n - 3, ".py")) ? 2 : 1;
			continue;
		}
		adv_snprintf(why, sizeof(why), "its option %s is not known to advisor (it may take a value)",
			     w);
		wrap_note(cx, c, i, wr->name, why);
		return -1;
	}
	return c->argc;
}

/*
 * Bind mounts a container starter states, for jr_mount (ctx.h):
 * - pyxis --container-mounts=SRC[:DST[:FLAGS]][,...] (pyxis README; DST
 *   defaults to SRC), apptainer/singularity -B/--bind with the same form,
 *   docker/podman -v/--volume SRC:DST[:OPTS] and enroot start -m/--mount
 *   SRC:DST (entries split at commas; docker's comma-separated OPTS are
 *   no paths and are dropped);
 * - docker/podman/apptainer --mount type=bind,source=S,target=T (also
 *   src=, dst=, destination=).
 * A value not known statically is still split: an entry that did not come
 * out as two absolute (or "."-relative) paths is not mapped.
 */
static void mount_pair(struct jr_ctx *cx, const char *e, size_t n)
{
	const char *c1 = memchr(e, ':', n);
	const char *c2;

	if (!c1) {
		jr_mount(cx, e, n, e, n);
		return;
	}
	c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - e));
	jr_mount(cx, e, (size_t)(c1 - e), c1 + 1, (size_t)((c2 ? c2 : e + n) - (c1 + 1)));
}

static void mount_spec(struct jr_ctx *cx, const char *v)
{
	while (v && *v) {
		const char *end = strchr(v, ',');
		size_t n = end ? (size_t)(end - v) : strlen(v);

		if (n)
			mount_pair(cx, v, n);
		v = end ? end + 1 : NULL;
	}
}

static void mount_keyed(struct jr_ctx *cx, const char *v)
{
	static const char *const srck[] = { "source=", "src=", NULL };
	static const char *const dstk[] = { "target=", "destination=", "dst=", NULL };
	const char *src = NULL, *dst = NULL;
	size_t sn = 0, dn = 0;
	bool bind = true;

	while (v && *v) {
		const char *end = strchr(v, ',');
		size_t n = end ? (size_t)(end - v) : strlen(v);

		for (int k = 0; srck[k]; k++)
			if (!strncmp(v, srck[k], strlen(srck[k]))) {
				src = v + strlen(srck[k]);
				sn = n - strlen(srck[k]);
			}
		for (int k = 0; dstk[k]; k++)
			if (!strncmp(v, dstk[k], strlen(dstk[k]))) {
				dst = v + strlen(dstk[k]);
				dn = n - strlen(dstk[k]);
			}
		if (!strncmp(v, "type=", 5) && strncmp(v, "type=bind", n > 9 ? n : 9) != 0)
			bind = false;
		v = end ? end + 1 : NULL;
	}
	if (bind && src && dst)
		jr_mount(cx, src, sn, dst, dn);
}

/* The mounts among the options c->argv[from..to) of a container starter. */
static void wrap_mounts(struct jr_ctx *cx, const struct jr_cmd *c, int from, int to, const char *name)
{
	bool docker = !strcmp(name, "docker") || !strcmp(name, "podman");
	bool sing = !strcmp(name, "singularity") || !strcmp(name, "apptainer");
	bool enroot = !strcmp(name, "enroot");
	static const char *const spec_d[] = { "-v", "--volume", NULL };
	static const char *const spec_s[] = { "-B", "--bind", NULL };
	static const char *const spec_e[] = { "-m", "--mount", NULL };

	if (!docker && !sing && !enroot)
		return;
	for (int i = from; i < to && i < c->argc; i++) {
		const char *w = c->argv[i];
		const char *const *spec = docker ? spec_d : sing ? spec_s : spec_e;
		const char *v = NULL;
		bool keyed = false;

		if (!w || w[0] != '-')
			continue;
		for (int k = 0; spec[k]; k++) {
			size_t n = strlen(spec[k]);

			if (!strncmp(w, spec[k], n) && (w[n] == '=' || w[n] == '\0'))
				v = w[n] ? w + n + 1 : (i + 1 < to ? c->argv[i + 1] : NULL);
		}
		if (!v && !enroot && !strncmp(w, "--mount", 7) && (w[7] == '=' || w[7] == '\0')) {
			v = w[7] ? w + 8 : (i + 1 < to ? c->argv[i + 1] : NULL);
			keyed = true;
		}
		if (v && keyed)
			mount_keyed(cx, v);
		else if (v)
			mount_spec(cx, v);
	}
}

/* Strips one wrapper at i.  Returns the index of the command it runs, i
 * itself when argv[i] is no wrapper, -1 when nothing is left or what is
 * left is not known (noted). */
static int strip_wrapper(struct jr_ctx *cx, const struct jr_cmd *c, int i)
{
	const char *b = jr_basename(c->argv[i]);
	const struct wrapper *wr = NULL;
	int j = i + 1;

	for (size_t k = 0; k < ADV_ARRAY_SIZE(wrappers); k++)
		if (!strcmp(b, wrappers[k].name)) {
			wr = &wrappers[k];
			break;
		}
	if (!wr)
		return i;
	if (wr->sub) {
		if ((wr->flags & W_CONTAINER) && j < c->argc && !strcmp(c->argv[j], "container"))
			j++;
		if (j >= c->argc || !jr_word_in(c->argv[j], wr->sub))
			return i;   /* "docker build", "nsys stats": runs no command of the job */
		j++;
		if (wr->sub2) {
			if (j >= c->argc || strcmp(c->argv[j], wr->sub2))
				return i;
			j++;
		}
	}
	if (wr->flags & W_DASHDASH) {
		for (int k = j; k < c->argc; k++)
			if (!strcmp(c->argv[k], "--"))
				return k + 1 < c->argc ? k + 1 : -1;
	}
	{
		int from = j;

		j = wrap_skip(cx, c, j, wr);
		if (j < 0)
			return -1;
		wrap_mounts(cx, c, from, j, wr->name);
	}
	if (wr->flags & W_ENV)
		while (j < c->argc && c->argv[j] && strchr(c->argv[j], '=') && c->argv[j][0] != '=')
			j++;
	/* docker run IMAGE --flags, singularity run IMAGE --flags: an image
	 * whose entrypoint is a server a reader knows (TGI, vLLM, ollama)
	 * runs it with the words after the image; the image word stands for
	 * the program (fw_serve.c, jr_image_entry). */
	if (wr->operands && j < c->argc && c->argv[j] && !(c->unknown && c->unknown[j]) &&
	    ((wr->flags & W_CONTAINER) || !strcmp(c->argv[i + 1], "run")) &&
	    (j + 1 >= c->argc || (c->argv[j + 1] && c->argv[j + 1][0] == '-')) &&
	    jr_image_entry(c->argv[j]))
		return j;
	if (j + wr->operands >= c->argc) {
		if (wr->operands && j < c->argc)
			/* singularity run IMAGE, docker run IMAGE: the image's own command. */
			wrap_note(cx, c, j, wr->name, "the command is the image's own, not in the job");
		return -1;
	}
	return j + wr->operands;
}

/* uv run -m/--module MODULE */
static bool uv_module(const struct jr_cmd *c, int i, int prog)
{
	if (strcmp(jr_basename(c->argv[i]), "uv") != 0)
		return false;
	for (int k = i + 2; k < prog; k++)
		if (!strcmp(c->argv[k], "-m") || !strcmp(c->argv[k], "--module"))
			return true;
	return false;
}

/* ---- srun and mpirun: they start the program directly ---------------------------------- */

static bool opts_have(const struct jr_cmd *opts, const char *a, const char *b);

/*
 * The part of the allocation an srun step runs on (srun(1): -N/--nodes,
 * -w/--nodelist, -x/--exclude, -r/--relative; a step without them has
 * every node of the job).  A job that starts a trainer on some nodes and a
 * server on the others (RL with a vLLM generation node) is judged step by
 * step: the trainer's launch against its own nodes, not the whole job.
 * nodes: -N's value when known; unknown_n: -N is computed at run time.
 */
static void step_subset(struct jr_ctx *cx, const struct jr_cmd *opts, long long nodes, bool unknown_n,
			const struct found *fN)
{
	static const char *const list_names[] = {
		"-w", "--nodelist", "-x", "--exclude", "-r", "--relative", NULL,
	};
	struct jobread_out *out = jr_out(cx);
	long long job = job_nodes(jr_input(cx));
	struct found fl;
	bool listed = find(opts, list_names, true, &fl);

	/* --overlap: the step shares its nodes with the steps already
	 * running.  A driver beside a Ray cluster runs so (verl's main_ppo,
	 * OpenRLHF): Ray places its workers on every node of the job, in the
	 * steps that run "ray start", so the driver's node is no part. */
	if (opts_have(opts, "--overlap", NULL))
		return;
	if (nodes > 0 && job > 0 && nodes < job) {
		out->step_nodes = (int)nodes;
		out->step_src = fN->src;
	} else if (unknown_n || (listed && nodes <= 0 && job != 1)) {
		/* A subset whose size is not known before the job runs. */
		out->step_nodes = -1;
		out->step_src = unknown_n ? fN->src : fl.src;
	}
}

/*
 * The component(s) of a heterogeneous job an srun step runs in: srun
 * --het-group=EXPR (a number, a comma list or a range, srun(1)); without
 * it a step in a heterogeneous allocation runs in component 0 (Slurm's
 * heterogeneous_jobs.html, "Launching Applications (Job Steps)").  Each
 * component's resources are its own #SBATCH block of the batch script
 * (jobreq_parse_script_het).  Returns 0 when the job is not heterogeneous,
 * 1 with *step the union of the step's components (*group the first),
 * -1 when the group is not known before the job runs or names no
 * component of the script.
 */
static int het_step(struct jr_ctx *cx, const struct jr_cmd *opts, struct jobreq *step, int *group,
		    struct found *fg)
{
	static const char *const names[] = { "--het-group", "--pack-group", NULL };
	const struct jobread_input *in = jr_input(cx);
	struct jobreq_opts *comp, pick[JOBREQ_HET_MAX];
	bool in_group[JOBREQ_HET_MAX] = { false };
	char err[8];
	int n = 0, k = 0;

	*group = 0;
	if (!in->script || in->script_len == 0)
		return 0;
	comp = malloc(sizeof(*comp) * JOBREQ_HET_MAX);
	if (!comp)
		return 0;
	if (jobreq_parse_script_het(in->script, in->script_len, comp, JOBREQ_HET_MAX, &n, NULL, err,
				    sizeof(err)) != 0 || n < 2) {
		free(comp);
		return 0;
	}
	if (!find(opts, names, false, fg)) {
		in_group[0] = true;
	} else if (fg->unknown || !fg->value) {
		free(comp);
		return -1;
	} else {
		/* "1", "0,2", "0-1": each named component once. */
		const char *p = fg->value;

		while (*p) {
			char *end;
			long a = strtol(p, &end, 10), b = a;

			if (end == p || a < 0)
				break;
			if (*end == '-') {
				p = end + 1;
				b = strtol(p, &end, 10);
				if (end == p || b < a)
					break;
			}
			for (long v = a; v <= b && v < JOBREQ_HET_MAX; v++)
				in_group[v] = true;
			if (b >= n || b >= JOBREQ_HET_MAX)
				break;
			p = end;
			if (*p == ',')
				p++;
			else if (*p)
				break;
		}
		if (*p) {
			free(comp);
			return -1;
		}
	}
	*group = -1;
	for (int i = 0; i < n && i < JOBREQ_HET_MAX; i++)
		if (in_group[i]) {
			if (*group < 0)
				*group = i;
			pick[k++] = comp[i];
		}
	free(comp);
	if (k == 0)
		return -1;
	jobreq_het_union(pick, k, step);
	return 1;
}

/* The step of a heterogeneous job: its nodes (-1 not known), GPUs (0 not
 * known apart from the job's per node) and component (1 + index). */
static void jobread_out_step(struct jr_ctx *cx, int nodes, int gpus, int group,
			     const struct jobread_src *src, const struct jr_cmd *opts)
{
	struct jobread_out *out = jr_out(cx);
	long long job = out->het_nodes > 0 ? out->het_nodes : job_nodes(jr_input(cx));

	if (nodes > 0 && job > 0 && nodes >= job && group <= 1)
		return;   /* the whole job */
	out->step_nodes = nodes;
	out->step_gpus = gpus;
	out->het_group = group;
	if (src)
		out->step_src = *src;
	else
		src_default(&out->step_src, opts, "srun");
}

/*
 * The GPUs per node an srun step asks for itself (srun(1): --gpus-per-
 * node, --gres=gpu:N), read with Slurm's option table (jobreq.c): the step
 * sees only those of the job's GPUs, so its launch is judged against
 * them.  On the test cluster (22.05.8) both gave the step
 * SLURM_GPUS_ON_NODE=4 of the job's 8; --gpus=2 on a step kept
 * SLURM_GPUS_ON_NODE=8 (TresPerNode still the job's), so the per-step
 * and per-task forms are not taken.  Kept when fewer than the step would
 * have otherwise; a count not known is not kept.
 */
static void step_gpus(struct jr_ctx *cx, const struct jr_cmd *opts, const struct starter *st,
		      long long job_n)
{
	struct jobread_out *out = jr_out(cx);
	const struct jobread_input *in = jr_input(cx);
	long long have = out->step_gpus > 0 ? out->step_gpus
		       : out->het_gpus > 0 ? out->het_gpus : in->res.gpus;
	long long nodes = st->nodes > 0 ? st->nodes : out->step_nodes > 0 ? out->step_nodes : job_n;
	long long total = 0;
	struct jobreq_opts o;
	char err[8];

	if (have <= 0 || out->step_nodes < 0 || opts->argc < 2)
		return;
	jobreq_opts_init(&o);
	(void)jobreq_parse_argv(JOBREQ_SRUN, opts->argc, opts->argv, &o, NULL, err, sizeof(err));
	if ((o.gpus_per_node > 0 || o.gres_gpus > 0) && nodes > 0)
		total = mul(o.gpus_per_node > 0 ? o.gpus_per_node : o.gres_gpus, nodes);
	if (total > 0 && total < have && total <= INT_MAX) {
		static const char *const gpn_names[] = { "--gpus-per-node", "--gres", NULL };
		struct found f;

		out->step_gpus = (int)total;
		if (out->step_nodes == 0 && find(opts, gpn_names, false, &f))
			out->step_src = f.src;
	}
}

static void read_srun_counts(struct jr_ctx *cx, const struct jr_cmd *opts, struct starter *st,
			     long long *job_n_out)
{
	static const char *const n_names[] = { "-n", "--ntasks", NULL };
	static const char *const nodes_names[] = { "-N", "--nodes", NULL };
	static const char *const tpn_names[] = { "--ntasks-per-node", NULL };
	/* A step's own GPUs (srun(1)); --gres only for gpu. */
	static const char *const gpu_names[] = { "-G", "--gpus", "--gpus-per-node", "--gpus-per-task",
						 "--gres", NULL };
	const struct jobread_input *in = jr_input(cx);
	struct found fn, fN, ft, fg, fgpu;
	long long n = -1, nodes = -1, tpn = -1;
	int rn, rN, rt, het, group;
	struct jobreq hs;
	/* The job's nodes and tasks as a step without -N/-n inherits them: the
	 * component's in a heterogeneous job. */
	long long job_n = job_nodes(in);
	int job_t = in->ntasks, job_tpn = in->ntasks_per_node;

	memset(st, 0, sizeof(*st));
	st->present = true;
	st->name = "srun";
	st->world = st->nodes = st->nproc = -1;
	/* pyxis' mounts, every occurrence (each adds to the list). */
	for (int i = 0; i < opts->argc; i++)
		if (opts->argv[i] && !strncmp(opts->argv[i], "--container-mounts", 18)) {
			const char *w = opts->argv[i] + 18;

			if (*w == '=')
				mount_spec(cx, w + 1);
			else if (!*w && i + 1 < opts->argc)
				mount_spec(cx, opts->argv[i + 1]);
		}
	rn = opt_int(cx, opts, n_names, true, JR_WORLD, &fn, &n);
	if (find(opts, nodes_names, true, &fN) && !fN.unknown && fN.value && strchr(fN.value, '-')) {
		/* "-N 2-4": a range; only MIN == MAX says how many. */
		char *end;
		long a = strtol(fN.value, &end, 10);

		rN = V_BAD;
		if (*end == '-' && a > 0 && a < INT_MAX && a == strtol(end + 1, NULL, 10)) {
			nodes = a;
			rN = V_KNOWN;
		}
	} else {
		rN = opt_int(cx, opts, nodes_names, true, JR_NODES, &fN, &nodes);
	}
	rt = opt_int(cx, opts, tpn_names, false, JR_NPROC_PER_NODE, &ft, &tpn);
	if (!jr_out(cx)->gpu_step && find(opts, gpu_names, true, &fgpu) &&
	    (strcmp(fgpu.which, "--gres") || (fgpu.value && !strncmp(fgpu.value, "gpu", 3)))) {
		jr_out(cx)->gpu_step = true;
		jr_out(cx)->gpu_step_src = fgpu.src;
	}
	het = het_step(cx, opts, &hs, &group, &fg);
	if (het == 0) {
		step_subset(cx, opts, rN == V_KNOWN ? nodes : -1, rN == V_UNKNOWN, &fN);
	} else if (het < 0) {
		/* A component the reader cannot tell: its size is not known. */
		jobread_out_step(cx, -1, 0, 0, fg.idx >= 0 ? &fg.src : NULL, opts);
	} else {
		/* The step has its component(s), or -N of them. */
		long long sn = rN == V_KNOWN && nodes > 0 && nodes < hs.nodes ? nodes : hs.nodes;
		long long sg = sn == hs.nodes ? hs.gpus
			     : hs.gpus_per_node > 0 ? mul(sn, hs.gpus_per_node) : 0;

		jobread_out_step(cx, rN == V_UNKNOWN ? -1 : (int)sn, (int)(sg > 0 ? sg : 0), group + 1,
				 fg.idx >= 0 ? &fg.src : NULL, opts);
		job_n = hs.nodes;
		job_t = hs.opt.ntasks;
		job_tpn = hs.opt.ntasks_per_node;
	}
	*job_n_out = job_n;
	if (rn == V_UNKNOWN || rN == V_UNKNOWN || rt == V_UNKNOWN) {
		st->present = false;   /* what was unknown is said; no world */
		return;
	}
	if (rN == V_KNOWN && nodes > 0) {
		st->nodes = nodes;
		st->nodes_src = fN.src;
	}
	if (rt == V_KNOWN && tpn > 0) {
		st->nproc = tpn;
		st->nproc_src = ft.src;
	}
	if (rn == V_KNOWN && n > 0) {
		st->world = n;
		st->world_src = fn.src;
		return;
	}
	if (nodes <= 0)
		nodes = job_n;
	if (tpn > 0) {
		st->world = mul(nodes, tpn);
		src_default(&st->world_src, opts, "srun");
		st->world_src.line = ft.src.line;
		adv_strlcpy(st->world_src.file, ft.src.file, sizeof(st->world_src.file));
		return;
	}
	/* No task count on srun: the step inherits the job's (SLURM_NTASKS,
	 * SLURM_NTASKS_PER_NODE), else one task per node. */
	src_default(&st->world_src, opts, "--ntasks");
	if (job_t > 0 && rN != V_KNOWN)
		st->world = job_t;
	else if (job_tpn > 0)
		st->world = mul(nodes, job_tpn);
	else if (job_t > 0)
		st->world = job_t;
	else
		st->world = nodes > 0 ? nodes : -1;
}

static void read_srun(struct jr_ctx *cx, const struct jr_cmd *opts, struct starter *st)
{
	long long job_n = 0;

	read_srun_counts(cx, opts, st, &job_n);
	step_gpus(cx, opts, st, job_n);
}

static void read_mpirun(struct jr_ctx *cx, const struct jr_cmd *opts, struct starter *st)
{
	static const char *const np_names[] = { "-np", "--np", "-n", "--n", "-c", NULL };
	static const char *const ppn_names[] = { "-N", "--npernode", "-npernode", "-ppn", "--ppn",
						 "-perhost", NULL };
	static const char *const map_names[] = { "--map-by", "-map-by", NULL };
	static const char *const host_names[] = { "-H", "--host", "-host", "-hosts", "--hostfile",
						  "-hostfile", "--machinefile", "-machinefile", "-f",
						  "--default-hostfile", NULL };
	const struct jobread_input *in = jr_input(cx);
	struct found fn, fp, fm, fh;
	long long n = -1, ppn = -1;
	int rn, rp;
	bool hosts;

	memset(st, 0, sizeof(*st));
	st->present = true;
	st->name = jr_basename(opts->argv[0]);
	st->world = st->nodes = st->nproc = -1;
	rn = opt_int(cx, opts, np_names, false, JR_WORLD, &fn, &n);
	rp = opt_int(cx, opts, ppn_names, false, JR_NPROC_PER_NODE, &fp, &ppn);
	if (rp == V_ABSENT && find(opts, map_names, false, &fm) && fm.value && !fm.unknown &&
	    !strncmp(fm.value, "ppr:", 4)) {
		/* --map-by ppr:N:node[:PE=..] */
		char *end;
		long v = strtol(fm.value + 4, &end, 10);

		if (v > 0 && v < INT_MAX && !strncmp(end, ":node", 5)) {
			ppn = v;
			rp = V_KNOWN;
			fp = fm;
		}
	}
	hosts = find(opts, host_names, false, &fh);
	if (rn == V_UNKNOWN || rp == V_UNKNOWN) {
		st->present = false;
		return;
	}
	if (rp == V_KNOWN && ppn > 0) {
		st->nproc = ppn;
		st->nproc_src = fp.src;
	}
	if (rn == V_KNOWN && n > 0) {
		st->world = n;
		st->world_src = fn.src;
		return;
	}
	if (hosts) {
		/* The host list decides how many processes run where. */
		jr_note(cx, ADV_CODE_SCRIPT_UNKNOWN, NULL,
			"%s:%d: %s %s names the hosts at run time, so the processes %s starts are not known",
			fh.src.file, fh.src.line, fh.which, fh.value ? fh.value : "", st->name);
		st->present = st->nproc > 0;
		return;
	}
	if (ppn > 0) {
		st->world = mul(job_nodes(in), ppn);
		src_default(&st->world_src, opts, st->name);
		return;
	}
	/* Inside an allocation mpirun fills the job's slots (its tasks). */
	src_default(&st->world_src, opts, "-np");
	if (in->ntasks > 0)
		st->world = in->ntasks;
	else if (in->ntasks_per_node > 0)
		st->world = mul(job_nodes(in), in->ntasks_per_node);
	else
		st->world = job_nodes(in) > 0 ? job_nodes(in) : -1;
}

/* ---- the ML launchers: they set the world themselves ----------------------------------- */

static void set_world(struct jr_ctx *cx, const struct jr_cmd *opts, const char *key, long long nodes,
		      long long nproc)
{
	struct jobread_src s;
	long long w = mul(nodes, nproc);

	src_default(&s, opts, key);
	if (w > 0)
		jr_set_int(cx, JR_WORLD, w, &s);
}

/* torchrun's --nproc-per-node: a count, or "gpu"/"auto" for the node's
 * GPUs.  Returns the count, 0 when not known (and said so). */
static long long nproc_value(struct jr_ctx *cx, const struct found *f)
{
	long long v;

	if (f->unknown) {
		jr_set_unknown(cx, JR_NPROC_PER_NODE, &f->src, "a value computed at run time");
		return 0;
	}
	if (f->value && jr_parse_ll(f->value, &v) && v > 0)
		return v;
	if (f->value && (!strcmp(f->value, "gpu") || !strcmp(f->value, "auto"))) {
		v = job_gpn(jr_input(cx));
		if (v > 0)
			return v;
		jr_set_unknown(cx, JR_NPROC_PER_NODE, &f->src,
			       "one process per GPU, and the job does not say how many GPUs a node has");
		return 0;
	}
	jr_set_unknown(cx, JR_NPROC_PER_NODE, &f->src, f->value ? f->value : "no value");
	return 0;
}

/* torchrun --nnodes N or MIN:MAX.  Returns the count, 0 when unknown. */
static long long nnodes_value(struct jr_ctx *cx, const struct found *f)
{
	long long a, b;
	char buf[32];
	const char *colon;

	if (f->unknown) {
		jr_set_unknown(cx, JR_NODES, &f->src, "a value computed at run time");
		return 0;
	}
	if (f->value && jr_parse_ll(f->value, &a) && a > 0)
		return a;
	colon = f->value ? strchr(f->value, ':') : NULL;
	if (colon && (size_t)(colon - f->value) < sizeof(buf)) {
		memcpy(buf, f->value, (size_t)(colon - f->value));
		buf[colon - f->value] = '\0';
		if (jr_parse_ll(buf, &a) && jr_parse_ll(colon + 1, &b) && a > 0 && b >= a) {
			if (a != b)
				/* Elastic: the run starts with at least MIN and
				 * grows to MAX; the job's nodes are meant for MAX. */
				jr_note(cx, ADV_CODE_SCRIPT_ASSUMED, NULL,
					"%s:%d: %s %s is elastic; %lld nodes assumed", f->src.file,
					f->src.line, f->which, f->value, b);
			return b;
		}
	}
	jr_set_unknown(cx, JR_NODES, &f->src, f->value ? f->value : "no value");
	return 0;
}

/*
 * The rank flag of a launcher that an srun step starts once per task,
 * written with the batch shell's own $SLURM_NODEID / $SLURM_PROCID /
 * $SLURM_LOCALID (jr_cmd.batch_rank): the batch shell expands it once,
 * to 0, before srun starts the tasks, so every copy gets the same rank.
 * copies: the tasks of the srun step (0: no srun, -1: not known);
 * nodes: the nodes the launcher is told to expect (0: not known).
 * used: how the launcher takes the flag: 1 it is the rank (torchrun's
 * static rendezvous), 0 it is ignored (a dynamic rendezvous), -1 that is
 * decided at run time.  A proof (reject) when every copy surely takes the
 * same rank; a warning that says why where one of these is not known.
 */
static void rank_once(struct jr_ctx *cx, const struct jr_cmd *opts, const char *launcher,
		      const struct found *f, long long copies, long long nodes, int used,
		      const char *why_used)
{
	struct jobread_out *out = jr_out(cx);
	int vi = f->idx;
	bool proof;

	if (f->idx < 0 || !opts->batch_rank || copies == 0 || copies == 1 || nodes == 1 ||
	    used == 0 || out->rank_once.message[0])
		return;
	/* "--node_rank V" (the value is the next word) or "--node_rank=V". */
	if (!strchr(opts->argv[f->idx], '=') && f->idx + 1 < opts->argc)
		vi = f->idx + 1;
	if (!opts->batch_rank[vi])
		return;
	proof = copies > 1 && nodes > 1 && used == 1;
	out->rank_sev = proof ? ADV_SEV_REJECT : ADV_SEV_WARN;
	adv_strlcpy(out->rank_once.code, engine_code_name(ADV_CODE_RANK_EXPANDED_ONCE),
		    sizeof(out->rank_once.code));
	{
		char tasks[48];

		if (copies > 0)
			adv_snprintf(tasks, sizeof(tasks), "its %lld tasks", copies);
		else
			adv_strlcpy(tasks, "its tasks", sizeof(tasks));
		adv_snprintf(out->rank_once.message, sizeof(out->rank_once.message),
			     "%s:%d: %s takes the batch shell's own rank ($SLURM_NODEID, $SLURM_PROCID: "
			     "0) before srun starts %s: every copy of %s gets the same rank; %s",
			     f->src.file, f->src.line, f->which, tasks, launcher,
			     proof ? why_used
			     : copies < 0 ? "it fails if the step starts more than one task, known "
					    "only at run time"
			     : nodes <= 0 ? "it fails if the launcher expects more than one node, known "
					    "only at run time"
			     : why_used);
	}
	adv_snprintf(out->rank_once.fix, sizeof(out->rank_once.fix),
		     "let each task expand it: srun bash -c '... %s $SLURM_NODEID ...' (single "
		     "quotes), or %s", f->which,
		     !strcmp(launcher, "deepspeed")
		     ? "one deepspeed that starts every node over ssh (no --no_ssh, no srun)"
		     : "a rendezvous that assigns the ranks itself (--rdzv_backend c10d)");
}

/*
 * torchrun's rendezvous backend (torch/distributed/run.py, get_args_parser:
 * --rdzv-backend/--rdzv_backend, default "static"; --standalone sets
 * "c10d").  config_from_args passes --node-rank to the rendezvous only
 * when the backend is "static" (rdzv_configs["rank"] = args.node_rank):
 * c10d, etcd and etcd-v2 assign the ranks themselves.  Returns 1 static,
 * 0 another, -1 a value computed at run time.
 */
static int torchrun_rank_used(const struct jr_cmd *opts)
{
	static const char *const backend[] = { "--rdzv-backend", "--rdzv_backend", NULL };
	static const char *const standalone[] = { "--standalone", NULL };
	struct found f;

	if (find(opts, standalone, false, &f))
		return 0;
	if (!find(opts, backend, false, &f))
		return 1;
	if (f.unknown || !f.value)
		return -1;
	return !strcmp(f.value, "static") ? 1 : 0;
}

static void read_torchrun(struct jr_ctx *cx, const struct jr_cmd *opts, long long copies)
{
	static const char *const rank_names[] = { "--node-rank", "--node_rank", NULL };
	struct found fr;
	static const char *const nnodes_names[] = { "--nnodes", NULL };
	static const char *const nproc_names[] = { "--nproc-per-node", "--nproc_per_node", NULL };
	static const char *const standalone[] = { "--standalone", NULL };
	struct found fn, fp, fs;
	long long nodes = 1, nproc = 1;
	struct jobread_src s;

	if (find(opts, nnodes_names, false, &fn)) {
		nodes = nnodes_value(cx, &fn);
		if (nodes > 0)
			jr_set_int(cx, JR_NODES, nodes, &fn.src);
	} else {
		/* Without --nnodes torchrun runs on one node (--standalone too). */
		if (find(opts, standalone, false, &fs))
			jr_src_word(&s, opts, fs.idx, "--nnodes", JR_STYLE_FLAG);
		else
			src_default(&s, opts, "--nnodes");
		jr_set_int(cx, JR_NODES, 1, &s);
	}
	if (find(opts, nproc_names, false, &fp)) {
		nproc = nproc_value(cx, &fp);
		if (nproc > 0)
			jr_set_int(cx, JR_NPROC_PER_NODE, nproc, &fp.src);
	} else {
		src_default(&s, opts, "--nproc-per-node");
		jr_set_int(cx, JR_NPROC_PER_NODE, 1, &s);
	}
	if (nodes > 0 && nproc > 0)
		set_world(cx, opts, "torchrun", nodes, nproc);
	if (find(opts, rank_names, false, &fr)) {
		int used = torchrun_rank_used(opts);

		rank_once(cx, opts, "torchrun", &fr, copies, nodes, used,
			  used == 1 ? "torchrun's static rendezvous (the default) takes it, so the "
				      "nodes wait for ranks that never come"
				    : "it fails under torchrun's static rendezvous (the default), and the "
				      "backend is named at run time");
	}
}

static void read_deepspeed(struct jr_ctx *cx, const struct jr_cmd *opts, long long copies)
{
	static const char *const rank_names[] = { "--node_rank", NULL };
	static const char *const nossh_names[] = { "--no_ssh", NULL };
	struct found fr, fx;
	static const char *const nodes_names[] = { "--num_nodes", NULL };
	static const char *const gpus_names[] = { "--num_gpus", "--num_accelerators", NULL };
	static const char *const host_names[] = { "-H", "--hostfile", NULL };
	static const char *const incl_names[] = { "-i", "--include", "-e", "--exclude", NULL };
	struct found fn, fg, fh, fi;
	long long nodes = -1, gpus = -1;
	int rn, rg;
	bool hostfile = find(opts, host_names, false, &fh);
	struct jobread_src s;

	src_default(&s, opts, "deepspeed");
	jr_set_int(cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &s);
	if (find(opts, incl_names, false, &fi)) {
		/* Which GPUs of which hosts: decided by the resource filter. */
		jr_set_unknown(cx, JR_WORLD, &fi.src, "the hosts and GPUs selected at run time");
		return;
	}
	rn = opt_int(cx, opts, nodes_names, false, JR_NODES, &fn, &nodes);
	rg = opt_int(cx, opts, gpus_names, false, JR_NPROC_PER_NODE, &fg, &gpus);
	if (rn == V_KNOWN && nodes > 0) {
		jr_set_int(cx, JR_NODES, nodes, &fn.src);
	} else if (rn != V_UNKNOWN && hostfile) {
		jr_set_unknown(cx, JR_NODES, &fh.src, "the hosts listed in the hostfile, read at run time");
		nodes = -1;
	} else if (rn != V_UNKNOWN) {
		/* No hostfile: the launcher runs on the local node only. */
		nodes = 1;
		src_default(&s, opts, "--num_nodes");
		jr_set_int(cx, JR_NODES, 1, &s);
	}
	if (rg == V_KNOWN && gpus > 0) {
		jr_set_int(cx, JR_NPROC_PER_NODE, gpus, &fg.src);
	} else if (rg != V_UNKNOWN) {
		/* Default: every GPU of each node. */
		gpus = job_gpn(jr_input(cx));
		src_default(&s, opts, "--num_gpus");
		if (gpus > 0)
			jr_set_int(cx, JR_NPROC_PER_NODE, gpus, &s);
	}
	if (nodes > 0 && gpus > 0)
		set_world(cx, opts, "deepspeed", nodes, gpus);
	/* deepspeed/launcher/runner.py: --node_rank is read only with
	 * --no_ssh ("Launch training independently on each node"), which
	 * hands it to deepspeed.launcher.launch as this node's rank; without
	 * it one launcher starts every node over pdsh and no rank is taken. */
	if (find(opts, rank_names, false, &fr) && find(opts, nossh_names, false, &fx))
		rank_once(cx, opts, "deepspeed", &fr, copies, nodes > 0 ? nodes : 0, 1,
			  "deepspeed --no_ssh gives each node the rank of --node_rank, so every node "
			  "runs node 0's ranks");
}

static void read_accelerate(struct jr_ctx *cx, const struct jr_cmd *opts, long long copies)
{
	static const char *const rank_names[] = { "--machine_rank", "--machine-rank", NULL };
	static const char *const rdzv_names[] = { "--rdzv_backend", "--rdzv-backend", NULL };
	static const char *const cfg_names[] = { "--config_file", "--config-file", NULL };
	static const char *const np_names[] = { "--num_processes", "--num-processes", NULL };
	static const char *const nm_names[] = { "--num_machines", "--num-machines", NULL };
	static const char *const mp_names[] = { "--mixed_precision", "--mixed-precision", NULL };
	static const char *const ds_names[] = { "--use_deepspeed", "--use-deepspeed", NULL };
	static const char *const fsdp_names[] = { "--use_fsdp", "--use-fsdp", NULL };
	static const char *const multi_names[] = { "--multi_gpu", "--multi-gpu", NULL };
	static const char *const zero_names[] = { "--zero_stage", "--zero-stage", NULL };
	static const char *const dscfg_names[] = { "--deepspeed_config_file", "--deepspeed-config-file",
						   NULL };
	static const char *const gas_names[] = { "--gradient_accumulation_steps",
						 "--gradient-accumulation-steps", NULL };
	static const char *const shard_names[] = { "--fsdp_sharding_strategy",
						   "--fsdp-sharding-strategy", NULL };
	struct found f;
	long long np = -1, nm = -1, v;
	int rnp, rnm;
	struct jobread_src s;
	/* The named config: read, its rdzv_backend and DeepSpeed launcher. */
	bool cfg_read = false;
	char cfg_rdzv[32] = "", cfg_dsl[32] = "";

	if (find(opts, cfg_names, false, &f) && f.value && !f.unknown)
		cfg_read = jr_read_accelerate_config(cx, f.value, cfg_rdzv, sizeof(cfg_rdzv),
						     cfg_dsl, sizeof(cfg_dsl));
	else if (f.idx >= 0 && f.unknown)
		jr_set_unknown(cx, JR_WORLD, &f.src, "an accelerate config named at run time");
	if (find(opts, ds_names, false, &f))
		jr_set_int(cx, JR_FRAMEWORK, ADV_FW_DEEPSPEED, &f.src);
	if (find(opts, fsdp_names, false, &f)) {
		jr_set_int(cx, JR_FRAMEWORK, ADV_FW_FSDP, &f.src);
		/* accelerate's default sharding strategy is FULL_SHARD. */
		jr_set_int(cx, JR_ZERO, 3, &f.src);
	}
	if (find(opts, shard_names, false, &f) && f.value && !f.unknown) {
		if (!strcmp(f.value, "FULL_SHARD") || !strcmp(f.value, "1") ||
		    !strcmp(f.value, "HYBRID_SHARD") || !strcmp(f.value, "4"))
			jr_set_int(cx, JR_ZERO, 3, &f.src);
		else if (!strcmp(f.value, "SHARD_GRAD_OP") || !strcmp(f.value, "2") ||
			 !strcmp(f.value, "_HYBRID_SHARD_ZERO2") || !strcmp(f.value, "5"))
			jr_set_int(cx, JR_ZERO, 2, &f.src);
		else if (!strcmp(f.value, "NO_SHARD") || !strcmp(f.value, "3"))
			jr_set_int(cx, JR_ZERO, 0, &f.src);
	}
	if (find(opts, dscfg_names, false, &f) && f.value && !f.unknown)
		jr_read_ds_config(cx, f.value);
	if (opt_int(cx, opts, zero_names, false, JR_ZERO, &f, &v) == V_KNOWN)
		jr_set_int(cx, JR_ZERO, v, &f.src);
	if (opt_int(cx, opts, gas_names, false, JR_GAS, &f, &v) == V_KNOWN)
		jr_set_int(cx, JR_GAS, v, &f.src);
	if (find(opts, mp_names, false, &f) && f.value && !f.unknown) {
		int p = !strcmp(f.value, "bf16") ? ADV_PREC_BF16 : !strcmp(f.value, "fp16") ? ADV_PREC_FP16
		      : !strcmp(f.value, "fp8") ? ADV_PREC_FP8 : !strcmp(f.value, "no") ? ADV_PREC_FP32 : -1;

		if (p >= 0)
			jr_set_int(cx, JR_PRECISION, p, &f.src);
	}
	rnp = opt_int(cx, opts, np_names, false, JR_WORLD, &f, &np);
	if (rnp == V_KNOWN && np > 0)
		jr_set_int(cx, JR_WORLD, np, &f.src);
	rnm = opt_int(cx, opts, nm_names, false, JR_NODES, &f, &nm);
	if (rnm == V_KNOWN && nm > 0)
		jr_set_int(cx, JR_NODES, nm, &f.src);
	if (find(opts, rank_names, false, &f)) {
		/*
		 * accelerate launch (commands/launch.py) hands --machine_rank to
		 * torch.distributed.run as its node rank (utils/launch.py,
		 * prepare_multi_gpu_env) with its own --rdzv_backend, default
		 * "static", which takes the rank from it; the config file may
		 * name another (rdzv_backend), and a command-line flag wins over
		 * it.  Without --config_file accelerate reads its default config
		 * (~/.cache/huggingface/accelerate), not known here.  DeepSpeed's
		 * default multi-node launcher (pdsh) starts every node from one
		 * and takes no machine rank; "standard" goes through
		 * torch.distributed.run, "nossh" hands it to deepspeed --no_ssh
		 * --node_rank (prepare_deepspeed_cmd_env).
		 */
		static const char *const dsl_names[] = { "--deepspeed_multinode_launcher",
							 "--deepspeed-multinode-launcher", NULL };
		struct found fb, fl;
		bool ds = find(opts, ds_names, false, &fl) ||
			  (jr_get(cx, JR_FRAMEWORK)->set && !jr_get(cx, JR_FRAMEWORK)->unknown &&
			   jr_get(cx, JR_FRAMEWORK)->i == ADV_FW_DEEPSPEED);
		const char *dsl = find(opts, dsl_names, false, &fl) ? (fl.unknown ? NULL : fl.value)
				  : cfg_dsl[0] ? cfg_dsl : "pdsh";
		const char *backend = find(opts, rdzv_names, false, &fb) ? (fb.unknown ? NULL : fb.value)
				      : cfg_rdzv[0] ? cfg_rdzv : cfg_read ? "static" : NULL;
		int used;
		long long machines = jr_get(cx, JR_NODES)->set && !jr_get(cx, JR_NODES)->unknown
				     ? jr_get(cx, JR_NODES)->i : 0;

		if (ds && !dsl)
			used = -1;
		else if (ds && !strcmp(dsl, "nossh"))
			used = 1;   /* deepspeed --node_rank MACHINE_RANK --no_ssh */
		else if (ds && strcmp(dsl, "standard") != 0)
			used = 0;
		else if (!backend)
			used = -1;
		else
			used = !strcmp(backend, "static");
		rank_once(cx, opts, "accelerate", &f, copies, machines, used,
			  used == 1 ? "accelerate hands it to torch.distributed.run's static rendezvous, "
				      "so the machines wait for ranks that never come"
				    : "it fails if accelerate hands it to the static rendezvous, its "
				      "default, which a config not read here may change");
	}
	if (jr_get(cx, JR_WORLD)->set || rnp != V_ABSENT)
		return;
	if (find(opts, multi_names, false, &f) || find(opts, ds_names, false, &f) ||
	    find(opts, fsdp_names, false, &f)) {
		/* No count anywhere: every GPU of each machine. */
		long long gpn = job_gpn(jr_input(cx));
		long long machines = jr_get(cx, JR_NODES)->set && !jr_get(cx, JR_NODES)->unknown
				     ? jr_get(cx, JR_NODES)->i : 1;

		src_default(&s, opts, "--num_processes");
		if (mul(gpn, machines) > 0)
			jr_set_int(cx, JR_WORLD, mul(gpn, machines), &s);
		return;
	}
	src_default(&s, opts, "--num_processes");
	if (!jr_get(cx, JR_WORLD)->set)
		jr_set_unknown(cx, JR_WORLD, &s,
			       "accelerate's default config (~/.cache/huggingface/accelerate), not read; "
			       "name it with --config_file or give --num_processes");
}

/* ---- the walk -------------------------------------------------------------------------- */

enum launcher { L_NONE = 0, L_SRUN, L_MPI, L_TORCHRUN, L_TORCHLAUNCH, L_DEEPSPEED, L_ACCELERATE };

static enum launcher launcher_of(const char *b)
{
	if (!strcmp(b, "srun"))
		return L_SRUN;
	if (!strcmp(b, "mpirun") || !strcmp(b, "mpiexec") || !strcmp(b, "mpiexec.hydra") ||
	    !strcmp(b, "orterun"))
		return L_MPI;
	if (!strcmp(b, "torchrun") || !strcmp(b, "torch.distributed.run"))
		return L_TORCHRUN;
	if (!strcmp(b, "torch.distributed.launch"))
		return L_TORCHLAUNCH;
	if (!strcmp(b, "deepspeed") || !strcmp(b, "deepspeed.launcher.runner"))
		return L_DEEPSPEED;
	if (!strcmp(b, "accelerate.commands.launch"))
		return L_ACCELERATE;
	return L_NONE;
}

/* Options of each launcher that take no value. */
static const char *const srun_bools[] = {
	"--exclusive", "--overcommit", "--label", "--unbuffered", "--verbose", "--quiet",
	"--kill-on-bad-exit", "--no-kill", "--pty", "--exact", "--overlap", "--whole", "--hold",
	"--contiguous", "--disable-status", "--test-only", "--spread-job", "--use-min-nodes",
	"--multi-prog", "--help", "--usage", "--version", "--preserve-env", "--propagate",
	"--no-allocate", "--immediate", "--reboot", "--send-libs", "--oversubscribe", "--x11",
	"--bcast", "--compress", "--resv-ports", "--quit-on-interrupt", "--external-launcher",
	"--nice", "--interactive", "--container-remap-root", "--no-container-remap-root",
	"--container-mount-home", "--no-container-mount-home", "--container-writable",
	"--container-readonly", "--container-entrypoint", "--no-container-entrypoint",
	"-E", "-h", "-H", "-I", "-k", "-K", "-l", "-O", "-Q", "-s", "-u", "-v", "-V", "-X", "-Z", NULL,
};
static const char *const mpi_bools[] = {
	"--oversubscribe", "-oversubscribe", "--allow-run-as-root", "-allow-run-as-root",
	"--tag-output", "-tag-output", "--report-bindings", "-report-bindings", "-v", "--verbose",
	"--display-map", "-display-map", "-q", "--quiet", "--noprefix", "-noprefix", "-bind-to-core",
	"-bind-to-socket", "-byslot", "-bynode", "--timestamp-output", "-timestamp-output", "-l",
	"-print-rank-map", "--merge-stderr-to-stdout", "-V", "--version", "-h", "--help",
	"-disable-auto-cleanup", "--debug-daemons", "-nolocal", "--nolocal", "-prepend-rank",
	"--prepend-rank", "-ordered-output", NULL,
};
static const char *const mpi_pairs[] = { "-mca", "--mca", "-gmca", "--gmca", "-genv", "-env",
					 "--prtemca", "-prtemca", "--pmixmca", "-pmixmca", NULL };
static const char *const torchrun_bools[] = {
	"--standalone", "--no-python", "--no_python", "--run-path", "--run_path", "--module", "-m",
	"--use-env", "--use_env", "--virtual-local-rank", "--virtual_local_rank", NULL,
};
static const char *const ds_bools[] = {
	"--no_python", "--module", "--no_local_rank", "--no_ssh_check", "--force_multi", "--save_pid",
	"--elastic_training", "--bind_cores_to_rank", "--no_ssh", "--autotuning_run", NULL,
};
static const char *const acc_bools[] = {
	"--cpu", "--multi_gpu", "--multi-gpu", "--tpu", "--ipex", "--use_deepspeed", "--use-deepspeed",
	"--use_fsdp", "--use-fsdp", "--use_megatron_lm", "--use-megatron-lm", "--use_xpu", "-m",
	"--module", "--no_python", "--no-python", "--debug", "-q", "--quiet", "--enable_cpu_affinity",
	"--same_network", "--dynamo_use_fullgraph", "--dynamo_use_dynamic",
	"--dynamo_use_regional_compilation", "--tpu_use_cluster", "--tpu_use_sudo", "--downcast_bf16",
	"-h", "--help", NULL,
};

static const struct optspec srun_sp = { srun_bools, NULL, "ABbcCDdeGiJLmMnNopqrStTwWx", true };
static const struct optspec mpi_sp = { mpi_bools, mpi_pairs, NULL, false };
static const struct optspec torchrun_sp = { torchrun_bools, NULL, NULL, false };
static const struct optspec ds_sp = { ds_bools, NULL, NULL, false };
static const struct optspec acc_sp = { acc_bools, NULL, NULL, false };

/* The launcher's "run a module" / "not a Python script" flags. */
static bool opts_have(const struct jr_cmd *opts, const char *a, const char *b)
{
	for (int k = 0; k < opts->argc; k++)
		if (!strcmp(opts->argv[k], a) || (b && !strcmp(opts->argv[k], b)))
			return true;
	return false;
}

/* The placeholder of one host name of `scontrol show hostnames`
 * (shell/cmdsub.c, host_list). */
#define HOST_PH "$(scontrol_hostnames...)"

static bool host_word(const struct jr_cmd *c, int i)
{
	return i >= 0 && i < c->argc && c->argv[i] && c->unknown && c->unknown[i] &&
	       !strcmp(c->argv[i], HOST_PH);
}

/* The whole list in one word (quoted): names a line each. */
static bool host_lines(const struct jr_cmd *c, int i)
{
	return i >= 0 && i < c->argc && c->argv[i] && c->unknown && c->unknown[i] &&
	       !strncmp(c->argv[i], HOST_PH "\n", sizeof(HOST_PH));
}

/*
 * srun -w/--nodelist (or -x/--exclude) given `scontrol show hostnames`,
 * one name a line.  Unquoted, the shell splits it into a word per node:
 * the second name is the program srun runs (srun(1): the first word that
 * is no option), and the step fails ("execve(): gpu2: No such file or
 * directory"): a proof.  Quoted, srun 22.05 does not read names a line
 * as a list ("Requested node configuration is not available"), both
 * observed on the test cluster: a warning, since another Slurm version
 * may.  prog: the index of the program word in cmd.
 */
static void split_list(struct jr_ctx *cx, const struct jr_cmd *cmd, const struct jr_cmd *opts,
		       int prog)
{
	static const char *const list_names[] = { "-w", "--nodelist", "-x", "--exclude", NULL };
	struct jobread_out *out = jr_out(cx);
	long long job = out->het_nodes > 0 ? out->het_nodes : job_nodes(jr_input(cx));
	struct found f;
	int vi;
	bool split, lines;

	if (out->split_list.message[0] || job < 2 || !find(opts, list_names, false, &f))
		return;
	vi = strchr(opts->argv[f.idx], '=') ? f.idx : f.idx + 1;
	split = vi == f.idx + 1 && host_word(opts, vi) && vi + 1 == opts->argc &&
		host_word(cmd, prog);
	lines = !split && host_lines(opts, vi) && vi == f.idx + 1;
	if (!split && !lines)
		return;
	adv_strlcpy(out->split_list.code, engine_code_name(ADV_CODE_NODELIST_SPLIT),
		    sizeof(out->split_list.code));
	out->split_lines = lines;
	if (split)
		adv_snprintf(out->split_list.message, sizeof(out->split_list.message),
			     "%s:%d: srun %s is given `scontrol show hostnames` unquoted: one name a "
			     "line, so it splits into %lld words, srun takes the first for %s and runs "
			     "the second as its program, and the step fails", f.src.file, f.src.line,
			     f.which, job, f.which);
	else
		adv_snprintf(out->split_list.message, sizeof(out->split_list.message),
			     "%s:%d: srun %s is given `scontrol show hostnames` in one word, one name "
			     "a line: Slurm 22.05's srun does not read that as a list (\"Requested node "
			     "configuration is not available\")", f.src.file, f.src.line, f.which);
	adv_snprintf(out->split_list.fix, sizeof(out->split_list.fix),
		     "join the names with commas (scontrol show hostnames | paste -sd,), or give "
		     "$SLURM_JOB_NODELIST itself");
}

bool jr_launch_strip(struct jr_ctx *cx, const struct jr_cmd *cmd, struct jr_cmd *prog,
		     bool *is_module)
{
	struct starter st;
	int i = 0;
	bool module = false, after_launcher = false;
	/* The tasks of an srun step that starts the launcher: 0 none, -1 not known. */
	long long copies = 0;

	memset(&st, 0, sizeof(st));
	*is_module = false;
	memset(prog, 0, sizeof(*prog));
	if (!cmd || cmd->argc < 1 || !cmd->argv)
		return false;
	for (int layer = 0; layer < LAUNCH_MAX_LAYERS; layer++) {
		const char *b;
		enum launcher l;
		const struct optspec *sp = NULL;
		struct jr_cmd opts;
		int j;

		if (i < 0 || i >= cmd->argc || !cmd->argv[i])
			break;
		if (cmd->unknown && cmd->unknown[i])
			break;   /* the program itself is computed at run time */
		b = jr_basename(cmd->argv[i]);
		if (module) {
			/* "-m MODULE": a launcher module, or the program. */
			l = launcher_of(cmd->argv[i]);
			if (l == L_NONE) {
				*prog = sub(cmd, i, -1);
				*is_module = true;
				commit(cx, &st);
				return true;
			}
			module = false;
		} else {
			j = strip_wrapper(cx, cmd, i);
			if (j != i) {
				if (j > i && uv_module(cmd, i, j))
					module = true;
				i = j;
				continue;
			}
			if (is_python(b)) {
				i = python_args(cmd, i, &module);
				continue;
			}
			l = launcher_of(b);
			if (!strcmp(b, "accelerate") && i + 1 < cmd->argc &&
			    !strcmp(cmd->argv[i + 1], "launch")) {
				l = L_ACCELERATE;
				i++;   /* options start after "launch" */
			}
		}
		if (l == L_NONE) {
			*prog = sub(cmd, i, -1);
			*is_module = false;
			if (!after_launcher)
				commit(cx, &st);
			return true;
		}
		switch (l) {
		case L_SRUN:
			sp = &srun_sp;
			break;
		case L_MPI:
			sp = &mpi_sp;
			break;
		case L_TORCHRUN:
		case L_TORCHLAUNCH:
			sp = &torchrun_sp;
			break;
		case L_DEEPSPEED:
			sp = &ds_sp;
			break;
		default:
			sp = &acc_sp;
			break;
		}
		j = skip_opts(cmd, i + 1, sp);
		/* opts: the launcher's name and its options, not the program's. */
		opts = sub(cmd, i, j - i);
		switch (l) {
		case L_SRUN:
			jr_set_launcher(cx, "srun");
			read_srun(cx, &opts, &st);
			copies = st.present && st.world > 0 ? st.world : -1;
			split_list(cx, cmd, &opts, j);
			break;
		case L_MPI:
			jr_set_launcher(cx, jr_basename(cmd->argv[i]));
			read_mpirun(cx, &opts, &st);
			break;
		case L_TORCHRUN:
		case L_TORCHLAUNCH:
			jr_set_launcher(cx, l == L_TORCHRUN ? "torchrun" : "torch.distributed.launch");
			read_torchrun(cx, &opts, copies);
			after_launcher = true;
			break;
		case L_DEEPSPEED:
			jr_set_launcher(cx, "deepspeed");
			read_deepspeed(cx, &opts, copies);
			after_launcher = true;
			break;
		default:
			jr_set_launcher(cx, "accelerate");
			read_accelerate(cx, &opts, copies);
			after_launcher = true;
			break;
		}
		if (after_launcher) {
			/* An srun or mpirun outside starts this launcher (once per
			 * node): the launcher's world counts, not theirs. */
			st.present = false;
			if (opts_have(&opts, "-m", "--module"))
				module = true;
			if (!opts_have(&opts, "--no-python", "--no_python") && !module && j < cmd->argc) {
				/* The launcher runs a Python script. */
				*prog = sub(cmd, j, -1);
				return true;
			}
		}
		i = j;
	}
	/* Only a launcher, or a command computed at run time: srun's and
	 * mpirun's tasks start nothing the reader knows. */
	return false;
}

/*
 * The shell script a stripped command runs: "./entrypoint.sh ARGS",
 * "bash launch.sh ARGS", "sh -x run.sh ARGS" (bash(1): the first word
 * after the shell's options is the script, the rest its positional
 * parameters).  "bash -c STRING" is not a script file (the evaluator reads
 * the string itself), nor is "bash -s" (stdin).
 */
int jr_launch_script(const struct jr_cmd *prog)
{
	static const char *const shells[] = { "bash", "sh", "dash", "zsh", "ksh", NULL };
	static const char *const long_vals[] = { "--rcfile", "--init-file", NULL };
	const char *b;
	size_t n;
	int i;

	if (!prog || prog->argc < 1 || !prog->argv[0] || (prog->unknown && prog->unknown[0]))
		return -1;
	b = jr_basename(prog->argv[0]);
	if (!in_list(b, shells)) {
		n = strlen(b);
		return (n > 3 && !strcmp(b + n - 3, ".sh")) || (n > 5 && !strcmp(b + n - 5, ".bash"))
		       ? 0 : -1;
	}
	for (i = 1; i < prog->argc; i++) {
		const char *w = prog->argv[i];

		if (!w || (prog->unknown && prog->unknown[i]))
			return -1;
		if (!strcmp(w, "--") || !strcmp(w, "-"))
			return i + 1 < prog->argc && strcmp(w, "-") ? i + 1 : -1;
		if (w[0] != '-' && w[0] != '+')
			return i;
		if (w[1] == '-') {
			if (in_list(w, long_vals))
				i++;
			continue;
		}
		if (strchr(w + 1, 'c') || strchr(w + 1, 's'))
			return -1;
		if (strchr(w + 1, 'o') || strchr(w + 1, 'O'))
			i++;   /* -o OPTION, -O SHOPT */
	}
	return -1;
}
