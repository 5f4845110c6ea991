package git

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// isolatedEnv leaves out the system's and the user's configuration and
// attributes, and any configuration hone's own environment passes down.
var isolatedEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
	"GIT_CONFIG_PARAMETERS=", "HOME=/nonexistent",
}

// fixed are the settings every isolated call overrides: no hooks, no
// file-system monitor (a program git starts), no attributes file beyond the
// repository's own.
var fixed = [][2]string{
	{"core.hooksPath", "/dev/null"},
	{"core.fsmonitor", "false"},
	{"core.attributesFile", "/dev/null"},
	{"diff.external", ""},
}

// isolation returns the environment that neutralises the repository's own
// configuration for one call in dir. Anyone with a shell in the repository
// can write .git/config, and git runs what it names: a filter driver's
// clean, smudge or process command, a diff driver's textconv or command, a
// merge driver, a hook, an fsmonitor. Those settings cannot be removed from
// the command line, only overridden, and only by name, so the configuration
// is listed first and every driver found in it is emptied (an empty command
// is no command) on top of the fixed settings. Overrides travel in
// GIT_CONFIG_COUNT variables, which outrank every configuration file.
func isolation(ctx context.Context, dir string) ([]string, error) {
	list := exec.CommandContext(ctx, "git", "config", "--list", "--name-only", "-z")
	list.Dir = dir
	list.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), isolatedEnv...)
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err := list.Output()
	// Outside a repository, or with no configuration at all, git config
	// exits 1 and lists nothing: there is nothing to neutralise.
	if err != nil && (len(out) > 0 || exitStatus(err) != 1) {
		return nil, &Error{Args: []string{"config", "--list"}, Stderr: stderr.String(), Err: err, ExitCode: exitStatus(err)}
	}
	overrides := append([][2]string{}, fixed...)
	seen := map[string]bool{}
	for _, key := range strings.Split(string(out), "\x00") {
		for _, o := range driverOverrides(key) {
			if !seen[o[0]] {
				seen[o[0]] = true
				overrides = append(overrides, o)
			}
		}
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(overrides))}
	for i, o := range overrides {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+o[0], "GIT_CONFIG_VALUE_"+n+"="+o[1])
	}
	return env, nil
}

// driverOverrides returns the settings that switch off the driver a
// configuration key belongs to, if it names one. git prints section and
// key in lower case and the driver's name (the subsection) as written.
func driverOverrides(key string) [][2]string {
	first, rest, ok := strings.Cut(key, ".")
	if !ok {
		return nil
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return nil
	}
	name, item := rest[:i], rest[i+1:]
	switch {
	case first == "filter" && (item == "clean" || item == "smudge" || item == "process"):
		// A required filter without a command fails the call instead of
		// running nothing.
		p := "filter." + name + "."
		return [][2]string{{p + "clean", ""}, {p + "smudge", ""}, {p + "process", ""}, {p + "required", "false"}}
	case first == "diff" && (item == "textconv" || item == "command"):
		return [][2]string{{"diff." + name + "." + item, ""}}
	case first == "merge" && item == "driver":
		return [][2]string{{"merge." + name + ".driver", ""}}
	}
	return nil
}

func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
