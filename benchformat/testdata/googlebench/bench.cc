// A tiny Google Benchmark suite for benchformat's tests. HONE_SEED picks
// the input; BENCH_FAIL makes one benchmark report an error. ITERATIONS,
// when set, fixes the iteration count in the code, for library versions
// whose --benchmark_min_time does not take the Nx form.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

static uint64_t work(uint64_t x, int n) {
  for (int i = 0; i < n; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
  }
  return x;
}

static uint64_t seed() {
  const char *s = std::getenv("HONE_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 0;
}

static void BM_Work(benchmark::State &state) {
  uint64_t sink = 0;
  for (auto _ : state) {
    sink += work(seed() + sink, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(sink);
  }
  state.counters["checksum"] = static_cast<double>(work(seed(), static_cast<int>(state.range(0))) % 1000000007ULL);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

static void BM_Misbehave(benchmark::State &state) {
  if (std::getenv("BENCH_FAIL")) {
    state.SkipWithError("boom: the answer is wrong");
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(work(1, 10));
  }
}

static void fixed(benchmark::internal::Benchmark *b) {
  if (const char *n = std::getenv("ITERATIONS")) b->Iterations(std::atoll(n));
}

BENCHMARK(BM_Work)->Arg(1000)->Arg(4000)->Apply(fixed);
BENCHMARK(BM_Misbehave)->Apply(fixed);

BENCHMARK_MAIN();
