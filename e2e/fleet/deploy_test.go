package fleet

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/hone-perf/hone/internal/e2e"
	"go.yaml.in/yaml/v4"
)

const deployDir = "../../scripts/deploy"

// The GitHub Actions workflow passes actionlint (the Go module, with the
// runner class declared as a self-hosted label) and runs hone runner once.
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
	if !strings.Contains(string(body), "hone runner --once --class hone-quiet") {
		t.Errorf("the workflow does not run hone runner --once with its class")
	}
}

// The GitLab CI job is YAML with one job that runs hone runner once on a
// runner tagged with its class, from schedules and triggers only.
func TestTheGitLabJobIsAJobThatRunsOneRound(t *testing.T) {
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
	if last := job.Script[len(job.Script)-1]; last != "hone runner --once --class hone-quiet --idle 1m" {
		t.Errorf("the job's last step is %q", last)
	}
}

// The systemd unit passes systemd-analyze verify with the hone under test
// as its ExecStart.
func TestTheSystemdUnitVerifies(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("needs systemd-analyze")
	}
	body, err := os.ReadFile(filepath.Join(deployDir, "hone-runner.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "hone-runner.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(string(body), "/usr/local/bin/hone", e2e.Hone(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("systemd-analyze", "verify", unit).CombinedOutput(); err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
