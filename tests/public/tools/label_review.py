#!/usr/bin/env python3
"""Label review of jobs/*/meta.json (README "Label review").

Adds workload_hidden, accept_with_finding_ok and label_review to every job's
meta.json and applies the verdict changes that rules 1 and 3 require.  Idempotent;
tools/build.py runs it after materialising jobs/ so a rebuild keeps the review.
Writes meta.json as build.py does (indent=1) with ensure_ascii=False.
"""
import glob, json, os

ROOT = os.environ.get("CORPUS_DIR", "/work/corpus28")


# n: (workload_hidden, accept_with_finding_ok, new expected_verdict or None, review)
R = {
 1: (False, False, None, "ok"), 2: (False, False, None, "ok"), 3: (False, False, None, "ok"),
 4: (False, False, None, "ok"),
 5: (True, True, None, "ok"),
 6: (False, False, None, "ok"), 7: (False, False, None, "ok"), 8: (False, False, None, "ok"),
 9: (False, False, None, "ok"), 10: (False, False, None, "ok"),
 11: (True, True, None, "ok"),
 12: (True, False, "warn",
      "changed reject -> warn (rule 1): TP_SIZE=4 and MODEL_PATH are only positional arguments to /n/juncheng_lab/.../service_fasrc.sh, an absolute-path launcher not in the job, so what it does with them (TP, dtype, where it serves) cannot be proven; still warn, not accept-with-finding, because the job's own values (TP_SIZE=4, a 70B model) contradict its one-GPU request. works=false kept as the author's belief, not a proof"),
 13: (True, False, "warn",
      "changed reject -> warn (rule 1): TP_SIZE=4 and MODEL_PATH (GLM-4.5-Air) are only positional arguments to the absolute-path service_fasrc.sh, not in the job, so no proof of breakage; still warn, not accept-with-finding, because the job's own values contradict its one-GPU request. works=false kept as the author's belief, not a proof"),
 14: (False, False, None, "ok"),
 15: (True, True, None, "ok"), 16: (True, True, None, "ok"),
 17: (True, True, None, "ok"), 18: (True, True, None, "ok"),
 19: (True, True, None, "ok"), 20: (True, True, None, "ok"), 21: (True, True, None, "ok"),
 22: (True, True, None, "ok"), 23: (True, True, None, "ok"), 24: (True, True, None, "ok"),
 25: (False, False, None, "ok"),
 26: (True, True, None, "ok"),
 27: (False, False, None, "ok"), 28: (False, False, None, "ok"),
 29: (False, False, None, "ok"),
 30: (True, True, None, "ok"), 31: (True, True, None, "ok"), 32: (True, True, None, "ok"),
 33: (False, False, None, "ok"), 34: (False, False, None, "ok"), 35: (False, False, None, "ok"),
 36: (False, False, None, "ok"),
 37: (True, True, None, "ok"),
 38: (False, False, None, "ok"),
 39: (True, True, None, "ok"),
 40: (False, False, None, "ok"), 41: (False, False, None, "ok"),
 42: (True, True, None, "ok"), 43: (True, True, None, "ok"),
 44: (False, False, None, "ok"), 45: (False, False, None, "ok"),
 46: (True, True, None, "ok"), 47: (True, True, None, "ok"),
 48: (True, True, None, "ok"),
 49: (False, False, None, "ok"),
 50: (True, True, None, "ok"), 51: (True, True, None, "ok"),
 52: (True, True, None, "ok"), 53: (True, True, None, "ok"),
 54: (False, False, None, "ok"), 55: (False, False, None, "ok"),
 56: (False, False, None, "ok"), 57: (False, False, None, "ok"),
 58: (True, True, None, "ok"),
 59: (False, False, None, "ok"), 60: (False, False, None, "ok"),
 61: (False, False, None, "ok"), 62: (False, False, None, "ok"), 63: (False, False, None, "ok"),
 64: (False, False, None, "ok"), 65: (False, False, None, "ok"), 66: (False, False, None, "ok"),
 67: (False, False, None, "ok"),
 68: (True, True, None, "ok"), 69: (True, True, None, "ok"), 70: (True, True, None, "ok"),
 71: (False, False, None, "ok"),
 72: (True, False, None, "ok"),
 73: (False, False, None, "ok"),
 74: (True, True, None, "ok"),
 75: (True, False, None, "ok"),
 76: (False, False, None, "ok"), 77: (False, False, None, "ok"),
}


def apply(root=ROOT):
    n_done = 0
    for mp in sorted(glob.glob(os.path.join(root, "jobs", "*", "meta.json"))):
        n = int(os.path.basename(os.path.dirname(mp))[:3])
        hidden, ok, new, review = R[n]
        with open(mp) as f:
            meta = json.load(f)
        assert not ok or hidden, n
        assert not hidden or meta["llm_job"], n
        if new is not None:
            meta.setdefault("expected_verdict_before_review", meta["expected_verdict"])
            meta["expected_verdict"] = new
        assert not ok or meta["expected_verdict"] == "warn", n
        meta["workload_hidden"] = hidden
        meta["accept_with_finding_ok"] = ok
        meta["label_review"] = review
        with open(mp, "w") as f:
            json.dump(meta, f, indent=1, ensure_ascii=False)
        n_done += 1
    assert n_done == len(R), (n_done, len(R))
    return n_done


if __name__ == "__main__":
    print(apply(), "meta.json files reviewed")
