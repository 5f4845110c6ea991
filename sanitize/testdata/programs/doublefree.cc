// Frees a vector's buffer twice through a C++ method.
#include <cstdlib>
#include <vector>

struct Buffer {
  std::vector<int> data;
  int *raw;
  void release(int times) {
    for (int i = 0; i < times; i++) std::free(raw);
  }
};

int main() {
  Buffer b;
  b.raw = static_cast<int *>(std::malloc(16));
  b.release(2);
  return 0;
}
