// Package m has two workloads of different sizes.
package m

// work counts the rounds folded, which the test binary declares as its
// work when it exits (TestMain).
var work uint64

// fold mixes rounds values into seed.
//
//go:noinline
func fold(seed uint64, rounds int) uint64 {
	work += uint64(rounds)
	x := seed
	for i := 0; i < rounds; i++ {
		x += uint64(i)
		x ^= x >> 31
		x *= 0x7fb5d329728ea185
		x ^= x >> 27
		x *= 0x81dadef4bc2dd44d
		x ^= x >> 33
	}
	return x
}

// Big folds 1000 rounds, twice, to be sure.
func Big(seed uint64) uint64 {
	a := fold(seed, 1000)
	if fold(seed, 1000) != a {
		panic("fold is not deterministic")
	}
	return a
}

// Small folds 100 rounds.
func Small(seed uint64) uint64 { return fold(seed, 100) }
