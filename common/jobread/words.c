/*
 * words.c - the words that start LLM work, one row each with where it
 * counts (words.h).  Issue 28 found four lists of them in the reader
 * (jobread.c's candidates, wrapper arguments and ML words, follow.c's
 * launch words) that every new server or trainer had to be added to and
 * that had grown apart; this is the one list.
 *
 * The words are the programs', modules' and entry points' own names: the
 * launchers (Slurm's srun, PyTorch's torchrun and torch.distributed.run,
 * DeepSpeed's and accelerate's launchers, MPI's), the servers (vLLM,
 * SGLang, TensorRT-LLM's trtllm-serve, TGI's text-generation-launcher,
 * LMDeploy, llama.cpp's llama-server, ollama, Basaran), the evaluators
 * (lm_eval, lighteval) and the trainers (Megatron's pretrain_*.py, NeMo,
 * torchtitan, nanotron, GPT-NeoX's deepy.py, torchtune's `tune run`,
 * axolotl, LLaMA-Factory, OpenRLHF, TRL's CLI, Levanter, llm.c), each read
 * by its fw_*.c.
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "words.h"

#define T JR_WORD_TRY
#define A JR_WORD_ARG
#define M JR_WORD_ML
#define L JR_WORD_LINE
#define G JR_WORD_GENERIC

static const struct jr_word words[] = {
	/* Launchers. */
	{ "srun", T }, { "mpirun", T }, { "mpiexec", T },
	{ "torchrun", T | A | M | G }, { "torch.distributed", T | A | M },
	{ "torch.distributed.run", G }, { "torch.distributed.launch", G },
	{ "deepspeed", T | A | M | G }, { "accelerate", T | A | M },
	{ "accelerate launch", G }, { "accelerate-launch", G },
	{ "python", T | A }, { ".py", T | A }, { ".sh", T },
	{ "--nproc", A }, { "--tensor", A }, { "--model", A },
	/* Servers. */
	{ "vllm", T | A | M }, { "vllm serve", L }, { "vllm.entrypoints", L },
	{ "sglang", T | A | M }, { "sglang.launch_server", L },
	{ "trtllm", T | A | M }, { "trtllm-serve", L },
	{ "text-generation", T | A }, { "text-generation-launcher", M | L },
	{ "text-generation-inference", M | L },
	{ "lmdeploy", T | A | M }, { "lmdeploy serve", L },
	{ "llama-server", T | A | M | L },
	{ "ollama", T | A | M }, { "ollama serve", L },
	{ "basaran", T | M | L },
	/* Evaluators. */
	{ "lm_eval", T | A | M | L }, { "lm-eval", T | A | M | L }, { "lighteval", L },
	/* Trainers. */
	{ "megatron", M | L }, { "pretrain_gpt", M | L }, { "pretrain_llama", L },
	{ "pretrain_t5", L }, { "pretrain_bert", L }, { "pretrain_mamba", L },
	{ "nemo", T | M }, { "nemo_launcher", L },
	{ "torchtitan", T | M | L }, { "nanotron", T | M | L },
	{ "run_train", T }, { "run_train.py", L },
	{ "deepy", T }, { "deepy.py", L },
	{ "tune", T }, { "tune run", L },
	{ "axolotl", T | M | L },
	{ "llamafactory", T }, { "lmf", T }, { "llamafactory-cli", L },
	{ "openrlhf", T | L },
	{ "trl", T }, { "trl sft", L }, { "trl grpo", L }, { "trl dpo", L },
	{ "levanter", M | L },
	{ "train_gpt2cu", T | M | L },
};

const struct jr_word *jr_words(size_t *n)
{
	*n = ADV_ARRAY_SIZE(words);
	return words;
}

bool jr_words_in_argv(char *const *argv, int argc, int from, int limit, enum jr_word_role role)
{
	for (int i = from < 0 ? 0 : from; i < argc && i < limit; i++)
		for (size_t k = 0; argv[i] && k < ADV_ARRAY_SIZE(words); k++)
			if ((words[k].roles & role) && strstr(argv[i], words[k].word))
				return true;
	return false;
}
