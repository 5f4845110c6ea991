package patch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// rawFile is one file of a diff as its header lines spell it, before any
// library interpretation. Names keep their a/ and b/ prefixes stripped only
// after the prefixes were checked.
type rawFile struct {
	line int // 1-based line of "diff --git"

	// From the "diff --git" line: both names when they could be split
	// unambiguously (one of them quoted), otherwise the whole unquoted rest.
	gitOld, gitNew string
	gitRest        string
	gitSplit       bool

	minus, plus       string // names on the ---/+++ lines; devNull for /dev/null
	hasMinus, hasPlus bool
	renameFrom        string
	renameTo          string
	copy              bool
	binary            bool
}

const devNull = "/dev/null"

// names lists every name the header lines carry, for the path rules.
func (f *rawFile) names() []string {
	var out []string
	for _, n := range []string{f.gitOld, f.gitNew, f.minus, f.plus, f.renameFrom, f.renameTo} {
		if n != "" && n != devNull {
			out = append(out, n)
		}
	}
	return out
}

// scanHeaders walks the diff line by line, following hunk counts, and
// collects every file header exactly as written. It refuses what go-gitdiff
// or git would read leniently: traditional headers, prefixes other than a/
// and b/, quoting git would read differently, CRs and stray header-like
// lines between files.
func scanHeaders(diff []byte) ([]*rawFile, error) {
	text := string(diff)
	if strings.IndexByte(text, 0) >= 0 {
		return nil, errs.Policyf("refused: the diff contains a NUL byte (binary content is not accepted)")
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// Blank lines at the very end (as pasted diffs often have) are not a
	// stray line between files.
	lastText := len(lines) - 1
	for lastText >= 0 && strings.TrimSpace(lines[lastText]) == "" {
		lastText--
	}
	var (
		files             []*rawFile
		cur               *rawFile
		state             = "preamble"
		oldLeft, newLeft  int64
		inSignature, seen bool
	)
	for i, l := range lines {
		n := i + 1
		if state != "hunk" && strings.HasSuffix(l, "\r") {
			return nil, errs.Policyf("refused: line %d ends in CR: diff headers must use LF line endings", n)
		}
		switch state {
		case "hunk":
			switch {
			case l == "" || l[0] == ' ':
				oldLeft--
				newLeft--
			case l[0] == '-':
				oldLeft--
			case l[0] == '+':
				newLeft--
			case l[0] == '\\':
			default:
				return nil, errs.Invalidf("malformed diff: line %d: hunk ends early (%q)", n, clip(l))
			}
			if oldLeft < 0 || newLeft < 0 {
				return nil, errs.Invalidf("malformed diff: line %d: hunk has more lines than its header counts", n)
			}
			if oldLeft == 0 && newLeft == 0 {
				state = "after"
			}
			continue
		case "preamble":
			if strings.HasPrefix(l, "diff --git ") {
				break
			}
			if looksLikeHeader(l) {
				return nil, errs.Invalidf("not a git diff: line %d: %q is not a git-style header; make the diff with `git diff` (only `diff --git a/... b/...` diffs are accepted)", n, clip(l))
			}
			continue
		case "after":
			switch {
			case l == "-- " && !inSignature:
				inSignature = true
				continue
			case inSignature:
				if looksLikeHeader(l) {
					return nil, errs.Policyf("refused: line %d: diff header %q after the patch signature", n, clip(l))
				}
				continue
			case strings.HasPrefix(l, "\\"), i > lastText:
				continue
			case strings.HasPrefix(l, "@@ "), strings.HasPrefix(l, "diff --git "):
			default:
				return nil, errs.Policyf("refused: line %d: unexpected line %q between files", n, clip(l))
			}
		}
		// state is header or after, or preamble at a diff --git line.
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur = &rawFile{line: n}
			if err := cur.parseGitLine(l[len("diff --git "):]); err != nil {
				return nil, errs.Policyf("refused: line %d: %v", n, err)
			}
			files = append(files, cur)
			state, seen = "header", true
		case strings.HasPrefix(l, "@@ "):
			if cur == nil || (state == "header" && !(cur.hasMinus && cur.hasPlus)) {
				return nil, errs.Invalidf("malformed diff: line %d: hunk without a complete file header", n)
			}
			o, nw, err := hunkCounts(l)
			if err != nil {
				return nil, errs.Invalidf("malformed diff: line %d: %v", n, err)
			}
			oldLeft, newLeft, state = o, nw, "hunk"
			if o == 0 && nw == 0 {
				state = "after"
			}
		case state == "header":
			if err := cur.parseHeaderLine(l); err != nil {
				return nil, errs.Policyf("refused: line %d: %v", n, err)
			}
			if cur.binary {
				return nil, errs.Policyf("refused %q: binary patches are not accepted", firstName(cur))
			}
		}
	}
	if state == "hunk" {
		return nil, errs.Invalidf("malformed diff: the last hunk is cut short")
	}
	if !seen {
		return nil, nil
	}
	return files, nil
}

func (f *rawFile) parseGitLine(rest string) error {
	a, b, split, err := splitGitNames(rest)
	if err != nil {
		return err
	}
	if !split {
		if !strings.HasPrefix(rest, "a/") || !strings.Contains(rest, " b/") {
			return fmt.Errorf("`diff --git %s` lacks the a/ and b/ prefixes", clip(rest))
		}
		f.gitRest = rest
		return nil
	}
	var ok1, ok2 bool
	if f.gitOld, ok1 = strings.CutPrefix(a, "a/"); !ok1 {
		return fmt.Errorf("old name %q in `diff --git` lacks the a/ prefix", a)
	}
	if f.gitNew, ok2 = strings.CutPrefix(b, "b/"); !ok2 {
		return fmt.Errorf("new name %q in `diff --git` lacks the b/ prefix", b)
	}
	f.gitSplit = true
	return nil
}

// splitGitNames splits the names of a "diff --git" line when at least one is
// quoted; two unquoted names containing spaces cannot be split reliably, and
// are checked later against the other headers instead.
func splitGitNames(rest string) (a, b string, split bool, err error) {
	if strings.HasPrefix(rest, `"`) {
		a, n, err := unquoteGit(rest)
		if err != nil {
			return "", "", false, fmt.Errorf("quoted name: %v", err)
		}
		if n >= len(rest) || rest[n] != ' ' {
			return "", "", false, fmt.Errorf("no space after the quoted old name")
		}
		b, err := wholeName(rest[n+1:])
		return a, b, true, err
	}
	if i := strings.Index(rest, ` "`); i >= 0 && strings.HasSuffix(rest, `"`) {
		b, err := wholeName(rest[i+1:])
		return rest[:i], b, true, err
	}
	if strings.Contains(rest, `"`) {
		return "", "", false, fmt.Errorf("stray quote in `diff --git %s`", clip(rest))
	}
	return "", "", false, nil
}

// wholeName reads s as one name, quoted or not, that must fill all of s.
func wholeName(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		if strings.Contains(s, `"`) {
			return "", fmt.Errorf("stray quote in name %q", clip(s))
		}
		return s, nil
	}
	name, n, err := unquoteGit(s)
	if err != nil {
		return "", fmt.Errorf("quoted name: %v", err)
	}
	if n != len(s) {
		return "", fmt.Errorf("text after the quoted name %q", clip(s))
	}
	return name, nil
}

func (f *rawFile) parseHeaderLine(l string) error {
	field := func(prefix string) (string, bool) { return strings.CutPrefix(l, prefix) }
	if v, ok := field("--- "); ok {
		name, err := sideName(v, "a/")
		f.minus, f.hasMinus = name, true
		return err
	}
	if v, ok := field("+++ "); ok {
		name, err := sideName(v, "b/")
		f.plus, f.hasPlus = name, true
		return err
	}
	for _, p := range []string{"rename from ", "rename old "} {
		if v, ok := field(p); ok {
			name, err := wholeName(v)
			f.renameFrom = name
			return err
		}
	}
	for _, p := range []string{"rename to ", "rename new "} {
		if v, ok := field(p); ok {
			name, err := wholeName(v)
			f.renameTo = name
			return err
		}
	}
	if strings.HasPrefix(l, "copy from ") || strings.HasPrefix(l, "copy to ") {
		f.copy = true
		return fmt.Errorf("copies are not accepted (a copy can read a file from outside the allowlist): %q", clip(l))
	}
	if strings.HasPrefix(l, "GIT binary patch") || strings.HasPrefix(l, "Binary files ") {
		f.binary = true
		return nil
	}
	for _, p := range []string{"old mode ", "new mode ", "deleted file mode ", "new file mode ", "index ", "similarity index ", "dissimilarity index "} {
		if strings.HasPrefix(l, p) {
			return nil
		}
	}
	return fmt.Errorf("unexpected line %q in a file header", clip(l))
}

// sideName reads the name of a ---/+++ line: /dev/null or prefix+name, with
// at most the single trailing tab git adds after names containing spaces.
func sideName(v, prefix string) (string, error) {
	if v == devNull {
		return devNull, nil
	}
	if strings.HasSuffix(v, "\t") {
		v = v[:len(v)-1]
	} else if strings.Contains(v, "\t") {
		return "", fmt.Errorf("timestamp or tab after the name %q (not a git diff)", clip(v))
	}
	name, err := wholeName(v)
	if err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", fmt.Errorf("name %q lacks the %s prefix", name, prefix)
	}
	return rest, nil
}

// hunkCounts parses "@@ -a[,b] +c[,d] @@..." into the old and new line counts.
func hunkCounts(l string) (int64, int64, error) {
	rest, ok := strings.CutPrefix(l, "@@ -")
	end := strings.Index(rest, " @@")
	if !ok || end < 0 {
		return 0, 0, fmt.Errorf("bad hunk header %q", clip(l))
	}
	oldR, newR, ok := strings.Cut(rest[:end], " +")
	if !ok {
		return 0, 0, fmt.Errorf("bad hunk header %q", clip(l))
	}
	count := func(r string) (int64, error) {
		pos, c, has := strings.Cut(r, ",")
		if _, err := strconv.ParseUint(pos, 10, 63); err != nil {
			return 0, fmt.Errorf("bad hunk header %q", clip(l))
		}
		if !has {
			return 1, nil
		}
		v, err := strconv.ParseInt(c, 10, 63)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("bad hunk header %q", clip(l))
		}
		return v, nil
	}
	o, err := count(oldR)
	if err != nil {
		return 0, 0, err
	}
	n, err := count(newR)
	return o, n, err
}

// looksLikeHeader reports lines that some diff dialect reads as a file header.
func looksLikeHeader(l string) bool {
	for _, p := range []string{"diff ", "--- ", "+++ ", "*** ", "@@ ", "Index: ", "==== ", "GIT binary patch", "Binary files ",
		"rename from ", "rename to ", "copy from ", "copy to ", "old mode ", "new mode ", "new file mode ", "deleted file mode "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// firstName names the file for a message: its first header name, or the
// name of a symmetric "diff --git a/X b/X" line.
func firstName(f *rawFile) string {
	if n := f.names(); len(n) > 0 {
		return n[0]
	}
	if half := (len(f.gitRest) - 1) / 2; len(f.gitRest) > 4 && f.gitRest[half] == ' ' && f.gitRest[2:half] == f.gitRest[half+3:] {
		return f.gitRest[2:half]
	}
	return f.gitRest
}

// clip shortens a line for a one-line message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
