/* The memory suite's target: REPS walks over an input made from the seed
   the verdict draws (argv[1]), each giving the same result, so an honest
   patch can do less work without changing the output. A walk costs a few
   milliseconds, so that the shell or thread a helper test's patch starts
   beside the honest cut cannot hide the cut in a noisy bench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 4
#define N 4096

static volatile unsigned long long steps = 6000000;
/* The work this process did, in walk steps, declared on stderr for the
   test builds' work meter (hone-work: N). */
static unsigned long long work;
static volatile unsigned long long sink; /* keeps every walk from being elided */
static unsigned long long data[N];

__attribute__((noinline)) static unsigned long long walk(unsigned long long n) {
	unsigned long long x = 1;
	for (unsigned long long i = 0; i < n; i++)
		x = (x * 6364136223846793005ULL + data[i & (N - 1)]) ^ (x >> 17);
	work += n;
	sink = x;
	return x;
}

int main(int argc, char **argv) {
	const unsigned long long input = argc > 1 ? strtoull(argv[1], 0, 10) : 0;
	unsigned long long seed = input;
	for (int i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		data[i] = seed >> 11;
	}
	unsigned long long r = 0;
	for (int k = 0; k < REPS; k++)
		r = walk(steps);
	printf("%llu\n", r);
	fprintf(stderr, "hone-work: %llu\n", work);
	return 0;
}
