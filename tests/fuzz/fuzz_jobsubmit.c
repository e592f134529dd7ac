/*
 * fuzz_jobsubmit.c - libFuzzer target for the Lua module of slurmctld's
 * job_submit (plugin/job_submit.c, issue 31), loaded as slurmctld's Lua
 * loads it: a fresh lua_State with the standard libraries
 * (src/lua/slurm_lua.c slurm_lua_loadscript: luaL_newstate,
 * luaL_openlibs), the module from require("advisor"), and a job_desc that
 * is a table whose metatable's __index answers each field
 * (job_submit_lua.c _push_job_desc / _get_job_req_field), its environment
 * a table with an __index of its own (_push_job_env).
 *
 * Input: byte 0 is flags: bit 0 passes a job_rec (slurm_job_modify), bit 1
 * makes __index raise a Lua error for the fields named "!NAME", bit 2
 * gives an environment that is a string, not a table.  Then lines
 * "KEY=VALUE" up to a line "---": "env.NAME", "argv.N" (N from 0),
 * "opt.KEY" (options; socket= and server= are not taken: the module must
 * never reach a real advisord from here), "rec.KEY" (job_rec fields) and
 * job_desc fields; a value that is a whole number is a Lua number.  The
 * rest is the batch script.  Checked, beyond no crash and no leak (the
 * state is closed after each input):
 *  - a bad option is a Lua error, never a crash; otherwise check()
 *    returns a table whose verdict is one of the five, whose message is a
 *    string and whose admin_comment, when present, starts "advisor: ";
 *  - with no daemon the verdict is "skip" or "unavailable", never a
 *    judgment, and env holds only ADVISOR_* names.
 */
#include "config.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "fuzz.h"

int luaopen_advisor(lua_State *L);

#define FUZZ_NO_DAEMON "/nonexistent/advisor-fuzz/advisord.sock"

/* __index of job_desc: upvalue 1 the fields, upvalue 2 the failing names. */
static int fields_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);

	lua_pushvalue(L, 2);
	lua_rawget(L, lua_upvalueindex(2));
	if (lua_toboolean(L, -1))
		return luaL_error(L, "field %s: no such field", k ? k : "?");
	lua_pop(L, 1);
	lua_pushvalue(L, 2);
	lua_rawget(L, lua_upvalueindex(1));
	return 1;
}

/* Pushes a table whose fields come from the table at index t through __index. */
static void push_proxy(lua_State *L, int fields, int fail)
{
	lua_newtable(L);
	lua_newtable(L);
	lua_pushvalue(L, fields);
	lua_pushvalue(L, fail);
	lua_pushcclosure(L, fields_index, 2);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

/* value as a number when it is a whole decimal number, else as a string. */
static void push_value(lua_State *L, const char *v)
{
	char *end = NULL;
	double d = strtod(v, &end);

	if (v[0] && end && *end == '\0' && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')))
		lua_pushnumber(L, d);
	else
		lua_pushstring(L, v);
}

static void check_answer(lua_State *L)
{
	static const char *const verdicts[] = { "accept", "warn", "reject", "unavailable", "skip" };
	const char *v;
	int ok = 0;

	FUZZ_ASSERT(lua_type(L, -1) == LUA_TTABLE);
	lua_getfield(L, -1, "verdict");
	v = lua_tostring(L, -1);
	FUZZ_ASSERT(v);
	for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		ok |= strcmp(v, verdicts[i]) == 0;
	FUZZ_ASSERT(ok);
	/* No daemon answers here: nothing is judged. */
	FUZZ_ASSERT(strcmp(v, "skip") == 0 || strcmp(v, "unavailable") == 0);
	lua_pop(L, 1);
	lua_getfield(L, -1, "message");
	FUZZ_ASSERT(lua_type(L, -1) == LUA_TSTRING);
	lua_pop(L, 1);
	lua_getfield(L, -1, "admin_comment");
	FUZZ_ASSERT(lua_isnil(L, -1) ||
		    (lua_type(L, -1) == LUA_TSTRING && strncmp(lua_tostring(L, -1), "advisor: ", 9) == 0));
	lua_pop(L, 1);
	lua_getfield(L, -1, "env");
	if (lua_type(L, -1) == LUA_TTABLE) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			FUZZ_ASSERT(lua_type(L, -2) == LUA_TSTRING &&
				    strncmp(lua_tostring(L, -2), "ADVISOR_", 8) == 0);
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *script = NULL, *save = NULL;
	lua_State *L;
	int desc, env, rec, fail, opts;
	unsigned flags;

	if (size < 1)
		return 0;
	flags = data[0];
	text = fuzz_cstr(data + 1, size - 1);
	if (!(L = luaL_newstate()))
		abort();
	luaL_openlibs(L);
	/* require("advisor") finds the module linked in, as package.cpath
	 * finds advisor.so in slurmctld. */
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	lua_pushcfunction(L, luaopen_advisor);
	lua_setfield(L, -2, "advisor");
	lua_pop(L, 2);
	lua_getglobal(L, "require");
	lua_pushstring(L, "advisor");
	FUZZ_ASSERT(lua_pcall(L, 1, 1, 0) == 0);   /* 1: the module */
	lua_newtable(L);                           /* 2: job_desc's fields */
	desc = lua_gettop(L);
	lua_newtable(L);                           /* 3: the environment's */
	env = lua_gettop(L);
	lua_newtable(L);                           /* 4: job_rec's */
	rec = lua_gettop(L);
	lua_newtable(L);                           /* 5: names whose read fails */
	fail = lua_gettop(L);
	lua_newtable(L);                           /* 6: the options */
	opts = lua_gettop(L);
	lua_newtable(L);                           /* 7: argv */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq;

		if (strcmp(line, "---") == 0) {
			script = save;
			break;
		}
		if (line[0] == '!') {
			lua_pushboolean(L, 1);
			lua_setfield(L, fail, line + 1);
			continue;
		}
		if (!(eq = strchr(line, '=')))
			continue;
		*eq = '\0';
		if (strncmp(line, "env.", 4) == 0) {
			push_value(L, eq + 1);
			lua_setfield(L, env, line + 4);
		} else if (strncmp(line, "rec.", 4) == 0) {
			push_value(L, eq + 1);
			lua_setfield(L, rec, line + 4);
		} else if (strncmp(line, "opt.", 4) == 0) {
			if (strcmp(line + 4, "socket") == 0 || strcmp(line + 4, "server") == 0)
				continue;
			push_value(L, eq + 1);
			lua_setfield(L, opts, line + 4);
		} else if (strncmp(line, "argv.", 5) == 0) {
			lua_pushnumber(L, atoi(line + 5));
			lua_pushstring(L, eq + 1);
			lua_settable(L, 7);
		} else if (line[0]) {
			push_value(L, eq + 1);
			lua_setfield(L, desc, line);
		}
	}
	lua_pushstring(L, FUZZ_NO_DAEMON);
	lua_setfield(L, opts, "socket");
	if (script) {
		lua_pushstring(L, script);
		lua_setfield(L, desc, "script");
	}
	lua_pushvalue(L, 7);
	lua_setfield(L, desc, "argv");
	if (flags & 4) {
		lua_pushstring(L, "not a table");
	} else {
		lua_newtable(L);
		push_proxy(L, env, lua_gettop(L));
		lua_remove(L, -2);
	}
	lua_setfield(L, desc, "environment");
	if (!(flags & 2)) {
		lua_newtable(L);
		lua_replace(L, fail);
	}
	/* advisor.check(job_desc, uid, options[, job_rec]) */
	lua_getfield(L, 1, "check");
	push_proxy(L, desc, fail);
	lua_pushnumber(L, 1000);
	lua_pushvalue(L, opts);
	if (flags & 1)
		push_proxy(L, rec, fail);
	if (lua_pcall(L, (flags & 1) ? 4 : 3, 1, 0) == 0)
		check_answer(L);
	else
		FUZZ_ASSERT(lua_type(L, -1) == LUA_TSTRING);
	lua_close(L);
	free(text);
	return 0;
}
