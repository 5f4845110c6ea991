/* A sample for differential gates: reads a number and prints facts about
   it. */
#include <stdio.h>

static int bits(unsigned long n) {
	int c = 0;
	for (; n; n >>= 1)
		c += n & 1;
	return c;
}

static int steps(unsigned long n) {
	int s = 0;
	while (n > 1) {
		n = n % 2 ? 3 * n + 1 : n / 2;
		s++;
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
	return 0;
}
