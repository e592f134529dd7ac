#!/usr/bin/env python3
"""Materialise $CORPUS_DIR/jobs/ (default /work/corpus28) from tools/spec*.py, from git mirrors
under $MIRROR_DIR (default /work/.mirror, as the fetch tool leaves them): the published scripts
stay outside the repository."""
import glob, json, os, subprocess, sys
ROOT = os.environ.get("CORPUS_DIR", "/work/corpus28")
JOBS = []

def J(n, short, repo, path, kind, llm, verdict, works, stated, why, args="", extras=(), commit=None, script=None, cwd=""):
    JOBS.append(dict(n=n, short=short, repo=repo, path=path, kind=kind, llm=llm, verdict=verdict,
                     works=works, stated=stated, why=why, args=args, extras=list(extras), commit=commit, script=script, cwd=cwd))

def git(repo, *a):
    g = os.path.join(os.environ.get("MIRROR_DIR", "/work/.mirror"), repo.replace("/", "+"), "repo")
    return subprocess.run(["git", "-C", g] + list(a), stdout=subprocess.PIPE, check=True).stdout

def main():
    for f in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec*.py"))):
        exec(open(f).read(), {"J": J})
    seen = set()
    for j in JOBS:
        assert j["n"] not in seen, j["n"]; seen.add(j["n"])
        c = j["commit"] or git(j["repo"], "log", "-1", "--format=%H", "--all", "--diff-filter=AM", "--", j["path"]).decode().strip()
        assert c, (j["repo"], j["path"])
        d = os.path.join(ROOT, "jobs", "%03d-%s" % (j["n"], j["short"]))
        os.makedirs(d, exist_ok=True)
        name = j["script"] or os.path.basename(j["path"])
        os.makedirs(os.path.join(d, j["cwd"]), exist_ok=True)
        open(os.path.join(d, j["cwd"], name), "wb").write(git(j["repo"], "show", "%s:%s" % (c, j["path"])))
        files = []
        for src, dst in j["extras"]:
            sc = git(j["repo"], "log", "-1", "--format=%H", c, "--", src).decode().strip() or c
            p = os.path.join(d, dst); os.makedirs(os.path.dirname(p) or d, exist_ok=True)
            open(p, "wb").write(git(j["repo"], "show", "%s:%s" % (sc, src)))
            files.append({"path": src, "as": dst, "commit": sc})
        meta = {"repo": j["repo"], "path": j["path"], "commit": c, "script": name, "cwd": j["cwd"], "kind": j["kind"],
                "args": j["args"], "llm_job": j["llm"], "expected_verdict": j["verdict"], "works": j["works"],
                "stated": j["stated"], "why": j["why"], "config_files": files}
        json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
    print(len(JOBS), "jobs,", len(set(j["repo"] for j in JOBS)), "repos")
    from collections import Counter
    print(Counter(j["kind"] for j in JOBS), Counter(j["llm"] for j in JOBS), Counter(j["verdict"] for j in JOBS))
    print(sorted(Counter(j["repo"] for j in JOBS).items(), key=lambda x: -x[1])[:5])

main()
# the label review (README "Label review") lives in tools/label_review.py; re-apply it
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "label_review.py")], check=True)
