package fleet

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/hone-perf/hone/internal/e2e"
	"go.yaml.in/yaml/v4"
)

const deployDir = "../../scripts/deploy"

// The GitHub Actions workflow passes actionlint (the Go module, with the
// runner class declared as a self-hosted label) and runs hone runner until
// the queue stays empty.
func TestTheGitHubWorkflowPassesActionlint(t *testing.T) {
	path := filepath.Join(deployDir, "github-hone-runner.yml")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "actionlint.yaml")
	if err := os.WriteFile(cfg, []byte("self-hosted-runner:\n  labels: [hone-quiet]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{ConfigFile: cfg})
	if err != nil {
		t.Fatal(err)
	}
	problems, err := l.Lint("<stdin>", body, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s:%d:%d: %s [%s]", path, p.Line, p.Column, p.Message, p.Kind)
	}
	if !strings.Contains(string(body), "hone runner --class hone-quiet --idle ") {
		t.Errorf("the workflow does not run hone runner with its class until idle")
	}
}

// The GitLab CI job is YAML with one job that runs hone runner until the
// queue stays empty, on a runner tagged with its class, from schedules and
// triggers only.
func TestTheGitLabJobIsAJobThatRunsTheQueue(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(deployDir, "gitlab-hone-runner.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs map[string]struct {
		Tags   []string            `yaml:"tags"`
		Rules  []map[string]string `yaml:"rules"`
		Script []string            `yaml:"script"`
	}
	if err := yaml.Unmarshal(body, &jobs); err != nil {
		t.Fatal(err)
	}
	job, ok := jobs["hone-runner"]
	if !ok || len(jobs) != 1 {
		t.Fatalf("want one job hone-runner, got %v", jobs)
	}
	if len(job.Tags) != 1 || job.Tags[0] != "hone-quiet" || len(job.Rules) == 0 {
		t.Errorf("job tags %v rules %v", job.Tags, job.Rules)
	}
	if last := job.Script[len(job.Script)-1]; last != "hone runner --class hone-quiet --idle 1m" {
		t.Errorf("the job's last step is %q", last)
	}
}

// The systemd unit stops hone alone with SIGINT (KillMode=mixed: a release
// push in flight is hone's to finish, not killed under it), passes
// systemd-analyze verify with the hone under test as its ExecStart, and
// keeps the exposure systemd-analyze security rates it at, 3.2 when
// written, under 4 ("OK"); the remote's gc timer verifies too.
func TestTheSystemdUnitVerifies(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(deployDir, "hone-runner.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KillSignal=SIGINT", "KillMode=mixed", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes"} {
		if !strings.Contains(string(body), "\n"+want+"\n") {
			t.Errorf("the unit has no %s", want)
		}
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("needs systemd-analyze")
	}
	unit := filepath.Join(t.TempDir(), "hone-runner.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(string(body), "/usr/local/bin/hone", e2e.Hone(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("systemd-analyze", "verify", unit).CombinedOutput(); err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The remote's gc timer and its service, from a directory of their
	// own: verify finds a timer's unit beside it.
	gc := t.TempDir()
	for _, name := range []string{"hone-remote-gc.service", "hone-remote-gc.timer"} {
		b, err := os.ReadFile(filepath.Join(deployDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gc, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("systemd-analyze", "verify", filepath.Join(gc, "hone-remote-gc.timer"), filepath.Join(gc, "hone-remote-gc.service")).CombinedOutput(); err != nil {
		t.Fatalf("systemd-analyze verify the gc timer: %v\n%s", err, out)
	}
	out, err := exec.Command("systemd-analyze", "security", "--offline=yes", unit).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		// systemd before 250 has no --offline: nothing to rate here.
		t.Skipf("systemd-analyze security --offline: %v\n%s", err, out)
	}
	if score, _ := strconv.ParseFloat(string(m[1]), 64); score >= 4 {
		t.Errorf("systemd-analyze security rates the unit %s, want under 4:\n%s", m[1], out)
	}
}

// Neither CI recipe serialises the fleet: no concurrency group, no
// resource group (claims keep runners apart; a group runs one job at a
// time and cancels or queues the rest), and no repository secret or CI
// variable holding the key by default.
func TestTheCIRecipesLetRunnersJudgeSideBySide(t *testing.T) {
	for _, name := range []string{"github-hone-runner.yml", "gitlab-hone-runner.yml"} {
		body, err := os.ReadFile(filepath.Join(deployDir, name))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			for k, sub := range m {
				if k == "concurrency" || k == "resource_group" {
					t.Errorf("%s: %s%s serialises the runners' jobs", name, path, k)
				}
				walk(path+k+".", sub)
			}
		}
		walk("", doc)
		if strings.Contains(string(body), "--once") && !strings.Contains(string(body), "--idle") {
			t.Errorf("%s: --once without --idle judges one proposal per job", name)
		}
		for _, line := range strings.Split(string(body), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") && strings.Contains(line, "secrets.HONE_SIGNING_KEY") {
				t.Errorf("%s: the key comes from a secret outside the machine: %s", name, line)
			}
		}
	}
}
