/* A sample for sanitizer gates: a list whose last item is dropped before
   the rest is summed. It declares the items it visited (hone-work: N on
   stderr), which the test builds' work meter measures instead of the
   clock. */
#include <stdio.h>
#include <stdlib.h>

struct item {
	struct item *next;
	struct item *prev;
	long value;
};

static unsigned long long work;

static struct item *push(struct item *head, long v) {
	struct item *it = calloc(1, sizeof *it);
	work++;
	it->value = v;
	it->next = head;
	if (head)
		head->prev = it;
	return it;
}

/* drop_last unlinks and frees the last item, then sums the others. */
static long drop_last(struct item *head) {
	struct item *last = head;
	while (last->next) {
		last = last->next;
		work++;
	}
	if (last->prev)
		last->prev->next = NULL;
	free(last);
	long sum = 0;
	for (struct item *it = head == last ? NULL : head; it; it = it->next) {
		sum += it->value;
		work++;
	}
	return sum;
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 10;
	struct item *head = NULL;
	for (long i = 1; i <= n; i++)
		head = push(head, i);
	printf("%ld\n", drop_last(head));
	fprintf(stderr, "hone-work: %llu\n", work);
	return 0;
}
