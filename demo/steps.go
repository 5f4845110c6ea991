package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/verdict"
)

// The hotspot every proposal names, and the demo's ideas. The duplicate
// spells the fix's hypothesis differently on purpose: attempt keys compare
// hypotheses case-folded with punctuation dropped.
const (
	hotspot        = "find_word"
	fixHypothesis  = "Replace the linear scan of the word table with a hash index, so each lookup costs O(1) instead of O(distinct words)"
	dupHypothesis  = "replace the linear scan of the word table with a hash index -- so each lookup costs O(1) instead of O(distinct words)!"
	cfgHypothesis  = "Hash index for the word table, with the golden gate switched off"
	slowHypothesis = "Compare word lengths first, so most mismatches are rejected without comparing characters"
	ReportFile     = "report.html"
)

func propose(hypothesis, diff string) []string {
	return []string{"patch", "propose", Target, "--hotspot", hotspot, "--class", "5",
		"--hypothesis", hypothesis, "--file", PatchDir + "/" + diff}
}

func script() []step {
	return []step{
		{"Create the ledger",
			"The workspace is a git repository holding hone.toml: one target, wordfreq, a C word counter with a unit-test gate and a golden-output gate. `hone init` keeps that file and creates the ledger branch.",
			func(ctx context.Context, s *Session) (string, error) {
				res, err := s.honeOK(ctx, "init")
				if err != nil {
					return "", err
				}
				s.show(res.Stdout, 6)
				return "the ledger branch hone/ledger exists; every attempt will be recorded there", nil
			}},
		{"Profile the target",
			"hone builds wordfreq at its pin in a fresh checkout and samples it with perf. This table is the optimizer's map.",
			stepProfile},
		{"Read a playbook",
			"Seven playbook classes, cheapest first. One function dominating with a scan inside points at class 5, algorithmic.",
			func(ctx context.Context, s *Session) (string, error) {
				res, err := s.honeOK(ctx, "playbook", "5")
				if err != nil {
					return "", err
				}
				line := playbookLine(res.Stdout)
				if line == "" {
					return "", errs.Failuref("hone playbook 5 printed nothing")
				}
				s.show([]byte(line), 1)
				return "the optimizer states a hypothesis for class 5 before it writes a patch", nil
			}},
		{"Propose the fix",
			"A patch is a diff against the pin. hone checks every path against the target's allowlist, applies it with git into a throwaway index, and stores the commit under refs/hone/patches/.",
			func(ctx context.Context, s *Session) (string, error) {
				id, err := s.proposeOK(ctx, fixHypothesis, "hash-table.diff")
				s.FixID = id
				return "patch " + id + " recorded as a proposal", err
			}},
		{"Ask for the verdict",
			"Gates first: the unit test, and the golden output, which must equal the baseline's byte for byte. Then baseline and candidate run in interleaved pairs until the speedup's confidence interval is clear of the threshold.",
			func(ctx context.Context, s *Session) (string, error) {
				return s.verdict(ctx, s.FixID, ledger.VerdictAccepted)
			}},
		{"Try to move the goalposts",
			"The same fix, plus a line of hone.toml that switches the golden gate off. hone.toml is outside the target's allowlist, so the whole patch is refused and nothing is written.",
			func(ctx context.Context, s *Session) (string, error) {
				return s.proposeRefused(ctx, cfgHypothesis, "hash-table-and-config.diff", "hone.toml")
			}},
		{"Grind the same idea again",
			"A slightly different diff (a bigger initial table) with the same hotspot, class and hypothesis, spelled differently: it is the same attempt, and that attempt already has a verdict.",
			func(ctx context.Context, s *Session) (string, error) {
				return s.proposeRefused(ctx, dupHypothesis, "hash-table-again.diff", "")
			}},
		{"Propose a plausible mistake",
			"Checking lengths first sounds cheaper. It is not: it calls strlen on both words for every comparison, and most comparisons already fail at the first letter.",
			func(ctx context.Context, s *Session) (string, error) {
				id, err := s.proposeOK(ctx, slowHypothesis, "length-check.diff")
				s.SlowID = id
				return "patch " + id + " recorded as a proposal", err
			}},
		{"Ask for its verdict",
			"The gates pass (the output is the same) but the benchmark says slower: the attempt is rejected, and recorded like every other.",
			func(ctx context.Context, s *Session) (string, error) {
				return s.verdict(ctx, s.SlowID, ledger.VerdictRejectedBench)
			}},
		{"Read the ledger",
			"Every profile, proposal and verdict is an immutable entry on hone/ledger; the two refusals left nothing behind.",
			func(ctx context.Context, s *Session) (string, error) {
				res, err := s.honeOK(ctx, "ledger")
				if err != nil {
					return "", err
				}
				s.show(res.Stdout, 12)
				// Listings show each patch id as its shortest unique prefix,
				// at least four characters of it.
				for _, want := range []string{" " + s.FixID[:4], " " + s.SlowID[:4], ledger.VerdictAccepted, ledger.VerdictRejectedBench} {
					if !strings.Contains(string(res.Stdout), want) {
						return "", errs.Failuref("the ledger does not show %s", want)
					}
				}
				return "both attempts are in the ledger, each with its verdict", nil
			}},
		{"Verify the ledger",
			"Anyone can check the history: the branch only ever grew, every entry is well-formed and stored under its id, every patch commit is present, and the notes agree with the verdicts.",
			func(ctx context.Context, s *Session) (string, error) {
				res, err := s.honeOK(ctx, "ledger", "verify")
				if err != nil {
					return "", err
				}
				s.show(res.Stdout, 6)
				return "the ledger verifies", nil
			}},
		{"Write the report",
			"One self-contained HTML page: the attempts, a forest plot of their speedup intervals against the threshold, and the hotspots.",
			func(ctx context.Context, s *Session) (string, error) {
				if _, err := s.honeOK(ctx, "report", Target, "--html", ReportFile); err != nil {
					return "", err
				}
				if fi, err := os.Stat(filepath.Join(s.Dir, ReportFile)); err != nil || fi.Size() == 0 {
					return "", errs.Failuref("hone report wrote no %s", ReportFile)
				}
				return "wrote " + ReportFile, nil
			}},
	}
}

func stepProfile(ctx context.Context, s *Session) (string, error) {
	res, err := s.honeOK(ctx, "profile", "run", Target, "--json")
	if err != nil {
		return "", err
	}
	var e profile.Entry
	if err := json.Unmarshal(res.Stdout, &e); err != nil {
		return "", errs.Wrap(errs.Failure, err, "hone profile run --json printed no profile")
	}
	top := e.Hotspots[:min(len(e.Hotspots), 5)]
	width := len("symbol")
	for _, h := range top {
		width = max(width, min(len(h.Label()), 40))
	}
	out := []string{fmt.Sprintf("%-*s %7s %7s  %s", width, "symbol", "flat", "cum", "hottest line")}
	for _, h := range top {
		where := h.File
		if h.Line > 0 {
			where += ":" + strconv.Itoa(h.Line)
		}
		out = append(out, fmt.Sprintf("%-*s %6.1f%% %6.1f%%  %s", width, h.Label(), h.FlatPct, h.CumPct, where))
	}
	var found *profile.Hotspot
	for i := range e.Hotspots {
		if e.Hotspots[i].Symbol == hotspot {
			found = &e.Hotspots[i]
		}
	}
	s.show(lines(out...), 0)
	if found == nil || found.CumPct < 50 {
		return "", errs.Failuref("the profile does not show %s as the hotspot (want it running in at least half the samples)", hotspot)
	}
	return fmt.Sprintf("%s is running in %.0f%% of %d samples (%s)", hotspot, found.CumPct, e.Samples, e.Event), nil
}

// proposeOK proposes a patch that must be stored, and returns its id.
func (s *Session) proposeOK(ctx context.Context, hypothesis, diff string) (string, error) {
	res, err := s.honeOK(ctx, append(propose(hypothesis, diff), "--json")...)
	if err != nil {
		return "", err
	}
	var r patch.Result
	if err := json.Unmarshal(res.Stdout, &r); err != nil || r.PatchID == "" {
		return "", errs.Failuref("hone patch propose --json printed no patch_id")
	}
	if r.Existing {
		return "", errs.Failuref("patch %s had been proposed before; the demo needs a fresh workspace", r.PatchID)
	}
	s.show(lines("patch_id: "+r.PatchID, "commit:   "+r.Commit), 0)
	return r.PatchID, nil
}

// proposeRefused proposes a patch that policy must refuse (exit 3). When
// mention is set, hone's message must name it.
func (s *Session) proposeRefused(ctx context.Context, hypothesis, diff, mention string) (string, error) {
	res, err := s.hone(ctx, propose(hypothesis, diff)...)
	if err != nil {
		return "", err
	}
	if res.Code != int(errs.Policy) {
		return "", errs.Failuref("exit status %d, want %d (refused by policy): %s", res.Code, errs.Policy, firstLine(append(res.Stderr, res.Stdout...)))
	}
	s.show(res.Stderr, 4)
	if mention != "" && !strings.Contains(string(res.Stderr), mention) {
		return "", errs.Failuref("the refusal does not name %s: %s", mention, firstLine(res.Stderr))
	}
	return "refused with exit status 3 (policy); no ref, no entry written", nil
}

// verdict asks for the verdict on id and requires the expected word.
func (s *Session) verdict(ctx context.Context, id, want string) (string, error) {
	res, err := s.honeOK(ctx, "verdict", id, "--json")
	if err != nil {
		return "", err
	}
	var v verdict.Entry
	if err := json.Unmarshal(res.Stdout, &v); err != nil {
		return "", errs.Wrap(errs.Failure, err, "hone verdict --json printed no verdict")
	}
	out := []string{"verdict: " + v.Verdict + " (" + v.Reason + ")"}
	for _, g := range v.Gates {
		state := "passed"
		if !g.Passed {
			state = "FAILED " + g.Message
		}
		out = append(out, fmt.Sprintf("gate %-8s %s", g.Name, state))
	}
	speed := ""
	if v.Bench != nil {
		if m := v.Bench.Stat(v.Bench.Metric); m != nil {
			speed = fmt.Sprintf("%s speedup %.2fx, %.0f%% CI [%.2fx, %.2fx] over %d pairs (p=%.2g)",
				m.Metric, m.Speedup, 100*v.Bench.Confidence, m.CILow, m.CIHigh, m.Pairs, m.P)
			out = append(out, speed)
		}
	}
	if v.Detail != "" {
		out = append(out, v.Detail)
	}
	s.show(lines(out...), 0)
	if v.Verdict != want {
		return "", errs.Failuref("verdict %s, want %s: %s", v.Verdict, want, v.Detail)
	}
	return v.Verdict + ": " + speed, nil
}

// playbookLine picks the first sentence of prose from a playbook: the line
// that says when the class applies.
func playbookLine(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		return strings.TrimLeft(l, "-* ")
	}
	return ""
}
