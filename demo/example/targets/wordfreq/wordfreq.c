/*
 * wordfreq counts the words of a text file and prints the most frequent ones,
 * with the total and distinct counts. Words are runs of ASCII letters,
 * lower-cased; ties are broken alphabetically so the output is deterministic.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP 10
#define MAXWORD 64

struct entry {
	char *word;
	long count;
};

struct table {
	struct entry *items;
	size_t len, cap;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL) {
		perror("wordfreq");
		exit(1);
	}
	return p;
}

/* add_word appends a new entry for word with a zero count. */
static struct entry *add_word(struct table *t, const char *word)
{
	if (t->len == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->items = xrealloc(t->items, t->cap * sizeof *t->items);
	}
	struct entry *e = &t->items[t->len++];
	e->word = strdup(word);
	e->count = 0;
	return e;
}

/* same reports whether two words are equal. */
static int same(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* find_word returns the entry for word, adding it when absent. */
__attribute__((noinline)) struct entry *find_word(struct table *t, const char *word)
{
	for (size_t i = 0; i < t->len; i++)
		if (same(t->items[i].word, word))
			return &t->items[i];
	return add_word(t, word);
}

/* count_words reads f and counts every word into t. */
void count_words(FILE *f, struct table *t)
{
	char buf[MAXWORD];
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF) {
		if (isalpha(c)) {
			if (n < MAXWORD - 1)
				buf[n++] = (char)tolower(c);
			continue;
		}
		if (n > 0) {
			buf[n] = '\0';
			find_word(t, buf)->count++;
			n = 0;
		}
	}
	if (n > 0) {
		buf[n] = '\0';
		find_word(t, buf)->count++;
	}
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->word, y->word);
}

/* sort_entries orders t by descending count, then by word. */
void sort_entries(struct table *t)
{
	qsort(t->items, t->len, sizeof *t->items, by_count);
}

#ifndef WORDFREQ_NO_MAIN
int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: wordfreq FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (f == NULL) {
		perror(argv[1]);
		return 1;
	}
	struct table t = {0};
	count_words(f, &t);
	fclose(f);
	sort_entries(&t);

	long total = 0;
	for (size_t i = 0; i < t.len; i++)
		total += t.items[i].count;
	for (size_t i = 0; i < t.len && i < TOP; i++)
		printf("%7ld %s\n", t.items[i].count, t.items[i].word);
	printf("%ld words, %zu distinct\n", total, t.len);
	return 0;
}
#endif
