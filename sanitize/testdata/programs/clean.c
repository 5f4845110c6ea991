/* Does nothing wrong. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int *p = malloc(4 * sizeof *p);
  for (int i = 0; i < 4; i++) p[i] = i;
  printf("%d\n", p[3]);
  free(p);
  return 0;
}
