#include <stdio.h>
#include <stdlib.h>

/* A list that appends by walking to its tail, so the walk is the hot loop.
 * push_back has two callers and an early exit, so GCC -O2 splits it
 * (partial inlining) and inlines it into append_value twice over: once at
 * the call, once into itself at its own signature line. Every sample then
 * has the signature line on the stack, and only the walk as the sampled
 * line. */
struct node {
	struct node *next;
	long value;
};

struct list {
	struct node *head;
};

static void link_after(struct node *tail, struct node *n)
{
	tail->next = n;
}

static int push_back(struct list *l, struct node *n) /* push_back's signature */
{
	struct node *tail = NULL;

	if (l == NULL || n == NULL)
		return 0;
	tail = l->head;
	if (tail == NULL) {
		l->head = n;
	} else {
		while (tail->next) /* the walk's test */
			tail = tail->next; /* the walk's step */
		link_after(tail, n);
	}
	return 1;
}

__attribute__((noinline)) void append_value(struct list *l, long v)
{
	struct node *n = calloc(1, sizeof *n);
	n->value = v;
	push_back(l, n);
}

__attribute__((noinline)) int append_copy(struct list *l, const struct node *src)
{
	struct node *n = malloc(sizeof *n);
	if (n == NULL)
		return 0;
	*n = *src;
	n->next = NULL;
	return push_back(l, n);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], 0, 10) : 30000, sum = 0;
	struct list l = {0};
	struct node extra = {0, 1};
	for (long i = 0; i < n; i++)
		append_value(&l, i);
	append_copy(&l, &extra);
	for (struct node *p = l.head; p; p = p->next)
		sum += p->value;
	printf("%ld\n", sum);
	return 0;
}
