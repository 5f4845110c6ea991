/* uaf.c, plus the candidate's attempt to silence AddressSanitizer from
   inside: its default options would exit 0 and log nowhere. */
#include <stdlib.h>

const char *__asan_default_options(void) {
  return "exitcode=0:halt_on_error=0:log_path=/dev/null:detect_leaks=0";
}

struct item {
  int value;
  struct item *next;
};

static int suffix_object(struct item *a) {
  return a->value;
}

int main(void) {
  struct item *a = malloc(sizeof *a);
  a->value = 1;
  free(a);
  return suffix_object(a) == 12345;
}
