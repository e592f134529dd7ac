/*
 * reader.h - the entry points of the job reader's parts that read a
 * command: argument scanning (argscan.c), the launchers (launch.c), the
 * framework readers (fw/fw_*.c) and model references (hfconfig.c).  The
 * orchestrator (jobread.c) calls them; they call each other and write
 * what they find into the reading context (ctx.h).
 *
 * A framework reader gets the trainer's command (program and arguments,
 * after the launcher's own options) and sets the values it finds with
 * jr_set_*() (ctx.h), each with its source.
 */
#ifndef ADVISOR_JOBREAD_READER_H
#define ADVISOR_JOBREAD_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "config/catalog.h"
#include "ctx.h"
#include "jobread/cfg/cfg.h"
#include "jobtypes.h"

/* ---- argument scanning (argscan.c) ---------------------------------------- */

/*
 * Finds option name ("--tensor-model-parallel-size" or "-tp") in cmd's
 * arguments from index `from`, written "--name VALUE" or "--name=VALUE".
 * Returns the index of the option word (last occurrence wins, as argparse)
 * and sets *value (NULL for a bare flag followed by another option or the
 * end) and *eq (written with '=').  -1 when absent.
 */
int jr_arg_find(const struct jr_cmd *cmd, int from, const char *name, const char **value, bool *eq);
/* Same for several spellings (NULL-terminated), e.g. {"--tp", "--tensor-parallel-size", NULL}. */
int jr_arg_find_any(const struct jr_cmd *cmd, int from, const char *const names[],
		    const char **value, bool *eq, const char **which);
/*
 * Integer option: sets field f from the last occurrence of any spelling,
 * with its source; an unknown value gives jr_set_unknown.  Returns true
 * when the option is present.
 */
bool jr_arg_int(struct jr_ctx *cx, const struct jr_cmd *cmd, int from, enum jobread_field f,
		const char *const names[]);
/* A bare boolean flag present (e.g. "--sequence-parallel"): sets f to v. */
bool jr_arg_flag(struct jr_ctx *cx, const struct jr_cmd *cmd, int from, enum jobread_field f,
		 long long v, const char *const names[]);
/* A boolean as Python configs and HfArgumentParser write it
 * (true/yes/on/1/y/t, false/no/off/0/n/f, any case): 1, 0, or -1. */
int jr_parse_bool(const char *s);
/* A torch dtype's name ("bfloat16", "bf16", "float16", "half", "fp16",
 * "float32", "float", "fp32", any case): enum adv_precision, or -1 ("auto":
 * the checkpoint's own, left to the engine). */
int jr_torch_dtype(const char *s);
/* Parses "8", "-1", "1e3"-free integers; false on anything else. */
bool jr_parse_ll(const char *s, long long *out);
/* The last path component of a program ("/x/y/pretrain_gpt.py" -> "pretrain_gpt.py"). */
const char *jr_basename(const char *path);
/* w is one of the '|'-separated words of alts ("serve|run"). */
bool jr_word_in(const char *w, const char *alts);
/* The first n bytes of w name key, '-' and '_' alike ("--a.b-c" is
 * "--a.b_c", as argparse, python-fire and draccus take them). */
bool jr_same_key(const char *w, size_t n, const char *key);
/* Source of option flag of cmd (flag as written, e.g. "--tensor-model-parallel-size"):
 * the file and line where that word was written (its last occurrence, as
 * argparse takes it; an array element's own line), else the command's.
 * A reader that strips arguments must keep word_line/word_file aligned
 * with argv (offset the pointers like argv). */
void jr_src_arg(struct jobread_src *s, const struct jr_cmd *cmd, const char *flag,
		enum jobread_style style);

/* ---- launchers (launch.c) ------------------------------------------------- */

/*
 * Strips wrappers (env, time, nohup, nice, timeout, stdbuf, numactl,
 * taskset, nsys profile, ncu, singularity/apptainer exec|run, docker/podman
 * run, enroot start, ray job submit --, python -u, uv run, conda run ...)
 * and launchers (srun, torchrun, python -m torch.distributed.run,
 * deepspeed, accelerate launch, mpirun/mpiexec) from cmd, setting
 * JR_WORLD, JR_NODES and JR_NPROC_PER_NODE with their sources, and the
 * launcher's name.  A wrapper option it does not know, or an image's own
 * command, stops the stripping with a note saying so.  Writes
 * the program that remains into *prog (argv[0] = the script or module,
 * e.g. "pretrain_gpt.py", "-m" forms resolved to the module name with
 * is_module).  Returns false when nothing is left to run.
 */
bool jr_launch_strip(struct jr_ctx *cx, const struct jr_cmd *cmd, struct jr_cmd *prog,
		     bool *is_module);
/*
 * The shell script a stripped command runs (prog as jr_launch_strip gives
 * it): "./entrypoint.sh ARGS" (a name ending in .sh or .bash), "bash
 * launch.sh ARGS", "sh -x run.sh ARGS".  Returns the index of the script's
 * word in prog (its arguments follow it), -1 when prog is no shell script
 * ("bash -c STRING" included: the evaluator reads the string itself).
 */
int jr_launch_script(const struct jr_cmd *prog);

/* ---- trainers (fw_*.c) ---------------------------------------------------- */

/*
 * Each recognises the program (by name, module or flags) and, when it is
 * its framework's, reads it and returns true.  jobread.c tries them in
 * order of specificity.  prog->argv[0] is the script or module name.
 */
bool jr_fw_megatron(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);  /* Megatron-LM, Megatron-DeepSpeed */
bool jr_fw_nemo(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_torchtitan(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_nanotron(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_neox(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_torchtune(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_axolotl(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_llamafactory(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_openrlhf(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_vllm(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
bool jr_fw_sglang(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
/* vLLM's --quantization names (QUANTIZATION_METHODS, SGLang's the same;
 * lighteval's and lm_eval's quantization= pass them to vLLM): the
 * weights' enum adv_weights, or -1 for a scheme not modelled (fw_serve.c). */
int jr_vllm_quant(const char *name);
/* TensorRT-LLM trtllm-serve, TGI, LMDeploy, llama.cpp, ollama, Basaran (fw_serve.c's table). */
bool jr_fw_server(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
/* lm-evaluation-harness: lm_eval --model hf|vllm --model_args K=V,... (fw_lighteval.c). */
bool jr_fw_lmeval(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
/* true when a container image's entrypoint is a server a reader knows
 * (text-generation-inference, vllm-openai, ollama, ...): `docker run
 * IMAGE --flags` runs it with the flags (launch.c). */
bool jr_image_entry(const char *image);
bool jr_fw_hf(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);       /* HF Trainer, TRL, run_clm.py ... */
/* TrainingArguments' fsdp= ("full_shard auto_wrap": ZeRO 3, "shard_grad_op":
 * 2, "hybrid_shard(_zero2)", "no_shard"): JR_ZERO and JR_FRAMEWORK fsdp
 * (fw_hf.c; fw_python.c reads the same keyword in a program). */
void jr_hf_fsdp(struct jr_ctx *cx, const char *text, const struct jobread_src *src);
bool jr_fw_olmo(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);     /* OLMo scripts/train.py */
bool jr_fw_llamacookbook(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module); /* finetuning.py */
bool jr_fw_llmc(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);   /* llm.c train_gpt2cu */
bool jr_fw_levanter(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);  /* levanter.main.train_lm */
bool jr_fw_lighteval(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module); /* lighteval vllm|accelerate */
bool jr_fw_verl(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);      /* python -m verl.trainer.main_ppo */

/*
 * The program a launch runs when no framework reader above knows it
 * (fw_python.c): a .py file, or "-m pkg.mod" of a package, in the submit
 * directory, read statically for literal evidence.  Returns JR_PY_NONE
 * (no Python program of the job's), JR_PY_LLM (read, an LLM job: its
 * values set, the trainer named), JR_PY_NOT_LLM (read, no LLM in it),
 * JR_PY_NOT_READ (cannot be read), JR_PY_NEED (asked of the client),
 * JR_PY_WEAK (it only loads a model: kept aside, jr_program_weak, and
 * taken by jr_program_finish when nothing else is the job's workload).
 * The last three are kept in the context (jr_program_said).
 */
enum { JR_PY_NONE = 0, JR_PY_LLM, JR_PY_NOT_LLM, JR_PY_NOT_READ, JR_PY_NEED, JR_PY_WEAK };
int jr_py_program(struct jr_ctx *cx, const struct jr_cmd *prog, bool is_module);
/* The program of a script a flag-based reader (fw_hf.c) read: what only
 * the program states is added; the flags read win (fw_python.c). */
void jr_py_supplement(struct jr_ctx *cx, const struct jr_cmd *prog);
/* After the walk: a program not read, where no trainer read the job, makes
 * the job's workload unknown (PROGRAM_NOT_READ, an LLM job); one read
 * without LLM evidence says why the job is not one (out->program_why). */
void jr_program_finish(struct jr_ctx *cx);

/* DeepSpeed JSON (fw_deepspeed.c): zero stage, micro/global batch,
 * gradient accumulation, bf16/fp16, from a ds_config file named by a
 * flag.  Used by Megatron-DeepSpeed, HF, accelerate and the deepspeed
 * launcher. */
void jr_read_ds_config(struct jr_ctx *cx, const char *path);
/* accelerate config YAML (fw_deepspeed.c): distributed_type,
 * deepspeed_config.zero_stage / deepspeed_config_file, fsdp_config,
 * num_processes, num_machines, mixed_precision. */
/* Returns true when the file was read; rdzv gets its rdzv_backend and
 * ds_launcher its deepspeed_config.deepspeed_multinode_launcher ("" when
 * it names none), for RANK_EXPANDED_ONCE (launch.c). */
bool jr_read_accelerate_config(struct jr_ctx *cx, const char *path, char *rdzv, size_t rdzvlen,
			       char *ds_launcher, size_t dslen);

/*
 * A model named by a trainer (hfconfig.c): a catalog name or alias (incl.
 * HF ids) sets JR_MODEL; a local directory with a config.json is read as
 * an inline architecture (hidden_size, num_hidden_layers, ...) and sets
 * the JR_ARCH_* fields; a name whose words are one catalog model's
 * (common/config/modelname.c: "Meta-Llama-3.1-70B-Instruct-FP8") sets
 * JR_MODEL to that model's name and says what rests on the name
 * (SCRIPT_ASSUMED: a local directory, a release date, a quantized
 * checkpoint); anything else sets JR_MODEL to the name as given (the
 * engine then says MODEL_UNKNOWN with suggestions).
 */
void jr_model_ref(struct jr_ctx *cx, const char *name, const struct jobread_src *src);
/* A catalog model by a framework's own spelling of its name ("llama3_70b",
 * "llama31_405b", "llama3_1_8b", "qwen2_5_7b": the catalog writes hyphens
 * and a dotted minor version; else by its words, modelname.c); NULL when
 * unknown.  Used by NeMo recipes, torchtune builders and torchtitan
 * registry names. */
const struct adv_model *jr_catalog_variant(const catalog_t *cat, const char *name);
/* The catalog model whose tokenizer a trainer names: a Hub id or alias
 * ("meta-llama/Meta-Llama-3-8B"), a local copy keeping the Hub's name as
 * its last component, or a file in one ("/m/Llama-2-7b-hf/tokenizer.model").
 * NULL when none. */
const struct adv_model *jr_catalog_tokenizer(const catalog_t *cat, const char *name);
/* A tokenizer file published under a name every setup keeps
 * ("gpt2-vocab.json", "bert-large-uncased-vocab.txt"; vocabfile.c): the
 * --tokenizer-type that reads it and its token count.  NULL when the
 * file's last component is not one. */
struct jr_vocab_file {
	const char *file;
	const char *tokenizer;   /* Megatron's and GPT-NeoX's tokenizer type */
	int tokens;
};
const struct jr_vocab_file *jr_vocab_file(const char *path);
/* Megatron's and GPT-NeoX's _vocab_size_with_padding: tokens rounded up to
 * a multiple of divisible_by x tp; 0 when an argument is out of range. */
long long jr_vocab_padded(long long tokens, long long divisible_by, long long tp);
/* Reads a Hugging Face config.json text into JR_ARCH_* fields; a
 * quantization_config is said (SCRIPT_ASSUMED: costed as 16-bit). */
void jr_read_hf_config(struct jr_ctx *cx, const char *display, const cfg_t *cfg);

#endif
