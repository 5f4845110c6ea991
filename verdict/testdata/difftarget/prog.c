/* A sample for differential gates: reads a number and prints facts about
   it. It declares the steps it took (hone-work: N on stderr), which the
   test builds' work meter measures instead of the clock. */
#include <stdio.h>

static unsigned long long work;

static int bits(unsigned long n) {
	int c = 0;
	for (; n; n >>= 1)
		c += n & 1, work++;
	return c;
}

static int steps(unsigned long n) {
	int s = 0;
	while (n > 1) {
		n = n % 2 ? 3 * n + 1 : n / 2;
		s++;
		work++;
	}
	return s;
}

int main(void) {
	unsigned long n;
	if (scanf("%lu", &n) != 1) {
		fputs("no number on stdin\n", stderr);
		return 2;
	}
	printf("%lu has %d bits set and reaches 1 in %d steps\n", n, bits(n), steps(n));
	fprintf(stderr, "hone-work: %llu\n", work);
	return 0;
}
