#!/usr/bin/env python3
"""Score advisor's reader on the issue-28 corpus of public job scripts.

usage: score.py ADVISORCTL CATALOG POLICY [--set studied|heldout|all] [--json] [-v]
                [--jobs DIR] [--only NNN[,NNN...]]

For each job directory under jobs/ (next to this file unless --jobs is given) it
runs, from inside the directory,

    ADVISORCTL --local --catalog CATALOG --policy POLICY --json \
        check --script SCRIPT ARGS

(20 s timeout) and compares the result with the job's meta.json.  Standard
library only.  See README.md for the definitions of every column.

Rejections are scored, so POLICY is judged enforcing: a policy whose
top-level mode is not enforce (the shipped etc/policy.yaml says warn, issue
30) is scored through a temporary copy with `mode: enforce` at the top, as
the README's last rollout step sets it; a partition's own mode stays.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RC_VERDICT = {0: "accept", 1: "warn", 2: "reject"}
# stated field -> (JSON section or None for top level, JSON key, sources key)
FIELDS = {
    "model": (None, "model", "model"),
    "tp": ("layout", "tp", "tp"),
    "pp": ("layout", "pp", "pp"),
    "zero": ("layout", "zero", "zero"),
    "seq": ("workload", "seq", "seq"),
    "mbs": ("workload", "mbs", "mbs"),
    "gbs": ("workload", "gbs", "gbs"),
    "world": ("layout", "gpus", "world"),
}
# findings that say the job's program/launch was not read (label review)
NOT_READ_CODES = {"PROGRAM_NOT_READ", "SCRIPT_NOT_FOLLOWED", "SCRIPT_UNKNOWN"}
ASSUMED_WORDS = ("assum", "default", "catalog", "guess", "derived", "policy")


def load_jobs(jobs_dir):
    jobs = []
    for name in sorted(os.listdir(jobs_dir)):
        d = os.path.join(jobs_dir, name)
        mp = os.path.join(d, "meta.json")
        if not os.path.isfile(mp):
            continue
        with open(mp) as f:
            meta = json.load(f)
        meta["_dir"] = d
        meta["_name"] = name
        meta.setdefault("script", os.path.basename(meta["path"]))
        jobs.append(meta)
    return jobs


def run_job(advisorctl, catalog, policy, meta):
    cmd = [advisorctl, "--local", "--catalog", catalog, "--policy", policy,
           "--json", "check", "--script", meta["script"]]
    cmd += shlex.split(meta.get("args") or "")
    try:
        p = subprocess.run(cmd, cwd=os.path.join(meta["_dir"], meta.get("cwd") or ""), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=20)
    except subprocess.TimeoutExpired:
        return {"rc": "timeout", "json": None, "stderr": "timeout after 20 s"}
    except OSError as e:
        return {"rc": "error", "json": None, "stderr": str(e)}
    doc = None
    try:
        doc = json.loads(p.stdout.decode("utf-8", "replace"))
        if not isinstance(doc, dict):
            doc = None
    except ValueError:
        doc = None
    return {"rc": p.returncode, "json": doc,
            "stderr": p.stderr.decode("utf-8", "replace")[-400:]}


def get_value(doc, field):
    sec, key, _ = FIELDS[field]
    if sec is None:
        v = doc.get(key)
    else:
        v = (doc.get(sec) or {}).get(key)
    if isinstance(v, dict):          # a later form: {"value": ..., "from": ...}
        return v.get("value"), v
    return v, None


def origin(doc, field, wrapped):
    """'job' when the reader says the job states it, 'assumed' when it says
    the value is assumed/a default, None when nothing says where it is from."""
    if wrapped is not None:
        o = str(wrapped.get("from") or wrapped.get("origin") or "")
        if any(w in o.lower() for w in ASSUMED_WORDS):
            return "assumed"
        if o:
            return "job"
    sec, key, skey = FIELDS[field]
    for holder in (doc, doc.get(sec) if sec else None):
        if isinstance(holder, dict):
            a = holder.get("assumed")
            if isinstance(a, dict) and (skey in a or key in a):
                return "assumed"
            if isinstance(a, list) and (skey in a or key in a):
                return "assumed"
    src = (doc.get("sources") or {}).get(skey)
    if src is not None:
        s = str(src).lower()
        if any(w in s for w in ASSUMED_WORDS):
            return "assumed"
        return "job"
    for f in doc.get("findings") or []:
        u = (f.get("uses") or {}).get(skey)
        if u is not None and any(w in str(u).lower() for w in ASSUMED_WORDS):
            return "assumed"
    return None


MODEL_FAMILIES = ("llama", "qwen", "mistral", "mixtral", "gemma", "gpt", "deepseek",
                  "glm", "phi", "falcon", "bloom", "olmo", "yi", "internlm", "pythia",
                  "opt", "minimax", "lucie", "smollm")


def model_tokens(s):
    s = s.lower()
    fam = None
    for f in MODEL_FAMILIES:
        if f in s:
            fam = f
            break
    sizes = set(m.group(1) for m in re.finditer(r"(?<![0-9.])(\d+(?:\.\d+)?)b(?![a-z])", s))
    ver = re.findall(r"(?:llama|qwen|gemma|glm|phi)[-_ ]?(\d(?:\.\d)?)", s)
    return fam, sizes, (ver[0] if ver else None)


def model_match(stated, got):
    if got is None:
        return None
    st, g = str(stated).lower(), str(got).lower()
    if st == g:
        return True
    if st.startswith("inline"):
        return g in ("inline", "job") or g.startswith("inline")
    if g in ("inline", "job"):
        # the reader built the model from the job's own sizes: right unless
        # the job names a Hub id it should have been matched to (review
        # 12:25: llm.c's -e d12 is GPT-2 124M's shape, read inline)
        return st.startswith("inline") or "/" not in st
    n = lambda x: re.sub(r"[^a-z0-9.]", "", x.split("/")[-1])
    if n(st) and n(g) and (n(st) in n(g) or n(g) in n(st)):
        return True
    fs, ss, vs = model_tokens(st)
    fg, sg, vg = model_tokens(g)
    # a catalog name may drop a minor version its aliases carry
    # (llama3-405b is Llama-3.1-405B): one version a prefix of the other
    if fs and fs == fg and ss and ss & sg and (vs is None or vg is None or vs == vg
                                               or vs.startswith(vg) or vg.startswith(vs)):
        return True
    return False


def value_match(field, stated, got):
    if field == "model":
        return model_match(stated, got)
    if got is None:
        return None
    if isinstance(stated, bool) or isinstance(got, bool):
        return bool(stated) == bool(got)
    try:
        return float(stated) == float(got)
    except (TypeError, ValueError):
        return str(stated).lower() == str(got).lower()


def judge(meta, res):
    out = {"job": meta["_name"], "repo": meta["repo"], "expected": meta["expected_verdict"],
           "llm_job": meta["llm_job"], "works": meta.get("works"),
           "accept_with_finding_ok": bool(meta.get("accept_with_finding_ok"))}
    rc = res["rc"]
    got = RC_VERDICT.get(rc) if isinstance(rc, int) else None
    doc = res["json"]
    if doc is None:
        got = None                     # a crash or unparsable output is wrong
    out["got"] = got if got else "error(%s)" % rc
    out["verdict_ok"] = got == meta["expected_verdict"]
    # Label review (README): where the job's workload is in a program the reader
    # cannot see and nothing proves it broken, warn, or accept with a finding that
    # says the program was not read, are both right; a silent accept is not.
    out["accepted_with_not_read"] = False
    if meta.get("accept_with_finding_ok") and doc is not None:
        codes = set(f.get("code") for f in doc.get("findings") or [] if isinstance(f, dict))
        if got == "warn":
            out["verdict_ok"] = True
        elif got == "accept" and codes & NOT_READ_CODES:
            out["verdict_ok"] = True
            out["accepted_with_not_read"] = True
    out["working_rejected"] = bool(meta.get("works") is True and got == "reject")
    out["broken_accepted"] = bool(meta.get("works") is False and got == "accept")
    out["codes"] = [f.get("code") for f in (doc or {}).get("findings") or []]
    out["silent_llm"] = False
    out["nonllm_as_llm"] = False
    out["wrong_values"] = []          # stated, shown different, not marked assumed
    out["said_wrong_values"] = []     # stated, shown different, marked assumed
    out["missed_values"] = []         # stated, shown null
    out["unstated_shown"] = []        # not stated, shown as the job's
    out["unstated_marked"] = []       # not stated, shown, marked assumed
    if doc is None:
        out["silent_llm"] = bool(meta["llm_job"])
        return out
    jl = doc.get("llm_job")
    if meta["llm_job"]:
        if jl is False or (not out["codes"] and not doc.get("model")):
            out["silent_llm"] = True
    else:
        out["nonllm_as_llm"] = jl is True
    if not meta["llm_job"] or jl is False:
        return out
    stated = meta.get("stated") or {}
    for field in FIELDS:
        v, wrapped = get_value(doc, field)
        o = origin(doc, field, wrapped)
        if field in stated and stated[field] is not None:
            m = value_match(field, stated[field], v)
            if m is None:
                out["missed_values"].append(field)
            elif not m:
                item = "%s=%s (job: %s)" % (field, v, stated[field])
                (out["said_wrong_values"] if o == "assumed" else out["wrong_values"]).append(item)
        elif v is not None:
            item = "%s=%s" % (field, v)
            (out["unstated_marked"] if o == "assumed" else out["unstated_shown"]).append(item)
    return out


def table(name, rows):
    llm = [r for r in rows if r["llm_job"]]
    non = [r for r in rows if not r["llm_job"]]
    wt = [r for r in rows if r["works"] is True]
    wf = [r for r in rows if r["works"] is False]
    def c(lst, key):
        return sum(1 for r in lst if r[key])
    lines = [
        "set %s: %d jobs (%d LLM, %d not LLM), %d repositories" % (
            name, len(rows), len(llm), len(non), len(set(r["repo"] for r in rows))),
        "  %-44s %3d / %d" % ("verdicts right", c(rows, "verdict_ok"), len(rows)),
        "  %-44s %3d / %d   (%d values)" % ("values silently wrong (jobs)",
            sum(1 for r in llm if r["wrong_values"]), len(llm),
            sum(len(r["wrong_values"]) for r in llm)),
        "  %-44s %3d / %d   (%d values)" % ("values wrong but marked assumed (jobs)",
            sum(1 for r in llm if r["said_wrong_values"]), len(llm),
            sum(len(r["said_wrong_values"]) for r in llm)),
        "  %-44s %3d / %d   (%d values)" % ("values not read (null) (jobs)",
            sum(1 for r in llm if r["missed_values"]), len(llm),
            sum(len(r["missed_values"]) for r in llm)),
        "  %-44s %3d / %d   (%d values)" % ("values shown as the job's, not stated (jobs)",
            sum(1 for r in llm if r["unstated_shown"]), len(llm),
            sum(len(r["unstated_shown"]) for r in llm)),
        "  %-44s %3d / %d" % ("LLM jobs passed silently", c(llm, "silent_llm"), len(llm)),
        "  %-44s %3d / %d" % ("non-LLM jobs judged LLM", c(non, "nonllm_as_llm"), len(non)),
        "  %-44s %3d / %d" % ("working jobs rejected", c(wt, "working_rejected"), len(wt)),
        "  %-44s %3d / %d" % ("broken jobs accepted", c(wf, "broken_accepted"), len(wf)),
    ]
    conf = {}
    for r in rows:
        k = (r["expected"], r["got"] if r["got"] in RC_VERDICT.values() else "error")
        conf[k] = conf.get(k, 0) + 1
    lines.insert(2, "  %-44s %3d / %d" % ("  of which accept with a not-read finding",
        c(rows, "accepted_with_not_read"),
        sum(1 for r in rows if r.get("accept_with_finding_ok"))))
    lines.append("  expected->got: " + ", ".join(
        "%s->%s %d" % (a, b, n) for (a, b), n in sorted(conf.items())))
    return "\n".join(lines)


def job_line(r):
    flags = []
    if not r["verdict_ok"]:
        flags.append("VERDICT")
    if r["working_rejected"]:
        flags.append("WORKING-REJECTED")
    if r["broken_accepted"]:
        flags.append("BROKEN-ACCEPTED")
    if r["silent_llm"]:
        flags.append("SILENT")
    if r["nonllm_as_llm"]:
        flags.append("NONLLM-AS-LLM")
    if r.get("accepted_with_not_read"):
        flags.append("accept+not-read(ok)")
    s = "%-40s exp %-6s got %-10s %s" % (r["job"][:40], r["expected"], r["got"],
                                         " ".join(flags) or "ok")
    if r["codes"]:
        s += "\n      codes: " + " ".join(r["codes"])
    for key, lab in (("wrong_values", "wrong"), ("said_wrong_values", "wrong but said"),
                     ("missed_values", "not read"), ("unstated_shown", "shown as job's"),
                     ("unstated_marked", "assumed (said)")):
        if r[key]:
            s += "\n      %s: %s" % (lab, ", ".join(r[key]))
    return s


def enforcing(policy):
    """POLICY's path, or a temporary copy's whose top-level mode is enforce."""
    with open(policy) as f:
        text = f.read()
    if re.search(r"^mode:\s*enforce\s*(#.*)?$", text, re.M):
        return policy, None
    if re.search(r"^mode:", text, re.M):
        text = re.sub(r"^mode:.*$", "mode: enforce", text, count=1, flags=re.M)
    else:
        text = "mode: enforce\n" + text
    fd, path = tempfile.mkstemp(prefix="score-policy.", suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    print("score.py: %s does not enforce; scored with its top-level mode set to enforce"
          % policy, file=sys.stderr)
    return path, path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("advisorctl")
    ap.add_argument("catalog")
    ap.add_argument("policy")
    ap.add_argument("--set", default="all", choices=["studied", "heldout", "all"])
    ap.add_argument("--json", action="store_true", help="print per-job results as JSON")
    ap.add_argument("-v", action="store_true", help="print each job's line")
    ap.add_argument("--jobs", default=os.path.join(HERE, "jobs"))
    ap.add_argument("--split", default=os.path.join(HERE, "split.json"))
    ap.add_argument("--only", default=None, help="comma-separated job-name prefixes")
    a = ap.parse_args()
    adv = os.path.abspath(a.advisorctl)
    cat = os.path.abspath(a.catalog)
    pol, scratch = enforcing(os.path.abspath(a.policy))
    try:
        score(a, adv, cat, pol)
    finally:
        if scratch:
            os.unlink(scratch)


def score(a, adv, cat, pol):
    with open(a.split) as f:
        split = json.load(f)
    jobs = load_jobs(a.jobs)
    if a.only:
        pre = a.only.split(",")
        jobs = [j for j in jobs if any(j["_name"].startswith(p) for p in pre)]
    sets = ["studied", "heldout"] if a.set == "all" else [a.set]
    results = {}
    for s in sets:
        repos = set(split[s])
        rows = []
        for meta in jobs:
            if meta["repo"] not in repos:
                continue
            rows.append(judge(meta, run_job(adv, cat, pol, meta)))
        results[s] = rows
    if a.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return
    for s in sets:
        print(table(s, results[s]))
        if a.v:
            for r in results[s]:
                print("    " + job_line(r).replace("\n", "\n    "))
        print()
    if a.set == "all":
        print(table("all", results["studied"] + results["heldout"]))


if __name__ == "__main__":
    main()
