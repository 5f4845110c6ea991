/* Loses its only pointer to an allocation. */
#include <stdlib.h>

void *keep;

static void *make(void) {
  return malloc(77);
}

int main(void) {
  keep = make();
  keep = 0;
  return 0;
}
