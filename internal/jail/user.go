package jail

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hone-perf/hone/internal/errs"
)

// DefaultUser is the host account the jail runs as when hone is root.
const DefaultUser = "hone-jail"

// account is the host identity the jail's processes have.
type account struct{ uid, gid int }

// createUser is the command that makes a jail user, also shown to the user
// when hone cannot run it itself.
func createUser(name string) []string {
	return []string{"useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name}
}

var (
	accountsMu sync.Mutex
	accounts   = map[string]account{}
	// userCreated is set when this process created a jail user, and
	// cleared by the first Result that reports it.
	userCreated atomic.Bool
)

// jailAccount resolves the account the jail runs as. When hone is not root
// it is hone's own: only root can start a process as someone else, and an
// ordinary user's jail already maps to that unprivileged user. When hone is
// root it must be another one: a user namespace's uid 1000 would otherwise
// map back to host root, which reads root's 0600 files and ignores
// RLIMIT_NPROC.
func jailAccount(name string) (account, error) {
	if os.Geteuid() != 0 {
		return account{os.Getuid(), os.Getgid()}, nil
	}
	if name == "" {
		name = DefaultUser
	}
	accountsMu.Lock()
	defer accountsMu.Unlock()
	if a, ok := accounts[name]; ok {
		return a, nil
	}
	a, err := lookupAccount(name)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) {
		create := createUser(name)
		if out, cerr := exec.Command(create[0], create[1:]...).CombinedOutput(); cerr != nil {
			// Another hone may have created it in the meantime.
			if a, err = lookupAccount(name); err != nil {
				return account{}, errs.Failuref("jail: cannot create the jail user %s (%s: %.100s); run: %s", name, cerr, strings.TrimSpace(string(out)), strings.Join(create, " "))
			}
		} else {
			userCreated.Store(true)
			a, err = lookupAccount(name)
		}
	}
	if err != nil {
		return account{}, errs.Failuref("jail: no user %q to run the jail as: %v; create it: %s", name, err, strings.Join(createUser(name), " "))
	}
	if a.uid == 0 {
		return account{}, errs.Invalidf("jail: user %q is root; the jail must run as an unprivileged user", name)
	}
	accounts[name] = a
	return a, nil
}

// lookupAccount accepts a name or a numeric uid; a uid with no passwd entry
// runs with the group of the same number.
func lookupAccount(name string) (account, error) {
	if uid, err := strconv.Atoi(name); err == nil {
		a := account{uid, uid}
		if u, err := user.LookupId(name); err == nil {
			a.gid, _ = strconv.Atoi(u.Gid)
		}
		return a, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return account{}, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return account{}, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return account{}, err
	}
	return account{uid, gid}, nil
}
