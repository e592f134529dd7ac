/*
 * words.h - the words that start LLM work, in one table (words.c): which
 * commands the reader tries, which arguments make a wrapper part of a
 * launch, which launches still make an LLM job when not followed, and
 * which script lines name a launch (follow.c).  Adding a launcher, server
 * or trainer is a row there.
 */
#ifndef ADVISOR_JOBREAD_WORDS_H
#define ADVISOR_JOBREAD_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* Where a word counts (a row's roles, or'ed). */
enum jr_word_role {
	JR_WORD_TRY = 1u << 0,     /* a command with it (in its first words) is tried as a launch */
	JR_WORD_ARG = 1u << 1,     /* among a wrapper's arguments: the wrapper is part of the launch */
	JR_WORD_ML = 1u << 2,      /* a launch with it that was not followed is still an LLM job's */
	JR_WORD_LINE = 1u << 3,    /* a script line with it names an LLM launch (follow.c) */
	JR_WORD_GENERIC = 1u << 4, /* a script line with it names a launcher of any program */
};

struct jr_word {
	const char *word;
	unsigned roles;
};

/* The table, and its length. */
const struct jr_word *jr_words(size_t *n);

/* Whether one of words from..limit-1 of argv holds (as a substring) a word
 * of the role. */
bool jr_words_in_argv(char *const *argv, int argc, int from, int limit, enum jr_word_role role);

#endif
