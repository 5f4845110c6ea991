package realinit

import (
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// A project shaped like zlib, whose two surprises a first `hone init` met:
// a CMake configure that renames a tracked header when building out of
// the tree, and core sources with a main under #ifdef or in a comment.
// init must write a hone.toml whose profile and first verdict work
// without edits, with every core source patchable.
func TestInitOnAZlibShapedProjectWorksFirstTime(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	copyFixture(t, "testdata/zlike", repo)
	w := initProject(t, repo, "cmake", "make")
	w.tomlHas(`"crc32.c"`, `"inflate.c"`, "$HONE_OUT/src")
	w.commitInit()
	w.hotspotIn("zlike", "crc32.c", "crc32")

	// The table-driven CRC, as zlib has it: several times faster.
	v, summary := w.judge("zlike", "crc32", "crc32.c", `unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len) {
    hone_work += 8 * len;
    crc = ~crc & 0xffffffffUL;
    while (len--) {
        crc ^= *buf++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320UL : crc >> 1;
    }`, `static unsigned long table[256];
unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len) {
    if (!table[1])
        for (unsigned long n = 0; n < 256; n++) {
            hone_work += 8;
            unsigned long c = n;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? (c >> 1) ^ 0xedb88320UL : c >> 1;
            table[n] = c;
        }
    hone_work += len;
    crc = ~crc & 0xffffffffUL;
    while (len--)
        crc = table[(crc ^ *buf++) & 0xff] ^ (crc >> 8);`)
	if v != "accepted" {
		t.Errorf("the table-driven CRC was judged %s: %s", v, summary)
	}
}
