package fleet

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

// job is the shell part of one CI recipe's job, as its CI would run it in
// a checkout of the fleet's remote.
type job struct {
	name    string
	dir     string   // the job's checkout
	env     []string // what the CI and the machine put in its environment
	steps   []string // shell scripts, each run as the CI runs a step
	cleanup []string // run whatever the steps did (after_script, if: always())
	jobDir  string   // the per-job directory the recipe makes
	token   string   // the push token the CI gives the job
	out     bytes.Buffer
}

// A recipe's idle time is a minute; the test's queue is known, so its
// runners stop after a few seconds without work.
func quick(script string) string {
	return strings.ReplaceAll(script, "--idle 1m", "--idle 5s --poll 500ms")
}

// gitlabJob reads the GitLab recipe's job: its variables (expanded as
// GitLab does, from the CI's own), script and after_script.
func gitlabJob(t *testing.T, f *fixture, key string) *job {
	body, err := os.ReadFile(filepath.Join(deployDir, "gitlab-hone-runner.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs map[string]struct {
		Variables   map[string]string `yaml:"variables"`
		Script      []string          `yaml:"script"`
		AfterScript []string          `yaml:"after_script"`
	}
	if err := yaml.Unmarshal(body, &jobs); err != nil {
		t.Fatal(err)
	}
	y := jobs["hone-runner"]
	keyBody, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	j := &job{name: "gitlab", dir: f.clone("gitlab-job", ""), token: "glpat-secret-push-token"}
	ci := map[string]string{
		"CI_JOB_ID":       fmt.Sprintf("test%d-%d", os.Getpid(), time.Now().UnixNano()),
		"CI_SERVER_URL":   "file://" + f.dir,
		"CI_PROJECT_PATH": "server",
		// The protected, masked variable that replaces a key on the machine.
		"HONE_SIGNING_KEY_B64": base64.StdEncoding.EncodeToString(keyBody),
		"HONE_PUSH_TOKEN":      j.token,
	}
	for k, v := range ci {
		j.env = append(j.env, k+"="+v)
	}
	for k, v := range y.Variables {
		v = os.Expand(v, func(name string) string { return ci[name] })
		j.env = append(j.env, k+"="+v)
		if k == "HONE_JOB_DIR" {
			j.jobDir = v
		}
	}
	// GitLab runs a job's script lines in one shell, stopping at the
	// first that fails; after_script in a shell of its own.
	j.steps = []string{"set -eo pipefail\n" + quick(strings.Join(y.Script, "\n"))}
	j.cleanup = []string{strings.Join(y.AfterScript, "\n")}
	return j
}

var expression = regexp.MustCompile(`\$\{\{\s*([a-z_.]+)\s*\}\}`)

// githubJob reads the GitHub workflow's job judge: its env (expressions
// evaluated as Actions would), the run steps, and the steps that run
// always.
func githubJob(t *testing.T, f *fixture, key string) *job {
	body, err := os.ReadFile(filepath.Join(deployDir, "github-hone-runner.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		Uses string            `yaml:"uses"`
		If   string            `yaml:"if"`
		Env  map[string]string `yaml:"env"`
		Run  string            `yaml:"run"`
	}
	var wf struct {
		Jobs map[string]struct {
			Env   map[string]string `yaml:"env"`
			Steps []step            `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(body, &wf); err != nil {
		t.Fatal(err)
	}
	keyBody, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	j := &job{name: "github", dir: f.clone("github-job", ""), token: "ghs_secret_push_token"}
	values := map[string]string{
		"runner.temp": t.TempDir(), "github.run_id": "4242", "github.run_attempt": "1", "github.token": j.token,
	}
	eval := func(s string) string {
		return expression.ReplaceAllStringFunc(s, func(m string) string {
			v, ok := values[expression.FindStringSubmatch(m)[1]]
			if !ok {
				t.Fatalf("the workflow uses %s, which this test does not know", m)
			}
			return v
		})
	}
	judge := wf.Jobs["judge"]
	j.env = []string{"GITHUB_SERVER_URL=https://github.com",
		// The protected environment's secret that replaces a key on the
		// machine.
		"HONE_SIGNING_KEY=" + strings.TrimSpace(string(keyBody))}
	for k, v := range judge.Env {
		j.env = append(j.env, k+"="+eval(v))
	}
	for _, s := range judge.Steps {
		if s.Uses != "" {
			continue // the checkout: the job's clone
		}
		var env []string
		for k, v := range s.Env {
			env = append(env, k+"="+eval(v))
			if k == "HONE_JOB_DIR" {
				j.jobDir = eval(v)
			}
		}
		// Actions runs a step's run with bash -e; each step is a shell of
		// its own, with the job's and the step's env.
		script := "export " + strings.Join(quoteAll(env), " ") + "\n" + quick(eval(s.Run))
		if len(env) == 0 {
			script = quick(eval(s.Run))
		}
		if s.If == "always()" {
			j.cleanup = append(j.cleanup, script)
		} else {
			j.steps = append(j.steps, script)
		}
	}
	return j
}

func quoteAll(kvs []string) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = "'" + strings.ReplaceAll(kv, "'", `'\''`) + "'"
	}
	return out
}

// run runs the scripts in the job's checkout with hone on PATH.
func (j *job) run(f *fixture, scripts []string) error {
	for _, s := range scripts {
		cmd := exec.Command("bash", "-e", "-c", s)
		cmd.Dir = j.dir
		cmd.Env = append(slices.Clip(f.env), j.env...)
		cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(f.hone)+string(os.PathListSeparator)+os.Getenv("PATH"))
		cmd.Stdout, cmd.Stderr = &j.out, &j.out
		if err := cmd.Run(); err != nil {
			return err
		}
	}
	return nil
}

// The GitHub workflow's and the GitLab job's shell parts, run side by side
// in checkouts of a bare remote with the hook, each with its own key given
// the way the recipe takes one from outside the machine: together they
// judge every queued proposal once; the key's copy is the job's alone while
// it runs (a directory of mode 700, a file of 600) and is gone after the
// cleanup; the push token is nowhere in the checkout's git config; and the
// remote's gc unit then packs the remote's refs and leaves it whole.
func TestTheCIJobScriptsJudgeAgainstABareRemote(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	ids := []string{
		f.publish(agent, "first", honestPatch),
		f.publish(agent, "second", patch(`int main(void) { /* second */ puts("1"); return 0; }`)),
	}
	jobs := []*job{githubJob(t, f, f.keys[0]), gitlabJob(t, f, f.keys[1])}
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		if j.jobDir == "" {
			t.Fatalf("the %s recipe names no per-job directory (HONE_JOB_DIR)", j.name)
		}
		t.Cleanup(func() { os.RemoveAll(j.jobDir) })
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = j.run(f, j.steps) }()
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			t.Fatalf("the %s job's steps: %v\n%s", j.name, errs[i], j.out.String())
		}
		for path, want := range map[string]os.FileMode{j.jobDir: 0o700, filepath.Join(j.jobDir, "signing"): 0o600} {
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != want {
				t.Errorf("the %s job's %s: %v, want mode %o", j.name, path, err, want)
			}
		}
		if err := j.run(f, j.cleanup); err != nil {
			t.Errorf("the %s job's cleanup: %v\n%s", j.name, err, j.out.String())
		}
		if _, err := os.Stat(j.jobDir); !os.IsNotExist(err) {
			t.Errorf("the %s job left %s behind (%v)", j.name, j.jobDir, err)
		}
		cfg := f.must(j.dir, "git", "config", "--list", "--show-origin")
		if strings.Contains(cfg, j.token) || strings.Contains(cfg, base64.StdEncoding.EncodeToString([]byte("x-access-token:"+j.token))) {
			t.Errorf("the %s job left its push token in git config:\n%s", j.name, cfg)
		}
	}
	for i, id := range ids {
		f.judgedOnce(t, fmt.Sprintf("fresh%d", i), id)
	}
	gcRemote(t, f)
}

// gcRemote runs the remote's gc unit's commands on the fleet's remote, as
// its timer does: the remote stays whole, its refs packed.
func gcRemote(t *testing.T, f *fixture) {
	body, err := os.ReadFile(filepath.Join(deployDir, "hone-remote-gc.service"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		cmd, ok := strings.CutPrefix(line, "ExecStart=")
		if !ok {
			continue
		}
		n++
		args := strings.Fields(strings.ReplaceAll(cmd, "${HONE_REMOTE}", f.server))
		f.must(f.dir, append([]string{"git"}, args[1:]...)...)
	}
	if n == 0 {
		t.Fatal("the gc unit runs nothing")
	}
	f.must(f.server, "git", "fsck", "--no-progress")
	packed, err := os.ReadFile(filepath.Join(f.server, "packed-refs"))
	if err != nil || !strings.Contains(string(packed), "refs/hone/runners/") {
		t.Errorf("after gc the remote's packed refs are %q (%v), want its runners' records among them", packed, err)
	}
	if loose := f.serverRefs("refs/hone/"); len(loose) == 0 {
		t.Errorf("the remote lost its refs/hone/ refs in gc")
	}
}
