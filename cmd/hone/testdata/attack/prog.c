/* The target of the attack suite: the same LCG walk REPS times, from a
   start the verdict's seed gives (argv[1]; 1 without it). */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#define REPS 4

static volatile unsigned long long steps = 3000000;
static volatile unsigned long long sink;
static unsigned long long start = 1;

__attribute__((noinline)) static unsigned long long walk(unsigned long long n) {
	unsigned long long x = start;
	for (unsigned long long i = 0; i < n; i++)
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 17);
	sink = x;
	return x;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "--selftest") == 0)
		return walk(3) == walk(3) ? 0 : 1;
	if (argc > 1)
		start = strtoull(argv[1], 0, 10) | 1;
	unsigned long long r = 0;
	for (int k = 0; k < REPS; k++)
		r = walk(steps);
	printf("%llu\n", r);
	return 0;
}
