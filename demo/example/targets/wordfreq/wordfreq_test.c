/* Unit test for wordfreq: counts, case folding, ordering and table growth. */
#define WORDFREQ_NO_MAIN
#include "wordfreq.c"

static int failures;

static void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "FAIL: %s\n", what);
		failures++;
	}
}

static struct table count_string(const char *text)
{
	struct table t = {0};
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	count_words(f, &t);
	fclose(f);
	return t;
}

int main(void)
{
	struct table t = count_string("The cat saw the dog; THE dog ran.");
	sort_entries(&t);
	expect(t.len == 5, "five distinct words");
	expect(strcmp(t.items[0].word, "the") == 0 && t.items[0].count == 3, "'the' first with 3");
	expect(strcmp(t.items[1].word, "dog") == 0 && t.items[1].count == 2, "'dog' second with 2");
	expect(strcmp(t.items[2].word, "cat") == 0, "ties sorted alphabetically");

	t = count_string("");
	expect(t.len == 0, "empty input has no words");

	/* Enough distinct words to force the table to grow several times. */
	char text[20000], *p = text;
	for (int i = 0; i < 2000; i++) {
		p += sprintf(p, "w%c%c%c ", 'a' + i % 26, 'a' + i / 26 % 26, 'a' + i / 676);
	}
	t = count_string(text);
	expect(t.len == 2000, "2000 distinct words survive growth");
	expect(find_word(&t, "wabc")->count == 1, "lookup after growth finds the word");
	expect(t.len == 2000, "a lookup of a known word adds nothing");

	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
