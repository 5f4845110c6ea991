package main

import (
	"runtime/debug"
	"testing"
)

// A version set with -ldflags wins; otherwise the go command's stamp is used
// when it names a version, and "dev" stays when it does not.
func TestStampedVersion(t *testing.T) {
	stamped := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	for _, c := range []struct {
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{"v1.2.0", stamped("v9.9.9"), "v1.2.0"},
		{"dev", stamped("v1.3.0"), "v1.3.0"},
		{"dev", stamped("v0.0.0-20261129202715-c508b8381dce+dirty"), "v0.0.0-20261129202715-c508b8381dce+dirty"},
		{"dev", stamped("(devel)"), "dev"},
		{"dev", stamped(""), "dev"},
		{"dev", nil, "dev"},
	} {
		if got := stampedVersion(c.ldflags, c.info); got != c.want {
			t.Errorf("stampedVersion(%q, %v) = %q, want %q", c.ldflags, c.info, got, c.want)
		}
	}
}
