package repo

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

// hone moves refs by writing their files, not through git, so it also writes
// the reflog entries git would have written: a reflog is one of the records
// `hone ledger verify` checks the ledger branch against, and a person
// reading `git reflog` should see hone's moves beside everyone else's.

// reflogPolicy is what core.logAllRefUpdates and core.bare say about which
// refs get a reflog created; a ref whose reflog already exists always gets
// its entry, as in git.
type reflogPolicy struct {
	all, normal bool
	ident       string // "Name <email>" of the committer, as git would write it
}

// logsRef reports whether git would log an update of ref: git's
// should_autocreate_reflog.
func (p reflogPolicy) logsRef(ref string) bool {
	if p.all {
		return true
	}
	return p.normal && (strings.HasPrefix(ref, "refs/heads/") || strings.HasPrefix(ref, "refs/remotes/") ||
		strings.HasPrefix(ref, "refs/notes/") || ref == "HEAD")
}

// lazyPolicy reads the repository's config once for a Refs and the copies
// WithReason makes of it.
type lazyPolicy struct {
	once sync.Once
	p    reflogPolicy
}

func (s *Refs) policy() reflogPolicy {
	if s.pol == nil {
		return readReflogPolicy(s.commonDir, os.Getenv)
	}
	s.pol.once.Do(func() { s.pol.p = readReflogPolicy(s.commonDir, os.Getenv) })
	return s.pol.p
}

func readReflogPolicy(commonDir string, env func(string) string) reflogPolicy {
	local := config.NewConfig()
	if b, err := os.ReadFile(filepath.Join(commonDir, "config")); err == nil {
		if c, err := config.ReadConfig(strings.NewReader(string(b))); err == nil {
			local = c
		}
	}
	p := reflogPolicy{normal: !local.Core.IsBare}
	switch v := strings.ToLower(local.Raw.Section("core").Option("logallrefupdates")); v {
	case "always":
		p.all = true
	case "true", "yes", "on", "1":
		p.normal = true
	case "false", "no", "off", "0":
		p.normal = false
	}
	name, email := env("GIT_COMMITTER_NAME"), env("GIT_COMMITTER_EMAIL")
	for _, c := range []*config.Config{local, globalConfig()} {
		if c == nil {
			continue
		}
		if name == "" {
			name = c.Raw.Section("user").Option("name")
		}
		if email == "" {
			email = c.Raw.Section("user").Option("email")
		}
	}
	if name == "" {
		name = "hone"
	}
	if email == "" {
		email = "hone@localhost"
	}
	p.ident = fmt.Sprintf("%s <%s>", name, email)
	return p
}

// globalConfig is the user's git configuration, or nil when there is none.
func globalConfig() *config.Config {
	c, err := config.LoadConfig(config.GlobalScope)
	if err != nil {
		return nil
	}
	return c
}

// appendReflog adds the entry git writes for a move of ref from old to new
// (all-zero for a creation), when git would keep a reflog for it.
func (s *Refs) appendReflog(ref string, old, newH plumbing.Hash) error {
	p := s.policy()
	path := filepath.Join(s.commonDir, "logs", filepath.FromSlash(ref))
	flags := os.O_WRONLY | os.O_APPEND
	if p.logsRef(ref) {
		flags |= os.O_CREATE
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot create the reflog directory of %s", ref)
		}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot open the reflog of %s", ref)
	}
	_, off := time.Now().Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	line := fmt.Sprintf("%s %s %s %d %c%02d%02d\t%s\n", old, newH, p.ident, time.Now().Unix(), sign, off/3600, off%3600/60, s.reason)
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write the reflog of %s", ref)
	}
	return nil
}

// ReflogEntry is one move of a ref as its reflog records it.
type ReflogEntry struct {
	Old, New plumbing.Hash
	Message  string
}

// Reflog returns the recorded moves of ref, oldest first; none when git
// keeps no reflog for it.
func (s *Refs) Reflog(ref string) ([]ReflogEntry, error) {
	f, err := os.Open(filepath.Join(s.commonDir, "logs", filepath.FromSlash(ref)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the reflog of %s", ref)
	}
	defer f.Close()
	var out []ReflogEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 82 || line[40] != ' ' || !plumbing.IsHash(line[:40]) || !plumbing.IsHash(line[41:81]) {
			continue
		}
		_, msg, _ := strings.Cut(line, "\t")
		out = append(out, ReflogEntry{Old: plumbing.NewHash(line[:40]), New: plumbing.NewHash(line[41:81]), Message: msg})
	}
	if err := sc.Err(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the reflog of %s", ref)
	}
	return out, nil
}

// WithReason returns a ref store whose moves are logged with msg (git's
// reflog message, e.g. "hone: ledger append").
func (s *Refs) WithReason(msg string) *Refs {
	return &Refs{commonDir: s.commonDir, stateDir: s.stateDir, reason: msg, pol: s.pol}
}
