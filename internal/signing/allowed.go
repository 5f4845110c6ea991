package signing

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hone-perf/hone/internal/errs"
)

// Signers is a parsed allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS),
// the file git's gpg.ssh.allowedSignersFile names: each line is
// "principals [options] keytype base64-key [comment]".
type Signers struct {
	lines []signer
}

type signer struct {
	principals          string // as written: a comma-separated list
	fingerprint         string
	namespaces          []string // empty: any namespace
	after, before       time.Time
	hasAfter, hasBefore bool
}

// ParseSigners reads an allowed-signers file; name is used in messages. A
// line hone cannot read is an error naming it: a trust list that is silently
// shorter than written would reject verdicts for no visible reason, and one
// that is longer would trust keys nobody listed. cert-authority lines are
// refused for the same reason: hone does not check certificates.
func ParseSigners(name string, data []byte) (*Signers, error) {
	s := &Signers{}
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' {
			continue
		}
		bad := func(format string, args ...any) error {
			return errs.Invalidf("%s:%d: %s", name, n+1, fmt.Sprintf(format, args...))
		}
		principals, rest := firstField(line)
		if principals == "" || rest == "" {
			return nil, bad("want \"principals [options] keytype key\"")
		}
		key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
		if err != nil {
			return nil, bad("cannot read the key: %v", err)
		}
		sg := signer{principals: strings.Trim(principals, `"`), fingerprint: ssh.FingerprintSHA256(key)}
		for _, opt := range options {
			k, v, _ := strings.Cut(opt, "=")
			v = strings.Trim(v, `"`)
			switch strings.ToLower(k) {
			case "namespaces":
				sg.namespaces = strings.Split(v, ",")
			case "valid-after":
				if sg.after, err = parseValidity(v); err != nil {
					return nil, bad("valid-after %q: %v", v, err)
				}
				sg.hasAfter = true
			case "valid-before":
				if sg.before, err = parseValidity(v); err != nil {
					return nil, bad("valid-before %q: %v", v, err)
				}
				sg.hasBefore = true
			case "cert-authority":
				return nil, bad("cert-authority lines are not supported; list each signing key")
			default:
				return nil, bad("unknown option %q", k)
			}
		}
		s.lines = append(s.lines, sg)
	}
	return s, nil
}

// firstField splits off the principals field, which may be double-quoted.
func firstField(line string) (string, string) {
	if strings.HasPrefix(line, `"`) {
		if i := strings.IndexByte(line[1:], '"'); i >= 0 {
			return line[:i+2], strings.TrimSpace(line[i+2:])
		}
		return "", ""
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

// parseValidity reads ssh-keygen's YYYYMMDD[HHMM[SS]][Z] times; without Z
// they are local time, as ssh-keygen reads them.
func parseValidity(v string) (time.Time, error) {
	loc := time.Local
	if s, ok := strings.CutSuffix(v, "Z"); ok {
		v, loc = s, time.UTC
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(v)]
	if !ok {
		return time.Time{}, fmt.Errorf("want YYYYMMDD[HHMM[SS]][Z]")
	}
	return time.ParseInLocation(layout, v, loc)
}

// Principal returns the principals of the first line that lists the key a
// good signature was made with, for git's namespace at time at (the signed
// commit's committer time, as git checks it). ok is false when no line
// trusts it.
func (s *Signers) Principal(c Checked, at time.Time) (string, bool) {
	if s == nil || c.Status != Good {
		return "", false
	}
	for _, l := range s.lines {
		if l.fingerprint != c.Fingerprint || !l.allowsNamespace() {
			continue
		}
		if (l.hasAfter && at.Before(l.after)) || (l.hasBefore && !at.Before(l.before)) {
			continue
		}
		return l.principals, true
	}
	return "", false
}

func (l signer) allowsNamespace() bool {
	if len(l.namespaces) == 0 {
		return true
	}
	for _, ns := range l.namespaces {
		if ok, _ := path.Match(strings.TrimSpace(ns), Namespace); ok {
			return true
		}
	}
	return false
}
