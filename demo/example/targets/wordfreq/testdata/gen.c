/*
 * gen writes the example's input for a seed: 60000 words of a made-up
 * vocabulary in sentences, half of them from 40 common words. The gates and
 * the bench run it with the verdict's seed, so no patch can know the text in
 * advance; for seed 24301 it writes testdata/corpus.txt.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
				  "ze", "pa", "qu", "dr", "en", "or", "is", "ul"};
static unsigned long long state;

/* next is splitmix64, reduced to [0, n). */
static int next(int n)
{
	state += 0x9e3779b97f4a7c15ULL;
	unsigned long long z = state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (int)(z % (unsigned long long)n);
}

/* spell writes word i of the vocabulary: i in base 16, a syllable a digit. */
static void spell(char *w, int i)
{
	w[0] = '\0';
	do {
		strcat(w, syllables[i % 16]);
		i /= 16;
	} while (i != 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen SEED\n");
		return 2;
	}
	state = strtoull(argv[1], NULL, 10);
	char w[64];
	for (int i = 0; i < 60000; i++) {
		if (next(2) == 0)
			spell(w, next(40));
		else
			spell(w, next(3000));
		if (i % 12 == 0) {
			if (i > 0)
				fputs(".\n", stdout);
			w[0] = (char)toupper((unsigned char)w[0]);
		} else {
			putchar(' ');
		}
		fputs(w, stdout);
	}
	fputs(".\n", stdout);
	return 0;
}
