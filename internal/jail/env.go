package jail

import (
	"strings"
)

// Where the jail keeps the command's home and scratch, and the system PATH
// every command starts from.
const (
	jailHome   = "/home/hone"
	jailTmp    = "/tmp"
	systemPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
)

// Environment is the environment a command with these settings runs with:
// PATH (path, then the system PATH), HOME, TMPDIR, a C locale, USER, PWD
// (which /bin/sh would add by itself, so that a command sees the same
// environment with or without a shell), then extra, whose keys replace
// earlier ones in place. Nothing of hone's own environment is in it, and it
// is the same for every run with the same arguments: a gate cannot tell a
// bench run from its environment.
func Environment(dir string, path, extra []string) []string {
	return environment(dir, path, extra, jailHome, jailTmp)
}

func environment(dir string, path, extra []string, home, tmp string) []string {
	base := []string{
		"PATH=" + strings.Join(append(append([]string{}, path...), systemPath), ":"),
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"LANG=C",
		"LC_ALL=C",
		"USER=hone",
		"PWD=" + dir,
	}
	at := map[string]int{}
	for i, kv := range base {
		at[envKey(kv)] = i
	}
	for _, kv := range extra {
		k := envKey(kv)
		if i, ok := at[k]; ok {
			base[i] = kv
			continue
		}
		at[k] = len(base)
		base = append(base, kv)
	}
	return base
}

func envKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// lookupIn looks a variable up in an environment list.
func lookupIn(env []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, _ := strings.Cut(env[i], "="); k == name {
				return v, true
			}
		}
		return "", false
	}
}
