package worktree

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"feat", true},
		{"team/fix-1.2_b", true},
		{"A-z_0.9", true},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("a", MaxNameLen+1), false},
		{"", false},
		{".", false},
		{"..", false},
		{"a/../b", false},
		{"a/./b", false},
		{".hidden", false},
		{"a//b", false},
		{"/abs", false},
		{"trailing/", false},
		{"a..b", false},
		{"x.lock", false},
		{"has space", false},
		{"semi;colon", false},
		{"ünï", false},
		{`back\slash`, false},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && errs.CodeOf(err) != errs.Usage {
			t.Errorf("ValidateName(%q): code %v, want usage", tt.name, errs.CodeOf(err))
		}
	}
}

func TestRandomNameIsValidAndAvoidsTakenNames(t *testing.T) {
	re := regexp.MustCompile(`^[a-z]+-[a-z]+-[0-9]{4}$`)
	seen := map[string]bool{}
	for range 50 {
		n, err := randomName(func(n string) bool { return seen[n] })
		if err != nil {
			t.Fatal(err)
		}
		if !re.MatchString(n) || ValidateName(n) != nil {
			t.Fatalf("random name %q is not adjective-noun-NNNN or not valid", n)
		}
		if seen[n] {
			t.Fatalf("random name %q was already taken", n)
		}
		seen[n] = true
	}
	if _, err := randomName(func(string) bool { return true }); err == nil {
		t.Fatal("randomName with every name taken: want an error")
	}
}

func TestSessionName(t *testing.T) {
	for _, tt := range []struct {
		env, want string
		ok        bool
	}{
		{"", "default", true},
		{"agent-2", "agent-2", true},
		{"a/b", "", false},
		{"..", "", false},
		{"has space", "", false},
	} {
		t.Setenv("HONE_SESSION", tt.env)
		got, err := SessionName()
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("HONE_SESSION=%q: got %q, %v; want %q ok=%v", tt.env, got, err, tt.want, tt.ok)
		}
	}
}
