package main

import (
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// jailWarnings are the warnings of a command that ran jailed commands:
// hone.toml's own (a deprecated key) and, once, the jail user hone created
// on the way.
func jailWarnings(ws *workspace.Workspace, userCreated bool) []errs.Warning {
	out := append([]errs.Warning{}, ws.Config.Warnings...)
	if userCreated {
		out = append(out, errs.Warning{Code: "jail_user_created", Message: "created the unprivileged user " + jail.DefaultUser +
			", which jailed commands run as when hone is root; scripts/ci-deps.sh creates it ahead of time"})
	}
	return out
}
