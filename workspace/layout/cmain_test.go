package layout

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOnlyAnUnconditionalMainMakesAProgram(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"a program", "#include <stdio.h>\nint main(int argc, char **argv) { return 0; }\n", true},
		{"main on its own line", "int\nmain(void)\n{\n}\n", true},
		{"a static main", "static int main(void) { return 0; }\n", true},
		{"main under #ifdef (zlib's crc32.c)", "#ifdef MAKECRCH\nint main(void) { return 0; }\n#endif\nunsigned long crc32(void) { return 0; }\n", false},
		{"main under #if, with an #else", "#if 0\nint main() {}\n#else\nint f(void);\n#endif\n", false},
		{"main after a closed conditional", "#ifdef X\nint f(void);\n#endif\nint main(void) { return 0; }\n", true},
		{"main in a block comment (zlib's inflate.c)", "/*\n   int main()\n   {\n   }\n */\nint inflate(void) { return 0; }\n", false},
		{"main in a line comment", "// main() is elsewhere\nint f(void) { return 0; }\n", false},
		{"main in a string", "const char *s = \"\\nmain(\";\n", false},
		{"a call of a function named like main", "int domain(void);\nint x = domain();\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.c")
			if err := os.WriteFile(p, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := definesMain(p); got != c.want {
				t.Errorf("definesMain = %v, want %v", got, c.want)
			}
		})
	}
}
