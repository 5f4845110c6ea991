/* A small CPU-bound sample target: it runs the same LCG walk REPS times,
   from a start the verdict's seed gives (the last argument), and prints the
   result, so patches can change its speed without changing its output. It
   declares the steps it walked (hone-work: N on stderr), which the test
   builds' work meter measures instead of the clock. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REPS 4

static volatile unsigned long long steps = 2500000;
static volatile unsigned long long sink; /* keeps every walk from being elided */
static unsigned long long start = 1;
static unsigned long long work;

__attribute__((noinline)) static unsigned long long walk(unsigned long long n) {
	unsigned long long x = start;
	for (unsigned long long i = 0; i < n; i++)
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 17);
	sink = x;
	work += n;
	return x;
}

static int selftest(void) {
	return walk(3) == walk(3) ? 0 : 1;
}

static int dial(void) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
	inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		fprintf(stderr, "connect: %s\n", strerror(errno));
		return 1;
	}
	puts("connected");
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "--selftest") == 0)
		return selftest();
	if (argc > 1 && strcmp(argv[1], "--dial") == 0)
		return dial();
	if (argc > 1 && strcmp(argv[1], "--small") == 0)
		steps = 100000;
	if (argc > 1)
		start = strtoull(argv[argc - 1], 0, 10) | 1;
	unsigned long long r = 0;
	for (int k = 0; k < REPS; k++)
		r = walk(steps);
	printf("%llu\n", r);
	fprintf(stderr, "hone-work: %llu\n", work);
	return 0;
}
