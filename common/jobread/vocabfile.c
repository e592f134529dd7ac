/*
 * vocabfile.c - the vocabulary a tokenizer file holds, for the files that
 * are published under one name and copied unrenamed into every training
 * setup (issue 28): the reader knows their token count from the name,
 * as the trainer would from the file.
 *
 * Megatron-LM's README ("Downloading Checkpoints" and the data
 * preprocessing section) and GPT-NeoX's configs/local_setup.yml name the
 * files as Hugging Face first hosted them (s3://models.huggingface.co/
 * bert/gpt2-vocab.json, .../bert-large-uncased-vocab.txt ...); Megatron
 * reads them with the --tokenizer-type below (megatron/training/
 * tokenizer/tokenizer.py build_tokenizer: _GPT2BPETokenizer,
 * _BertWordPieceTokenizer lower_case true/false), GPT-NeoX with the same
 * tokenizer_type names (megatron/tokenizer/tokenizer.py).  The counts are
 * those of the files: GPT-2's encoder.json (openai/gpt-2, the Hugging Face
 * gpt2 config.json vocab_size 50257), BERT's WordPiece vocab.txt
 * (google-research/bert; bert-large-uncased config.json vocab_size 30522,
 * bert-large-cased 28996; base and large share each vocabulary).  Both
 * trainers pad the count to a multiple of make_vocab_size_divisible_by
 * (default 128) times the tensor-parallel size (_vocab_size_with_padding).
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "reader.h"
#include "util.h"

static const struct jr_vocab_file vocab_files[] = {
	{ "gpt2-vocab.json", "GPT2BPETokenizer", 50257 },
	{ "gpt2-merges.txt", "GPT2BPETokenizer", 50257 },
	{ "bert-large-uncased-vocab.txt", "BertWordPieceLowerCase", 30522 },
	{ "bert-base-uncased-vocab.txt", "BertWordPieceLowerCase", 30522 },
	{ "bert-large-cased-vocab.txt", "BertWordPieceCase", 28996 },
	{ "bert-base-cased-vocab.txt", "BertWordPieceCase", 28996 },
};

const struct jr_vocab_file *jr_vocab_file(const char *path)
{
	const char *base;

	if (!path || !*path)
		return NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < ADV_ARRAY_SIZE(vocab_files); i++)
		if (!strcasecmp(base, vocab_files[i].file))
			return &vocab_files[i];
	return NULL;
}

long long jr_vocab_padded(long long tokens, long long divisible_by, long long tp)
{
	long long mult;

	if (tokens <= 0 || tokens > (1LL << 30) || divisible_by <= 0 || tp <= 0 ||
	    divisible_by > (1LL << 20) || tp > (1LL << 20))
		return 0;
	mult = divisible_by * tp;
	if (mult > (1LL << 24))
		return 0;
	return (tokens + mult - 1) / mult * mult;
}
