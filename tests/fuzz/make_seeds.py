#!/usr/bin/env python3
"""make_seeds.py - writes the text seed corpora of tests/fuzz/corpus/.

The seeds are real inputs (the shipped etc/*.yaml and pieces of them, the
sbatch/srun command lines of tests/unit/test_jobreq.c) and broken variants
of them.  The protobuf seeds of fuzz_wire come from gen_wire_seeds.c.
fuzz_path's seeds are the job corpus (tests/jobs) itself, a few with a
command line after the script (fuzz_path.c's input).
Run from anywhere; rewrites corpus/{catalog,policy,options,jobreq,path}, or
only those named: make_seeds.py path.
"""
import hashlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def entries(text, section):
    """The '  - name:' blocks of one top-level section of a YAML file."""
    m = re.search(r"^%s:\n(.*?)(?=^\S|\Z)" % section, text, re.S | re.M)
    body = m.group(1) if m else ""
    parts = re.split(r"(?m)^(?=  - name:)", body)
    return [p for p in parts if p.startswith("  - name:")]


def catalog_seeds():
    text = open(os.path.join(TOP, "etc", "catalog.yaml")).read()
    write("catalog", text)
    gpus, models = entries(text, "gpus"), entries(text, "models")
    for g in gpus:
        write("catalog", "gpus:\n" + g)
    for m in models:
        write("catalog", "models:\n" + m)
    g, m = gpus[0], models[0]
    dsv3 = [x for x in models if "deepseek-v3" in x][0]
    broken = [
        "",
        "gpus: []\nmodels: []\n",
        "gpus:\n" + g + g,                                   # duplicate
        "gpus:\n" + g.replace("memory_gib: 79.65", "memory_gib: -1"),
        "gpus:\n" + g.replace("memory_gib: 79.65", "memory_gib: 1e400"),
        "gpus:\n" + g.replace("memory_gib: 79.65", "memory_gib: nan"),
        "gpus:\n" + g.replace("gpus_per_node: 8", "gpus_per_node: 99999999999"),
        "gpus:\n" + g.replace("vendor: nvidia", "vendor: [a, b]"),
        "gpus:\n" + g.replace("vendor:", "vendorr:"),
        "gpus:\n" + g.replace("  - name: h100-sxm", "  - name: " + "x" * 100),
        "gpus:\n\t- name: g1\n",
        "gpus: {name: x}\n",
        "gpus:\n  - &a {name: g1}\n  - *a\n",
        "models:\n" + m.replace("layers: 32", "layers: 0"),
        "models:\n" + m.replace("hidden: 4096", "hidden: 2147483647"),
        "models:\n" + dsv3.replace("experts: 256", "experts: 2147483647"),
        "models:\n" + dsv3.replace("top_k: 8", "top_k: 300"),
        "models:\n" + dsv3.replace("mla: {", "mla: {q_lora_rank: 2147483647, "),
        "models:\n" + m + "gpus:\n" + g,
        "--- !!map\n? gpus\n: []\n",
        "gpus: [\n",
        "%YAML 1.1\n---\ngpus: []\n...\n---\nmodels: []\n",
        "models:\n  - name: m\n    aliases: [" + ", ".join("a%d" % i for i in range(50)) + "]\n",
    ]
    for b in broken:
        write("catalog", b)


def policy_seeds():
    text = open(os.path.join(TOP, "etc", "policy.yaml")).read()
    write("policy", text)
    for sec in re.split(r"(?m)^(?=\S)", text):
        if not sec.startswith("#"):
            write("policy", sec)
    broken = [
        "",
        "mode: warn\n",
        "mode: loud\n",
        "mode: [enforce]\n",
        "memory: {reserve_gib: -3}\n",
        "memory: {grad_bytes: 3}\n",
        "checkpoint: {gpu_mtbf_hours: 0}\n",
        "checkpoint: {warn_extra_waste: 0.5, reject_extra_waste: 0.1}\n",
        "estimate: {mfu: 1.5, pue: 0.5}\n",
        "log: {retention_days: -1}\n",
        "log: {retention_days: 7, max_mb: -5}\n",
        "log: {max_mb: 99999999999}\n",
        "limits: {requests_per_s: 50, burst: 500}\n",
        "limits: {requests_per_s: -1}\n",
        "limits: {requests_per_s: .nan, burst: 0}\n",
        "limits: {requests_per_s: 1e300, burst: 1.5}\n",
        "limits: [50, 500]\n",
        "limits: {rate: 5}\n",
        "partitions:\n  h100: {gpu: no-such-gpu}\n",
        "partitions:\n  h100: {gpu: h100}\n  H100: {gpu: h200}\n",
        "partitions:\n  " + "p" * 100 + ": {max_gpus: 1}\n",
        "partitions:\n  p: {gpus_per_node: 4294967296}\n",
        "partitions:\n  \"a: b\": {gpu: h100, mode: warn}\n  '#x': {}\n",
        "exempt: {users: [alice, bob], accounts: [bench]}\nadmins: {users: [root], groups: [wheel]}\n",
        "exempt: {users: alice}\n",
        "admins: {users: [\"\"]}\n",
        "mode: enforce\nmode: warn\n",
        "mode: &m warn\npartitions: {p: {mode: *m}}\n",
        "unknown_key: 1\n",
        "memory:\n  warn_headroom: .inf\n",
        "memory:\n  overhead_gib: 1e308\n",
        "partitions: {\"\\u00e9t\\u00e9\": {gpu: \"H100 SXM\"}}\n",
        "partitions: {\"tab\\there\": {}, \"nl\\nhere\": {}}\n",
        "[1, 2]\n",
        "!!binary aGVsbG8=\n",
    ]
    for b in broken:
        write("policy", b)


def options_seeds():
    for s in ["tp8,pp4,cp1,ep1,etp1,vpp2,dp16,sp", "tp8", "TP2,nosp", "tp0", "tp8,tp8",
              "tp1048577", "tp8,,pp2", "ep8,etp1,sp,nosp", "dp-1", "tp99999999999999999999"]:
        write("options", b"\x00" + s.encode())
    for s in ["90s", "30m", "2h", "1h30m", "1d", "3600", "0", "1d2h3m4s", "2h1d", "367d",
              "99999999999999", "1hh", "-5m", "1.5h"]:
        write("options", b"\x01" + s.encode())
    for s in ["off", "OFF", "30m,async", "2h,sync", "1h,fast", "off,async", ",async", "x" * 80]:
        write("options", b"\x02" + s.encode())
    lines = [
        "model=llama3-70b\nlayout=tp8,pp4\nzero=1\nprecision=bf16\nseq=8192\nmbs=1\ngbs=512\n"
        "recompute=selective\ntask=train\nframework=megatron\nckpt=2h,async\nadvisor=warn\n"
        "tokens=15T",
        "llm-model=deepseek-v3\nllm-layout=tp4,pp8,ep32,etp1\nllm-tokens=2e12",
        "zero=4\nprecision=int8\nseq=0\ngbs=67108865\nbogus=1",
        "model=" + "m" * 200, "model\nlayout\nckpt", "tokens=1e400\ntokens=0.5K\ntokens=T",
        "task=infer\nframework=fsdp\nrecompute=full\nadvisor=off",
    ]
    for s in lines:
        write("options", b"\x03" + s.encode())


def jobreq_seeds():
    src = open(os.path.join(TOP, "tests", "unit", "test_jobreq.c")).read()
    tools = {"JOBREQ_SBATCH": 0, "JOBREQ_SALLOC": 1, "JOBREQ_SRUN": 2}
    # { "what", TOOL, "cmdline", script-or-NULL, "env", ...
    row = re.compile(r'\{\s*"[^"]*",\s*(JOBREQ_\w+),\s*"([^"]*)",\s*(NULL|(?:"(?:[^"\\]|\\.)*"\s*)+),'
                     r'\s*"((?:[^"\\]|\\.)*)"', re.S)
    n = 0
    for m in row.finditer(src):
        tool, cmd, script, env = m.groups()
        args = cmd.split(" ")[1:]
        data = bytes([tools[tool]]) + "\n".join(args).encode()
        if script != "NULL":
            s = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', script))
            s = bytes(s, "utf-8").decode("unicode_escape")
            data += b"\0" + s.encode()
        else:
            data += b"\0"
        if env:
            data += b"\0" + "\n".join(env.split(";")).encode()
        write("jobreq", data)
        n += 1
    extra = [
        (0, "-N\n4\n--gres=gpu:h100:8\n--mem=64G\njob.sh", "#!/bin/bash\n#SBATCH -p h100\n#SBATCH --gpus-per-node=8\nsrun x\n", ""),
        (0, "--mem=9999999999999T\njob.sh", None, ""),
        (0, "--mem-per-gpu=80G\n-G\nh100:16\njob.sh", None, "SBATCH_PARTITION=h100"),
        (1, "-N2\n--gpus-per-task=h200:1\n-n16", None, "SALLOC_GRES=gpu:8"),
        (2, "-n8\n--gpus-per-node=8\npython\ntrain.py", None,
         "SLURM_JOB_ID=42\nSLURM_JOB_NUM_NODES=4\nSLURM_GPUS_ON_NODE=8\nSLURM_JOB_GPUS=0,1,2,3,4,5,6,7\nSLURM_JOB_PARTITION=h100"),
        (0, "job.sh", "#!/bin/sh\r\n#SBATCH --nodes=2-4 --gres=gpu:a100:4,shard:2\r\n#SBATCH --llm-model=llama3-8b\r\n", ""),
        (0, "--wrap\ntrue\n--nodes=abc", None, ""),
        (0, "--gres=gpu:h100:99999999\n--nodes=1000000\n--gpus-per-node=1000000", None, ""),
        (0, "job.sh", "#SBATCH '--partition=a b' \"--gres=gpu:2\"\n#SBATCH --exclusive\n", "SBATCH_EXCLUSIVE=1"),
    ]
    for tool, cmd, script, env in extra:
        data = bytes([tool]) + cmd.encode() + b"\0" + (script.encode() if script else b"")
        if script is None and not env:
            data = bytes([tool]) + cmd.encode()
        elif env:
            data += b"\0" + env.encode()
        write("jobreq", data)
    return n


def dict_file(target, words):
    d = os.path.join(HERE, "dict")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, target + ".dict"), "w") as f:
        f.write("# libFuzzer dictionary for fuzz_%s, written by make_seeds.py\n" % target)
        for w in sorted(set(words)):
            # Words are plain text but for the \\xNN escapes given as such.
            f.write('"%s"\n' % w.replace('"', '\\"'))


def dicts():
    yaml_syntax = ["- ", ": ", "{", "}", "[", "]", "&a", "*a", "!!str", "!!int", "---", "...",
                   "\\x0a", "null", "true", "false", "~", ".inf", ".nan", "0x", "1e308", "-1"]
    cat = open(os.path.join(TOP, "etc", "catalog.yaml")).read()
    pol = open(os.path.join(TOP, "etc", "policy.yaml")).read()
    keys = lambda t: [k + ":" for k in re.findall(r"(?m)^[ -]*([a-z_0-9]+):", t)] + \
        [k + ":" for k in re.findall(r"[{,] *([a-z_0-9]+):", t)]
    dict_file("catalog", keys(cat) + yaml_syntax + ["rmsnorm", "layernorm", "nvidia", "amd"])
    dict_file("policy", keys(pol) + yaml_syntax + ["off", "warn", "enforce", "h100", "h200"])
    dict_file("options", ["tp", "pp", "cp", "ep", "etp", "vpp", "dp", "sp", "nosp", ",",
                          "d", "h", "m", "s", "off", "async", "sync", "model=", "layout=",
                          "zero=", "precision=", "seq=", "mbs=", "gbs=", "recompute=", "task=",
                          "framework=", "ckpt=", "advisor=", "tokens=", "llm-", "bf16", "fp8",
                          "fp16", "fp32", "selective", "full", "none", "train", "finetune",
                          "lora", "infer", "megatron", "deepspeed", "fsdp", "generic", "warn",
                          "enforce", "T", "B", "K", "M", "G", "e"])
    jr = open(os.path.join(TOP, "common", "wire", "jobreq.c")).read()
    longs = ["--" + o for o in re.findall(r'\{ *"([a-z-]+)", *\w+_argument', jr)]
    envs = [e + "=" for e in re.findall(r'"((?:SLURM|SBATCH|SALLOC)_[A-Z_]*)"', jr)]
    dict_file("jobreq", longs + envs + ["#SBATCH ", "gpu:", "gres:", "gres/", "h100", ":8",
                                        "-N", "-n", "-G", "-p", "-C", "\\x00", "\\x0a"])


# fuzz_path's command lines (after a NUL, one word a line): resources given
# over the script's, --llm-* options, the script's own arguments after "--".
PATH_WORDS = [
    "--gres=gpu:h100:8\n--nodes=1",
    "-N\n2\n--gpus-per-node=8\n-p\nh100",
    "--gpus=16\n--llm-layout=tp8,pp2",
    "--llm-model=llama3-70b\n--llm-ckpt=off",
    "-p\nh100,debug\n--llm-seq=8192\n--llm-mbs=2",
    "--gpus=8\n--\n--model\nllama3-8b",
]


def path_seeds():
    """Every script of tests/jobs under its job's name; every eighth also
    with one of PATH_WORDS after a NUL."""
    d = os.path.join(HERE, "corpus", "path")
    os.makedirs(d, exist_ok=True)
    jobs = os.path.join(TOP, "tests", "jobs")
    names = sorted(j for j in os.listdir(jobs) if os.path.isdir(os.path.join(jobs, j)))
    for i, job in enumerate(names):
        script = [s for s in ("job.sbatch", "run.sh") if os.path.isfile(os.path.join(jobs, job, s))]
        if not script:
            continue
        data = open(os.path.join(jobs, job, script[0]), "rb").read()
        with open(os.path.join(d, job), "wb") as f:
            f.write(data)
        if i % 8 == 0:
            words = PATH_WORDS[i // 8 % len(PATH_WORDS)]
            with open(os.path.join(d, job + "+words"), "wb") as f:
                f.write(data + b"\0" + words.encode())
    # The dictionary: sbatch's options, the --llm-* options, and every flag
    # a launcher or trainer reader looks for (common/jobread).
    jr = open(os.path.join(TOP, "common", "wire", "jobreq.c")).read()
    opts = open(os.path.join(TOP, "common", "engine", "optlist.h")).read()
    flags = set()
    for root, _, files in os.walk(os.path.join(TOP, "common", "jobread")):
        for fn in files:
            if fn.endswith(".c"):
                src = open(os.path.join(root, fn)).read()
                flags.update(re.findall(r'"(--?[A-Za-z][A-Za-z0-9_.-]*)"', src))
    words = ["--" + o for o in re.findall(r'\{ *"([a-z-]+)", *\w+_argument', jr)]
    words += ["--llm-" + o + "=" for o in re.findall(r'X\([A-Z_]+, "([a-z-]+)"', opts)]
    words += sorted(flags) + ["#SBATCH ", "srun ", "torchrun ", "deepspeed ", "accelerate launch ",
                              "python -m ", "\\x00", "\\x0a--\\x0a", "gpu:h100:8", "h100"]
    dict_file("path", words)
    return len(names)


def pyprog_seeds():
    """The Python programs of tests/jobs (issue 28), and broken variants:
    cut in the middle, an unclosed bracket, a string quoted three times."""
    jobs = os.path.join(TOP, "tests", "jobs")
    n = 0
    for root, _, files in sorted(os.walk(jobs)):
        for fn in sorted(files):
            if not fn.endswith(".py"):
                continue
            data = open(os.path.join(root, fn), "rb").read()
            write("pyprog", data)
            write("pyprog", data[:len(data) // 2])
            write("pyprog", data + b"\nf((((x=")
            write("pyprog", data.replace(b'"', b'"""', 1))
            n += 1
    words = ["from_pretrained(", "AutoModelForCausalLM", "device_map=", '"auto"',
             "load_in_4bit=True", "BitsAndBytesConfig(", "LoraConfig(r=", "get_peft_model(",
             "TrainingArguments(", "SFTConfig(", "per_device_train_batch_size=",
             "gradient_accumulation_steps=", "deepspeed=", "fsdp=", "LLM(model=",
             "tensor_parallel_size=", "pipeline(", "add_argument(", "default=", "field(",
             "FastLanguageModel", ".cuda()", '.to("cuda")', '"""', 'f"{', "r'", "b'",
             "\\x5c\\x0a", "#", "**kw", ": int = ", " = ", "(", ")", ",", "."]
    dict_file("pyprog", words)
    return n


SEEDS = {"catalog": catalog_seeds, "policy": policy_seeds, "options": options_seeds,
         "jobreq": jobreq_seeds, "path": path_seeds, "pyprog": pyprog_seeds}

if __name__ == "__main__":
    wanted = sys.argv[1:] or list(SEEDS)
    for t in wanted:
        if t not in SEEDS:
            sys.exit("make_seeds.py: no corpus %s (known: %s)" % (t, " ".join(SEEDS)))
    if not sys.argv[1:]:
        dicts()
    for t in wanted:
        n = SEEDS[t]()
        if t == "jobreq" and n < 10:
            sys.exit("make_seeds.py: only %d rows found in test_jobreq.c" % n)
        print(t, len(os.listdir(os.path.join(HERE, "corpus", t))))
