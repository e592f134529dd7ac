# slurmrest.sh - slurmrestd in front of the private cluster (issue 31),
# sourced (POSIX sh) by integration tests after lib.sh, whose spawn,
# stop_pid, wait_until, make_users and as_user it uses.  Needs SLURM_CONF
# (scripts/cluster env), curl and jq, and root (to run it as a test user).
#
#   rest_start DIR [USER]       slurmrestd as USER (default advrest, made
#                               with make_users) on DIR/rest.sock, log in
#                               DIR/rest.log; waits until it answers
#   rest_stop                   ends it (cleanup's end_spawned would too)
#   rest_spec FILE KEY=VALUE... writes a job spec (the format below)
#   rest_submit USER SPEC OUT   POSTs SPEC as USER: the response body in
#                               OUT, slurmrestd's log lines of that request
#                               in OUT.log; prints the job id and returns 0
#                               when the job was accepted, returns 1 when not
#   rest_error OUT              the text the user was told, one line each
#   rest_http OUT               the HTTP status of that request
#
# Versions: rest_start asks the installed slurmrestd which plugins it has:
# 22.05 has openapi/v0.0.36..38 (sbatch-option-style bodies); 23.11 and
# later have openapi/slurmctld with data_parser/v0.0.N (24.11: 40-42,
# 25.05: 41-43, 25.11: 41-44, 26.05: 42-45), whose job body is a
# job_desc_msg_t.  The newest one found is used: REST_API is then its
# version (v0.0.38, v0.0.42, ...) and REST_STYLE legacy or data_parser.
#
# A job spec is a version-neutral JSON object that rest_submit turns into
# the body the version wants:
#   script       the batch script (required)
#   name, partition, account     strings
#   nodes        a count (number or string, "1" or "1-2")
#   gres         per node, sbatch --gres style: "gpu:h100:2" (sent as the
#                option gres to v0.0.38, as tres_per_node "gres/gpu:h100:2"
#                to data_parser versions)
#   hold         true: submitted held (sbatch --hold)
#   environment  an object {"NAME": "value"} (default PATH only: a batch
#                job without one is refused)
#   cwd          the working directory (default /tmp)
#   extra        an object merged into the job as it is (version-specific)
#
# Where slurm.log_user's text goes: slurmctld sends the message of a
# rejected job (job_submit/lua's slurm.log_user, then slurm.ERROR) in a
# RESPONSE_SLURM_RC_MSG, and libslurm prints such a message with error()
# while unpacking it and drops it (_unpack_return_code2_msg, the same from
# 22.05 to 26.05).  The JSON response has only errors[] with "Unspecified
# error" (HTTP 500): the text is in slurmrestd's own log as
# "error: <text>".  Hence OUT.log.  For an accepted job the message is in
# the response, as job_submit_user_msg.

REST_PID=
REST_DIR=
REST_SOCK=
REST_LOG=
REST_USER=
REST_API=
REST_STYLE=
REST_PLUGINS=

# rest_run USER PROG [ARG...]: PROG as USER with the environment
# slurmrestd needs; stderr kept (the plugin lists are printed there).
rest_run() {
	_rr_user=$1
	shift
	as_user "$_rr_user" env SLURM_CONF="$SLURM_CONF" "$@"
}

# rest_versions USER: sets REST_PLUGINS, REST_API and REST_STYLE from the
# plugins the installed slurmrestd lists (it must be asked as a user it
# would run as: as root it refuses even to list).
rest_versions() {
	_rv_list=$(rest_run "$1" slurmrestd -a rest_auth/local -s list 2>&1) || :
	case $_rv_list in
	*openapi/slurmctld*)
		# 23.11 and later: one openapi plugin, the schema from a data_parser.
		_rv_n=$(rest_run "$1" slurmrestd -a rest_auth/local -d list 2>&1 |
			sed -n 's|.*data_parser/v0\.0\.\([0-9][0-9]*\).*|\1|p' | sort -n | tail -n 1)
		[ -n "$_rv_n" ] || fail "slurmrestd lists openapi/slurmctld but no data_parser plugin"
		REST_API=v0.0.$_rv_n
		REST_STYLE=data_parser
		REST_PLUGINS="-s openapi/slurmctld -d data_parser/$REST_API"
		;;
	*)
		_rv_n=$(printf '%s\n' "$_rv_list" |
			sed -n 's|.*openapi/v0\.0\.\([0-9][0-9]*\).*|\1|p' | sort -n | tail -n 1)
		[ -n "$_rv_n" ] || fail "slurmrestd lists no openapi plugin; it said: $(printf '%s\n' "$_rv_list" | tail -n 5)"
		REST_API=v0.0.$_rv_n
		# v0.0.39 (23.02) already parsed jobs with data_parser/v0.0.39.
		if [ "$_rv_n" -ge 39 ]; then REST_STYLE=data_parser; else REST_STYLE=legacy; fi
		REST_PLUGINS="-s openapi/$REST_API"
		;;
	esac
}

# rest_start DIR [USER]
rest_start() {
	: "${SLURM_CONF:?rest_start: no SLURM_CONF (start the private cluster first)}"
	command -v slurmrestd > /dev/null 2>&1 || skip_all "slurmrestd not found (Debian package slurmrestd)"
	command -v curl > /dev/null 2>&1 || skip_all "curl not found (Debian package curl)"
	command -v jq > /dev/null 2>&1 || skip_all "jq not found (Debian package jq)"
	REST_DIR=$1
	REST_USER=${2:-advrest}
	# Not root, not SlurmUser (root here), not nobody: slurmrestd refuses
	# all three (and 25.11 aborts on SLURMRESTD_SECURITY=disable_user_check).
	make_users "$REST_USER"
	mkdir -p "$REST_DIR" || fail "mkdir $REST_DIR"
	# It binds its socket there as REST_USER.
	{ chown "$REST_USER" "$REST_DIR" && chmod 755 "$REST_DIR"; } || fail "cannot give $REST_DIR to $REST_USER"
	REST_SOCK=$REST_DIR/rest.sock
	REST_LOG=$REST_DIR/rest.log
	rm -f "$REST_SOCK"
	rest_versions "$REST_USER"
	# stderr at info, said outright: rest_error reads it.  25.11+ reads
	# SLURMRESTD_DEBUG_STDERR (its code means to log to syslog alone when
	# stderr is no tty); older versions ignore it and log there anyway.  Started from REST_DIR: REST_USER may not
	# enter the caller's directory.
	_rs_cwd=$PWD
	cd "$REST_DIR" || fail "cd $REST_DIR"
	# shellcheck disable=SC2086
	spawn as_user "$REST_USER" env SLURM_CONF="$SLURM_CONF" SLURMRESTD_DEBUG_STDERR=info \
		slurmrestd -a rest_auth/local $REST_PLUGINS "unix:$REST_SOCK" >> "$REST_LOG" 2>&1
	REST_PID=$!
	cd "$_rs_cwd" || :
	# shellcheck disable=SC2016 # wait_until evaluates it later
	wait_until -p "$REST_PID" -s 'tail -n 5 "$REST_LOG"' 20 "slurmrestd to answer on $REST_SOCK" rest_ping
}

# rest_ping: slurmrestd answers, and reaches slurmctld.
rest_ping() {
	rest_run "$REST_USER" curl -sf -o /dev/null --unix-socket "$REST_SOCK" \
		"http://localhost/slurm/$REST_API/ping" 2> /dev/null
}

rest_stop() {
	[ -n "$REST_PID" ] || return 0
	stop_pid "$REST_PID" TERM 30 slurmrestd
	REST_PID=
}

# rest_spec FILE KEY=VALUE...: a job spec; hold and nodes as given,
# environment as NAME=VALUE pairs in env (comma-separated), script from
# script= (the text) or script_file= (a file).  E.g.
#   rest_spec "$SCRATCH/j.json" name=bad partition=h100 gres=gpu:h100:2 nodes=1 hold=true
rest_spec() {
	_sp_out=$1
	shift
	_sp_args=
	_sp_json='{}'
	for _sp in "$@"; do
		_sp_k=${_sp%%=*} _sp_v=${_sp#*=}
		case $_sp_k in
		hold) _sp_json=$(printf '%s' "$_sp_json" | jq --argjson v "$_sp_v" '.hold = $v') ;;
		script_file) _sp_json=$(printf '%s' "$_sp_json" | jq --rawfile v "$_sp_v" '.script = $v') ;;
		env) _sp_json=$(printf '%s' "$_sp_json" | jq --arg v "$_sp_v" \
			'.environment = ($v | split(",") | map(capture("^(?<key>[^=]*)=(?<value>.*)$")) | from_entries)') ;;
		*) _sp_json=$(printf '%s' "$_sp_json" | jq --arg k "$_sp_k" --arg v "$_sp_v" '.[$k] = $v') ;;
		esac || fail "rest_spec: bad $_sp"
	done
	printf '%s\n' "$_sp_json" | jq '.script //= "#!/bin/sh\ntrue\n"' > "$_sp_out" || fail "rest_spec: cannot write $_sp_out"
}

# rest_body SPEC: the request body for REST_STYLE.
rest_body() {
	jq --arg style "$REST_STYLE" '
		def clean: with_entries(select(.value != null));
		(.environment // {PATH: "/usr/bin:/bin"}) as $env
		| (.cwd // "/tmp") as $cwd
		| if $style == "legacy" then
			# openapi/v0.0.38: sbatch long options, environment a dict.
			{script: .script,
			 job: (({name, partition, account, nodes, gres, hold,
				environment: $env, current_working_directory: $cwd}
				| clean) + (.extra // {}))}
		else
			# data_parser: job_desc_msg_t fields, environment NAME=VALUE
			# strings, nodes a string, GRES as TRES; the script in the job
			# (the top-level one is deprecated in v0.0.42).
			{job: (({script, name, partition, account,
				nodes: (if .nodes == null then null else (.nodes | tostring) end),
				tres_per_node: (if .gres == null then null
					else (.gres | split(",") | map("gres/" + .) | join(",")) end),
				hold,
				environment: ($env | to_entries | map("\(.key)=\(.value)")),
				current_working_directory: $cwd}
				| clean) + (.extra // {}))}
		end' "$1"
}

# rest_submit USER SPEC OUT: the HTTP status in OUT.http (000: no answer;
# rest_http reads it: rest_submit runs in a $(...) subshell, so a variable
# set there would be lost), the request body in OUT.body.  The body goes in on stdin: USER need not be able
# to read SPEC.  local auth takes the peer's uid: USER must be REST_USER
# (root may connect too, and submits as REST_USER).
rest_submit() {
	_su_user=$1 _su_spec=$2 _su_out=$3
	rest_body "$_su_spec" > "$_su_out.body" || fail "rest_submit: cannot make a body of $_su_spec"
	_su_mark=$(wc -c < "$REST_LOG")
	# The status on a line of its own after the body.
	rest_run "$_su_user" curl -sS --unix-socket "$REST_SOCK" -X POST \
		-H 'Content-Type: application/json' --data-binary @- \
		-w '\n%{http_code}\n' "http://localhost/slurm/$REST_API/job/submit" \
		< "$_su_out.body" > "$_su_out.raw" 2> "$_su_out.curl" || :
	tail -n 1 "$_su_out.raw" > "$_su_out.http"
	sed '$d' "$_su_out.raw" > "$_su_out"
	# What slurmrestd logged while it answered (it logs before it answers).
	tail -c +"$((_su_mark + 1))" "$REST_LOG" > "$_su_out.log"
	_su_id=$(jq -r 'if (.job_id | type) == "number" and .job_id > 0 then .job_id else empty end' \
		"$_su_out" 2> /dev/null) || :
	[ -n "$_su_id" ] || return 1
	echo "$_su_id"
}

# rest_http OUT: the HTTP status of that request.
rest_http() {
	cat "$1.http" 2> /dev/null || echo 000
}

# rest_error OUT: job_submit_user_msg, the error lines slurmrestd logged
# during the request (a rejected job's slurm.log_user text), then each
# errors[] entry ("description: error"); curl's complaint when there was
# no answer.
rest_error() {
	jq -r '.job_submit_user_msg // empty | select(. != "")' "$1" 2> /dev/null || :
	# "slurmrestd: error: TEXT", or "[TIME] error: TEXT" when it thinks it
	# is a daemon (log.c).
	# Not its own lines about the connection, "FUNC(): [CONN] ..." (23.11+:
	# the errors[] entries printed below) or "FUNC: [CONN] ..." (26.05).
	sed -n -e 's/^slurmrestd: error: //p' -e 's/^\[[^]]*\] error: //p' "$1.log" 2> /dev/null |
		grep -v '^[A-Za-z_][A-Za-z0-9_]*\(()\)\{0,1\}: \[' || :
	jq -r '.errors[]? | [.description, .error] | map(select(. != null and . != "")) | join(": ")' \
		"$1" 2> /dev/null || :
	[ -s "$1" ] || cat "$1.curl" 2> /dev/null || :
}
