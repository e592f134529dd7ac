/*
 * test_pyprog.c - the program a job runs, read as text (issue 28): the
 * Python scanner (common/jobread/pyscan.c) on small programs and hostile
 * text, then the reader (common/jobread/fw/fw_python.c) end to end through
 * jobread_read with the program as a file of the submit directory: model
 * loads, LoRA and 4-bit loading, TrainingArguments, argparse and dataclass
 * parameters with the job's flags, a program not read (PROGRAM_NOT_READ)
 * and one read without an LLM (not an LLM job, program_why).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "fixture.h"
#include "jobread/jobread.h"
#include "jobread/pyscan.h"

#define CWD "/home/ada/run"

/* ---- the scanner ------------------------------------------------------------------ */

static struct pyscan_run *scan(const char *text)
{
	struct pyscan_run *s = malloc(sizeof(*s));

	assert_non_null(s);
	pyscan_run(text, strlen(text), NULL, NULL, s);
	return s;
}

static int call_named(const struct pyscan_run *s, const char *name)
{
	for (int c = 0; c < s->n_calls; c++)
		if (!strcmp(s->calls[c].name, name))
			return c;
	return -1;
}

static const struct py_arg *arg_kw(const struct pyscan_run *s, int call, const char *kw, int pos)
{
	for (int i = 0; i < s->n_args; i++)
		if (s->args[i].call == call && (kw ? !strcmp(s->args[i].kw, kw) : s->args[i].pos == pos))
			return &s->args[i];
	return NULL;
}

static void test_scan_calls_and_literals(void **st)
{
	(void)st;
	struct pyscan_run *s = scan(
		/* 1 */ "# from_pretrained(\"not/this\") in a comment\n"
		/* 2 */ "import torch\n"
		/* 3 */ "doc = '''a from_pretrained(\"nor/this\")\n"
		/* 4 */ "still the string'''\n"
		/* 5 */ "model = AutoModelForCausalLM.from_pretrained(\n"
		/* 6 */ "    \"org/\" 'model-7b',  # joined\n"
		/* 7 */ "    device_map=\"auto\", torch_dtype=torch.bfloat16,\n"
		/* 8 */ "    quantization_config=BitsAndBytesConfig(load_in_4bit=True),\n"
		/* 9 */ "    lr=-3e-4, name=f\"x{y}\", n=None, **extra)\n");
	int c = call_named(s, "AutoModelForCausalLM.from_pretrained");
	int b = call_named(s, "BitsAndBytesConfig");
	const struct py_arg *a;

	assert_int_equal(s->lines, 9);
	assert_int_equal(c >= 0, 1);
	assert_int_equal(s->calls[c].line, 5);
	assert_int_equal(call_named(s, "from_pretrained"), -1);
	a = arg_kw(s, c, NULL, 0);
	assert_non_null(a);
	assert_int_equal(a->kind, PY_STR);
	assert_string_equal(a->text, "org/model-7b");
	assert_int_equal(a->line, 6);
	a = arg_kw(s, c, "device_map", -1);
	assert_int_equal(a->kind, PY_STR);
	assert_string_equal(a->text, "auto");
	assert_int_equal(a->line, 7);
	a = arg_kw(s, c, "torch_dtype", -1);
	assert_int_equal(a->kind, PY_NAME);
	assert_string_equal(a->text, "torch.bfloat16");
	a = arg_kw(s, c, "quantization_config", -1);
	assert_int_equal(a->kind, PY_CALL);
	assert_int_equal(a->sub, b);
	a = arg_kw(s, b, "load_in_4bit", -1);
	assert_int_equal(a->kind, PY_TRUE);
	a = arg_kw(s, c, "lr", -1);
	assert_int_equal(a->kind, PY_NUM);
	assert_string_equal(a->text, "-3e-4");
	assert_int_equal(arg_kw(s, c, "name", -1)->kind, PY_OTHER);   /* an f-string field */
	assert_int_equal(arg_kw(s, c, "n", -1)->kind, PY_NONE);
	assert_non_null(arg_kw(s, c, "*", -1));                          /* **extra */
	free(s);
}

static void test_scan_assignments(void **st)
{
	(void)st;
	struct pyscan_run *s = scan(
		/* 1 */ "MODEL = \"meta-llama/Meta-Llama-3-8B\"\n"
		/* 2 */ "@dataclass\n"
		/* 3 */ "class Args:\n"
		/* 4 */ "    model_name: Optional[str] = field(default=\"x/y\", metadata={\"h\": 1})\n"
		/* 5 */ "    seq: int = 2048\n"
		/* 6 */ "steps = 10; steps += 1\n"
		/* 7 */ "a = b = 3\n"
		/* 8 */ "if x: y = 1\n"
		/* 9 */ "path = r'C:\\new' \\\n"
		/* 10 */ "    '\\tab'\n");
	int n = 0;

	for (int i = 0; i < s->n_assign; i++) {
		const struct py_assign *a = &s->assign[i];

		if (!strcmp(a->name, "MODEL")) {
			assert_int_equal(a->kind, PY_STR);
			assert_string_equal(a->text, "meta-llama/Meta-Llama-3-8B");
			assert_int_equal(a->line, 1);
			n++;
		} else if (!strcmp(a->name, "model_name")) {
			assert_true(a->annotated);
			assert_int_equal(a->kind, PY_CALL);
			assert_string_equal(s->calls[a->sub].name, "field");
			assert_string_equal(arg_kw(s, a->sub, "default", -1)->text, "x/y");
			n++;
		} else if (!strcmp(a->name, "seq")) {
			assert_true(a->annotated);
			assert_int_equal(a->kind, PY_NUM);
			n++;
		} else if (!strcmp(a->name, "steps")) {
			n++;   /* twice: 10, then an augmented one */
		} else if (!strcmp(a->name, "a")) {
			assert_int_equal(a->kind, PY_OTHER);
			n++;
		} else if (!strcmp(a->name, "path")) {
			assert_int_equal(a->kind, PY_STR);
			assert_string_equal(a->text, "C:\\new\t" "ab");
			n++;
		} else {
			fail_msg("unexpected assignment %s", a->name);
		}
	}
	assert_int_equal(n, 7);
	for (int i = 0; i < s->n_assign; i++)
		if (!strcmp(s->assign[i].name, "steps") && s->assign[i].line == 6 &&
		    s->assign[i].kind == PY_OTHER)
			n = -1;
	assert_int_equal(n, -1);   /* steps += 1 is no literal */
	free(s);
}

static void test_scan_imports(void **st)
{
	(void)st;
	struct pyscan_run *s = scan(
		/* 1 */ "import os, lab.train as t\n"
		/* 2 */ "from .model import build, Net as N\n"
		/* 3 */ "from pkg import (a, b)\n"
		/* 4 */ "x = 'import nothing'\n");
	static const char *const want_names[] = { "os", "lab.train", ".model", ".model.build",
						  ".model.Net", "pkg" };
	static const int want_lines[] = { 1, 1, 2, 2, 2, 3 };

	assert_int_equal(s->n_imports, 6);
	for (int i = 0; i < 6; i++) {
		assert_string_equal(s->imports[i].name, want_names[i]);
		assert_int_equal(s->imports[i].line, want_lines[i]);
	}
	free(s);
}

/* Hostile text: every input ends, within a bound, with what fits kept. */
static void test_scan_hostile(void **st)
{
	(void)st;
	static const char *const small[] = {
		"f(", ")))))", "f(a=", "'''", "\"abc", "f(**", "x = -", "a.b.(c)", "\\", "#", "f(x)(y)(z)",
		"def f(model='x'): pass", "class A(B): pass", "r'\\'", "x=(", "\xff\xfe(\x01=\x02)",
	};
	size_t big = 1u << 20;
	char *t = malloc(big + 1);
	struct pyscan_run *s = malloc(sizeof(*s));
	clock_t c0 = clock();

	assert_non_null(t);
	assert_non_null(s);
	for (size_t k = 0; k < sizeof(small) / sizeof(small[0]); k++)
		pyscan_run(small[k], strlen(small[k]), NULL, NULL, s);
	pyscan_run("def f(model='x'): pass", 22, NULL, NULL, s);
	assert_int_equal(call_named(s, "f"), -1);
	/* 1 MiB of '(' : deeper than PY_MAX_DEPTH, skipped by counting. */
	memset(t, '(', big);
	pyscan_run(t, big, NULL, NULL, s);
	/* 1 MiB of calls: the bound on calls kept. */
	for (size_t i = 0; i + 8 <= big; i += 8)
		memcpy(t + i, "f(a=1)\n ", 8);
	pyscan_run(t, big, NULL, NULL, s);
	assert_int_equal(s->n_calls, PY_MAX_CALLS);
	assert_true(s->cut);
	/* Not NUL-terminated: the scanner reads len bytes only. */
	memcpy(t, "x = 'abc", 8);
	pyscan_run(t, 8, NULL, NULL, s);
	assert_true((double)(clock() - c0) / CLOCKS_PER_SEC < 5.0);
	free(t);
	free(s);
}

/* ---- the reader, end to end -------------------------------------------------------- */

struct vfile {
	const char *path;
	const char *text;
};

static int open_file(void *arg, const char *path, const char **text, size_t *len)
{
	const struct vfile *f = arg;

	for (; f && f->path; f++)
		if (!strcmp(f->path, path)) {
			*text = f->text;
			*len = strlen(f->text);
			return JOBREAD_FILE_OK;
		}
	return JOBREAD_FILE_MISSING;
}

static int setup(void **st)
{
	catalog_t *cat = fixture_catalog(NULL);

	*st = cat;
	return cat ? 0 : -1;
}

static int teardown(void **st)
{
	catalog_destroy(*st);
	return 0;
}

static struct jobread_out *read_job_nodes(void **st, const char *script, const struct vfile *files,
					  int nodes, int gpus_per_node)
{
	struct jobread_input in;
	struct jobread_out *out = calloc(1, sizeof(*out));

	assert_non_null(out);
	memset(&in, 0, sizeof(in));
	in.tool = JOBREAD_SBATCH;
	in.script_name = "job.sbatch";
	in.script = script;
	in.script_len = strlen(script);
	in.cwd = CWD;
	snprintf(in.res.gpu, sizeof(in.res.gpu), "h100");
	in.res.nodes = nodes;
	in.res.gpus_per_node = gpus_per_node;
	in.res.gpus = nodes * gpus_per_node;
	in.files.open = open_file;
	in.files.arg = (void *)files;
	jobread_read(*st, &in, out);
	return out;
}

static struct jobread_out *read_job(void **st, const char *script, const struct vfile *files,
				    int gpus)
{
	return read_job_nodes(st, script, files, 1, gpus);
}

static void want(const struct jobread_out *o, enum jobread_field f, long long v, const char *file,
		 int line, const char *key)
{
	const struct jobread_value *x = &o->v[f];

	if (!x->set || x->unknown || x->i != v || strcmp(x->src.file, file) || x->src.line != line ||
	    (key && strcmp(x->src.key, key)))
		fail_msg("%s: want %lld from %s:%d %s, got %s%s%lld from %s:%d '%s'",
			 jobread_field_name(f), v, file, line, key ? key : "", x->set ? "" : "(unset) ",
			 x->unknown ? "(unknown) " : "", x->i, x->src.file, x->src.line, x->src.key);
}

static bool has_note(const struct jobread_out *o, const char *code, const char *text)
{
	for (int i = 0; i < o->n_notes; i++)
		if (!strcmp(o->notes[i].code, code) && (!text || strstr(o->notes[i].message, text)))
			return true;
	return false;
}

static void test_read_trainer_program(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/sft.py",
		  /* 1 */ "import argparse\n"
		  /* 2 */ "p = argparse.ArgumentParser()\n"
		  /* 3 */ "p.add_argument('--model-name', default='meta-llama/Meta-Llama-3-8B')\n"
		  /* 4 */ "p.add_argument('--bs', type=int, default=4)\n"
		  /* 5 */ "p.add_argument('--ckpt', action='store_true')\n"
		  /* 6 */ "args = p.parse_args()\n"
		  /* 7 */ "m = AutoModelForCausalLM.from_pretrained(args.model_name)\n"
		  /* 8 */ "cfg = TrainingArguments(per_device_train_batch_size=args.bs,\n"
		  /* 9 */ "    gradient_checkpointing=args.ckpt, deepspeed='ds.json', fp16=True)\n"
		  /* 10 */ "Trainer(model=m, args=cfg).train()\n" },
		{ CWD "/ds.json", "{\"zero_optimization\": {\"stage\": 3}}\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\n"
					 "torchrun --nproc_per_node 8 sft.py --model-name meta-llama/Meta-Llama-3-70B --bs 2\n",
					 files, 8);

	assert_true(o->is_llm);
	assert_string_equal(o->trainer, "hf");
	assert_string_equal(o->v[JR_MODEL].s, "meta-llama/Meta-Llama-3-70B");
	assert_string_equal(o->v[JR_MODEL].src.file, "job.sbatch");
	want(o, JR_MBS, 2, "job.sbatch", 2, "--bs");
	want(o, JR_RECOMPUTE, ADV_RECOMPUTE_NONE, "sft.py", 3 + 2, "--ckpt");
	want(o, JR_ZERO, 3, "ds.json", 1, NULL);
	want(o, JR_PRECISION, ADV_PREC_FP16, "sft.py", 9, "fp16");
	want(o, JR_TASK, ADV_TASK_FINETUNE, "sft.py", 8, NULL);
	free(o);
}

static void test_read_dataclass_and_names(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/pkg/train.py",
		  /* 1 */ "@dataclass\n"
		  /* 2 */ "class ScriptArgs:\n"
		  /* 3 */ "    model_id: str = field(default='Qwen/Qwen2.5-7B')\n"
		  /* 4 */ "    rank: int = 16\n"
		  /* 5 */ "args = HfArgumentParser(ScriptArgs).parse_args_into_dataclasses()[0]\n"
		  /* 6 */ "SEQ = 4096\n"
		  /* 7 */ "model, tok = FastLanguageModel.from_pretrained(model_name=args.model_id,\n"
		  /* 8 */ "    max_seq_length=SEQ, load_in_4bit=True)\n"
		  /* 9 */ "model = FastLanguageModel.get_peft_model(model, r=args.rank)\n"
		  /* 10 */ "SFTTrainer(model=model, args=SFTConfig(per_device_train_batch_size=1)).train()\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython -m pkg.train --rank 8\n", files, 1);

	assert_true(o->is_llm);
	assert_string_equal(o->trainer, "trl");
	assert_string_equal(o->v[JR_MODEL].s, "Qwen/Qwen2.5-7B");
	assert_string_equal(o->v[JR_MODEL].src.file, "pkg/train.py");
	assert_int_equal(o->v[JR_MODEL].src.line, 3);
	want(o, JR_SEQ, 4096, "pkg/train.py", 6, "SEQ");
	want(o, JR_WEIGHTS, ADV_WEIGHTS_INT4, "pkg/train.py", 8, "load_in_4bit");
	want(o, JR_MBS, 1, "pkg/train.py", 10, "per_device_train_batch_size");
	assert_int_equal(o->v[JR_TASK].i, ADV_TASK_LORA);
	free(o);
}

static void test_read_model_unknown(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/gen.py",
		  "name = 'meta-llama/Meta-Llama-3-8B'\n"
		  "if big: name = 'meta-llama/Meta-Llama-3-70B'\n"
		  "name = pick()\n"
		  "LLM(model=name, tensor_parallel_size=2).generate(prompts)\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython gen.py\n", files, 2);

	assert_true(o->is_llm);
	assert_true(o->v[JR_MODEL].set && o->v[JR_MODEL].unknown);
	want(o, JR_TP, 2, "gen.py", 4, "tensor_parallel_size");
	assert_int_equal(o->v[JR_TASK].i, ADV_TASK_INFER);
	free(o);
}

static void test_program_not_read(void **st)
{
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython train.py --lr 1e-4\n", NULL, 8);

	assert_true(o->is_llm);
	assert_true(has_note(o, "PROGRAM_NOT_READ", "train.py was not read"));
	free(o);
	o = read_job(st, "#!/bin/bash\npython ../shared/train.py\n", NULL, 8);
	assert_true(has_note(o, "PROGRAM_NOT_READ", "not in the submit directory"));
	free(o);
	/* A tool module is no program of the job's. */
	o = read_job(st, "#!/bin/bash\npython -m pip install -r req.txt\n./a.out\n", NULL, 8);
	assert_false(o->is_llm);
	assert_int_equal(o->n_notes, 0);
	free(o);
}

static void test_program_not_llm(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/cls.py",
		  "model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased')\n"
		  "Trainer(model=model, args=TrainingArguments(per_device_train_batch_size=32)).train()\n" },
		{ NULL, NULL },
	};
	static const struct vfile vit[] = {
		{ CWD "/vit.py", "p = pipeline('image-classification', model='google/vit-base-patch16-224')\n"
				 "print(p('cat.png'))\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\ntorchrun --nproc_per_node 4 cls.py\n", files, 4);

	assert_false(o->is_llm);
	assert_int_equal(o->n_notes, 0);
	assert_non_null(strstr(o->program_why, "cls.py read (2 lines)"));
	free(o);
	o = read_job(st, "#!/bin/bash\npython vit.py\n", vit, 1);
	assert_false(o->is_llm);
	free(o);
}

/* The model loaded in a module of the program's directory. */
static void test_program_module(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/app/main.py", "from .load import get\nfrom torch import nn\nm = get()\n"
				      "m.generate(q)\n" },
		{ CWD "/app/load.py",
		  "def get():\n    return AutoModelForCausalLM.from_pretrained('Qwen/Qwen2.5-7B')\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython app/main.py\n", files, 1);

	assert_true(o->is_llm);
	assert_string_equal(o->v[JR_MODEL].s, "Qwen/Qwen2.5-7B");
	assert_string_equal(o->v[JR_MODEL].src.file, "app/load.py");
	assert_int_equal(o->v[JR_MODEL].src.line, 2);
	free(o);
}

static void test_program_one_gpu(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/chat.py",
		  "m = AutoModelForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-8B').cuda()\n"
		  "m.generate(x)\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython chat.py\n", files, 4);

	assert_true(has_note(o, "GPUS_IDLE", "3 of the node's 4 GPUs stay idle"));
	free(o);
	o = read_job(st, "#!/bin/bash\npython chat.py\n", files, 1);
	assert_false(has_note(o, "GPUS_IDLE", NULL));
	free(o);
	/* Two nodes: the batch script's program runs on the first only. */
	o = read_job_nodes(st, "#!/bin/bash\npython chat.py\n", files, 2, 8);
	assert_true(has_note(o, "GPUS_IDLE", "on the first of the job's 2 nodes only"));
	free(o);
	o = read_job_nodes(st, "#!/bin/bash\nsrun python chat.py\n", files, 2, 8);
	assert_false(has_note(o, "GPUS_IDLE", "on the first"));
	free(o);
}

/* device_map="auto" under one process: the node's GPUs, as pipeline
 * stages; under accelerate launch --num_processes 1 too (no mismatch of
 * one process and 4 GPUs). */
static void test_program_device_map(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/t.py", "m = AutoModelForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-70B',\n"
			       "    device_map='auto')\nTrainer(model=m).train()\n" },
		{ NULL, NULL },
	};
	static const char *const scripts[] = {
		"#!/bin/bash\npython t.py\n",
		"#!/bin/bash\naccelerate launch --num_processes 1 t.py\n",
	};

	for (size_t k = 0; k < 2; k++) {
		struct jobread_out *o = read_job(st, scripts[k], files, 4);

		want(o, JR_PP, 4, "t.py", 2, "device_map");
		want(o, JR_WORLD, 4, "t.py", 2, "device_map");
		assert_true(has_note(o, "SCRIPT_ASSUMED", "judged as 4 pipeline stages"));
		free(o);
	}
}

/* A program that only loads a model (a download before the launch) does
 * not end the walk; alone, it is the job's workload. */
static void test_program_weak(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/fetch.py", "AutoModelForCausalLM.from_pretrained('meta-llama/Meta-Llama-3-70B')"
				   ".save_pretrained('/scratch/m')\n" },
		{ CWD "/sft.py", "SFTTrainer(model='Qwen/Qwen2.5-7B', args=SFTConfig(max_length=1024)).train()\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython fetch.py\ntorchrun --nproc_per_node 8 sft.py\n",
					 files, 8);

	assert_true(o->is_llm);
	assert_string_equal(o->trainer, "trl");
	assert_string_equal(o->v[JR_MODEL].s, "Qwen/Qwen2.5-7B");
	want(o, JR_SEQ, 1024, "sft.py", 1, "max_length");
	free(o);
	o = read_job(st, "#!/bin/bash\npython fetch.py\n", files, 8);
	assert_true(o->is_llm);
	assert_string_equal(o->trainer, "python");
	assert_string_equal(o->v[JR_MODEL].s, "meta-llama/Meta-Llama-3-70B");
	assert_false(o->v[JR_TASK].set);
	free(o);
}

/* vLLM's offline engine uses tensor_parallel_size x pipeline_parallel_size GPUs. */
static void test_program_vllm_idle(void **st)
{
	static const struct vfile files[] = {
		{ CWD "/gen.py", "llm = LLM(model='meta-llama/Meta-Llama-3-8B', tensor_parallel_size=2)\n" },
		{ NULL, NULL },
	};
	struct jobread_out *o = read_job(st, "#!/bin/bash\npython gen.py\n", files, 8);

	assert_true(has_note(o, "GPUS_IDLE", "6 of the node's 8 GPUs stay idle"));
	free(o);
	o = read_job(st, "#!/bin/bash\npython gen.py\n", files, 2);
	assert_false(has_note(o, "GPUS_IDLE", NULL));
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_calls_and_literals),
		cmocka_unit_test(test_scan_assignments),
		cmocka_unit_test(test_scan_imports),
		cmocka_unit_test(test_scan_hostile),
		cmocka_unit_test_setup_teardown(test_read_trainer_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_dataclass_and_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_model_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_not_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_not_llm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_one_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_vllm_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_weak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_device_map, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
