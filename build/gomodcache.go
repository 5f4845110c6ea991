package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A Go build needs its modules, and the jail cannot download them. They
// come from a module cache hone owns and fills itself (go mod download,
// outside the jail, into hone's state folder), never from the host user's
// GOMODCACHE: that holds whatever else the user ever built, which a gate
// could list into its log, and the ledger keeps and pushes gate logs. It is
// bound only into the jails of a Go target (one with a go.mod at or above
// its folder); every other target sees an empty folder there.
const modCacheName = "gomodcache"

// isGoTarget reports whether the checkout at src has a go.mod at or above
// the target's folder.
func isGoTarget(src, targetPath string) bool {
	_, err := findGoMod(src, targetPath)
	return !errors.Is(err, errNoGoMod) && err == nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// userModProxy is the GOPROXY hone's go mod download uses: the host user's
// module cache first, as a file proxy (go checks every module it copies
// against go.sum, so nothing unverified crosses), then the user's own
// proxies; so a machine offline can still fill hone's cache with what the
// user already has. "" leaves GOPROXY as it is.
var userModProxy = sync.OnceValue(func() string {
	goBin, err := lookGo()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := goCommand(ctx, goBin, "", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return ""
	}
	cache, proxy, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	dl := filepath.Join(strings.TrimSpace(cache), "cache", "download")
	if proxy = strings.TrimSpace(proxy); cache == "" || proxy == "" || !isDir(dl) {
		return ""
	}
	return "file://" + filepath.ToSlash(dl) + "," + proxy
})
