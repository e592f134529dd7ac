#!/bin/sh
# test_layers.sh - the guards that keep the source laid out as the data
# flows (issue 17; README, "Layout of the source").  Needs no root, no
# daemon and no Slurm: it reads the source tree and the built objects.
#
# It fails when
#  1. modules include each other in a circle.  A module is a file stem
#     (engine/memory.c and engine/memory.h are the module engine/memory);
#     module A depends on B when A's .c or .h includes B's header.  A header
#     without a .c (types only) is a module of its own;
#  2. an include breaks the one rule: the bare name within a folder, and
#     the path from common/ or daemon/ across folders (no "../", no path
#     that only resolves against the including file's folder);
#  3. a file under common/ or daemon/ is over 2,000 lines;
#  4. spank_advisor.so (or advisor.so, the job_submit Lua module) exports
#     anything but its entry points, needs a
#     library it must not load into sbatch and srun (libyaml, json-c,
#     SQLite, MariaDB, libstdc++), or carries the job reader's code;
#  5. a symbol a module exports lacks its module's prefix (the table below
#     lists the modules whose prefix is not their file name).
. "$(dirname "$0")/lib.sh"

command -v python3 > /dev/null || skip_all "python3 is needed (Debian package python3)"
command -v nm > /dev/null || skip_all "nm is needed (Debian package binutils)"

python3 - "$top_srcdir" "$top_builddir" <<'EOF' || exit 1
import os, re, subprocess, sys

top, build = sys.argv[1], sys.argv[2]
ROOTS = ("common", "daemon", "plugin")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
failed = 0

def bad(msg):
    global failed
    failed += 1
    print("not ok - " + msg)

sources = []
for root in ROOTS:
    for d, dirs, files in os.walk(os.path.join(top, root)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h", ".cpp")):
                sources.append(os.path.relpath(os.path.join(d, f), top))

def stem(path):
    return os.path.splitext(path)[0]

def resolve(src, inc):
    """The file an include names, as the compiler finds it: the including
    file's folder first, then -I common, then -I daemon."""
    here = os.path.dirname(src)
    for base in (here, "common", "daemon"):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(top, p)):
            return base, p
    return None, None

# ---- 1 and 2: the module graph and the include rule ----------------------
edges = {}
where = {}
for src in sources:
    text = open(os.path.join(top, src), encoding="utf-8", errors="replace").read()
    for m in INC.finditer(text):
        inc = m.group(1)
        base, path = resolve(src, inc)
        if path is None:
            continue        # config.h, advisor.pb-c.h: generated
        if ".." in inc.split("/"):
            bad(f"{src}: #include \"{inc}\" climbs with ..: name it from common/ or daemon/")
        elif "/" in inc and base == os.path.dirname(src) and base not in ("common", "daemon"):
            bad(f"{src}: #include \"{inc}\" resolves only against its own folder: "
                "use the bare name within a folder, the path from common/ or daemon/ across")
        elif "/" not in inc and base != os.path.dirname(src) and \
                os.path.dirname(path) not in ("common", "daemon"):
            bad(f"{src}: #include \"{inc}\" is a bare name from another folder")
        a, b = stem(src), stem(path)
        if a != b:
            edges.setdefault(a, set()).add(b)
            where.setdefault((a, b), f"{src} includes \"{inc}\"")

# Tarjan's strongly connected components: every component of more than
# one module is an include circle.
index, low, onstack, stack, sccs = {}, {}, set(), [], []
counter = [0]
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); onstack.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in onstack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); onstack.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
    if v not in index:
        strong(v)
for comp in sccs:
    links = [where[(a, b)] for a in comp for b in sorted(edges.get(a, ())) if b in comp]
    bad("include circle between modules " + ", ".join(comp) + ": " + "; ".join(links))
n_modules = len(set(stem(s) for s in sources))
if not sccs:
    print(f"ok - no include circle among {n_modules} modules")

# ---- 3: file size ---------------------------------------------------------
big = 0
for src in sources:
    if src.startswith(("common/", "daemon/")):
        n = sum(1 for _ in open(os.path.join(top, src), encoding="utf-8", errors="replace"))
        if n > 2000:
            big += 1
            bad(f"{src} has {n} lines (at most 2,000)")
if not big:
    print("ok - no file under common/ or daemon/ over 2,000 lines")

# ---- 4: the plugins ---------------------------------------------------------
# spank_advisor.so in sbatch, srun and slurmstepd; advisor.so (issue 31) in
# slurmctld's Lua, when configure found Lua: each exports its entry points
# only, and brings none of the daemon's libraries or code into its host.
PLUGINS = [
    ("spank_advisor.so", r"^(slurm_spank_\w+|plugin_name|plugin_type|plugin_version|spank_plugin_version)$",
     "the SPANK symbols", "sbatch and srun", True),
    ("advisor.so", r"^luaopen_advisor$", "luaopen_advisor", "slurmctld", False),
]
for name, entry, entry_words, host, required in PLUGINS:
    so = os.path.join(build, "plugin", ".libs", name)
    if not os.path.isfile(so):
        if required:
            bad(f"{so} is not built")
        continue
    out = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True).stdout
    extra = [l.split()[-1] for l in out.splitlines() if l.split() and not re.match(entry, l.split()[-1])]
    if extra:
        bad(f"{name} exports more than {entry_words}: " + " ".join(extra))
    else:
        print(f"ok - {name} exports only {entry_words}")
    out = subprocess.run(["readelf", "-d", so], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    banned = [n for n in needed if re.match(r"lib(yaml|json-c|sqlite3|mariadb|mysqlclient|stdc\+\+)", n)]
    if banned:
        bad(f"{name} needs " + " ".join(banned) + f", which {host} must not load")
    else:
        print(f"ok - {name} needs only " + " ".join(needed))
    out = subprocess.run(["nm", so], capture_output=True, text=True).stdout
    reader = [l.split()[-1] for l in out.splitlines()
              if re.search(r" [TtDdBbRr] (jobread_|jr_|sh_|cfg_|yaml_|json_|sqlite3_|mysql_)", l)]
    if reader:
        bad(f"{name} carries code it must not: " + " ".join(sorted(set(reader))[:8]))
    else:
        print(f"ok - {name} carries none of the job reader, YAML, JSON or database code")

# ---- 5: prefixes -----------------------------------------------------------
# The modules whose exported names do not start with their file name, and
# why.  Every other module exports only STEM_* names.
PREFIX = [
    (r"common/util$", ("adv_",)),                      # the project's own string helpers
    (r"common/config/params$", ("catalog_",)),         # catalog_model_params: counts of a catalog model
    (r"common/engine/checkpoint$", ("ckpt_",)),
    (r"common/engine/[a-z_]+$", ("engine_",)),         # the engine's API: engine_check, engine_resolve, ...
    (r"common/jobread/shell/", ("sh_",)),              # the shell evaluator
    (r"common/jobread/cfg/", ("cfg_",)),               # the config trees
    (r"common/jobread/", ("jr_", "jobread_")),         # the job reader: jobread_* public, jr_* for the readers
    (r"daemon/dlog/", ("dlog_",)),
    (r"daemon/ctl/advisorctl$|daemon/advisord$", ("main",)),
    (r"plugin/spank_advisor$", ("slurm_spank_", "plugin_", "spank_plugin_")),
    (r"plugin/job_submit$", ("luaopen_",)),            # Lua's entry point of the module advisor
]
objs = []
for d, dirs, files in os.walk(build):
    dirs.sort()
    rel = os.path.relpath(d, build)
    if not rel.startswith(ROOTS):
        continue
    for f in sorted(files):
        if f.endswith(".o"):
            objs.append(os.path.join(d, f))
seen = {}
for o in objs:
    rel = os.path.relpath(o, build)
    folder = os.path.dirname(rel).replace("/.libs", "")
    name = os.path.basename(rel)[:-2]
    # libtool and automake name objects TARGET-STEM.o or TARGET_la-STEM.o.
    name = re.sub(r"^[a-z_]+_la-", "", name)
    name = re.sub(r"^(advisord|advisorctl)-", "", name)
    mod = folder + "/" + name
    src = next((mod + e for e in (".c", ".cpp") if os.path.isfile(os.path.join(top, mod + e))), None)
    if src is None or mod in seen:
        continue
    seen[mod] = True
    out = subprocess.run(["nm", "-g", "--defined-only", o], capture_output=True, text=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if l.split()]
    syms = [s for s in syms if not s.startswith(("_Z", "DW.ref."))]   # C++ (toml++)
    # What the sanitizers and coverage add to every object (ASan's
    # one-definition-rule markers, __odr_asan.NAME).
    syms = [s for s in syms if not s.startswith(("__odr_asan", "__asan", "__ubsan",
                                                 "__tsan", "__sanitizer", "__gcov"))]
    allowed = (os.path.basename(mod) + "_",)
    for pat, pre in PREFIX:
        if re.search(pat, mod):
            allowed = allowed + pre
            break
    wrong = [s for s in syms if not s.startswith(allowed)]
    if wrong:
        bad(f"{src} exports {' '.join(wrong)} without its prefix ({' or '.join(allowed)})")
if seen and not failed:
    print(f"ok - every symbol of {len(seen)} modules carries its module's prefix")
elif not seen:
    bad("no objects of common/, daemon/ or plugin/ under " + build)

# NEWS (issue 30): the version configure.ac builds has its section, with
# upgrade notes, so that a release cannot leave admins without them.
ver = re.search(r"AC_INIT\(\[[^]]*\], \[([^]]*)\]", open(os.path.join(top, "configure.ac")).read())
news = open(os.path.join(top, "NEWS")).read() if os.path.isfile(os.path.join(top, "NEWS")) else ""
if not ver:
    bad("configure.ac: no AC_INIT version")
elif f"* Version {ver.group(1)}" not in news:
    bad(f"NEWS has no '* Version {ver.group(1)}' section for configure.ac's version")
elif "** Upgrade notes" not in news.split(f"* Version {ver.group(1)}", 1)[1].split("\n* Version ", 1)[0]:
    bad(f"NEWS: version {ver.group(1)} has no '** Upgrade notes'")
else:
    print(f"ok - NEWS has version {ver.group(1)} with its upgrade notes")

print(f"{'FAIL' if failed else 'PASS'}: {failed} problem(s)")
sys.exit(1 if failed else 0)
EOF
