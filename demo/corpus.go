package demo

import (
	"bytes"
	"strings"
)

// Corpus sizes: tuned so the example's baseline counts the corpus in roughly
// 60-100 ms on one core, long enough to profile, short enough for a two-minute demo.
const (
	corpusWords = 60000
	corpusVocab = 3000
)

var syllables = []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "dr", "en", "or", "is", "ul"}

// vocabWord spells word i of the vocabulary: i written in base len(syllables),
// one syllable per digit, so distinct indices give distinct words.
func vocabWord(i int) string {
	var b strings.Builder
	for {
		b.WriteString(syllables[i%len(syllables)])
		i /= len(syllables)
		if i == 0 {
			return b.String()
		}
	}
}

// Corpus returns the example's golden input. It is generated rather than
// embedded to keep the binary small, from a fixed-seed generator written
// here so it never changes with the Go version: every run of the demo, on
// every machine, measures the same text.
func Corpus() []byte {
	var buf bytes.Buffer
	state := uint64(0x5eed)
	next := func(n int) int { // splitmix64
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return int(z % uint64(n))
	}
	for w := 0; w < corpusWords; w++ {
		// Half the words come from a small common set, half from the whole
		// vocabulary: the rare ones are what makes a linear scan expensive.
		var word string
		if next(2) == 0 {
			word = vocabWord(next(40))
		} else {
			word = vocabWord(next(corpusVocab))
		}
		if w%12 == 0 {
			if w > 0 {
				buf.WriteString(".\n")
			}
			word = strings.ToUpper(word[:1]) + word[1:]
		} else {
			buf.WriteByte(' ')
		}
		buf.WriteString(word)
	}
	buf.WriteString(".\n")
	return buf.Bytes()
}
