package gitpath

import "testing"

func TestIsDotGit(t *testing.T) {
	for _, tt := range []struct {
		seg  string
		want bool
	}{
		{".git", true},
		{".GIT", true},
		{".git.", true},
		{".git ", true},
		{"git~1", true},
		{"GIT~1", true},
		{".git::$INDEX_ALLOCATION", true},
		{".g\u200cit", true},
		{"\ufeff.git", true},
		{".gitignore", false},
		{"git", false},
		{"src", false},
		{"git~2", false},
	} {
		if got := IsDotGit(tt.seg); got != tt.want {
			t.Errorf("IsDotGit(%q) = %v, want %v", tt.seg, got, tt.want)
		}
	}
}
