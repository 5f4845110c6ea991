package jail

// The meter reads a plan from fd planFD until EOF and writes one report to
// fd reportFD before it exits. Both fds are close-on-exec in the meter, so
// the command never holds them.
const (
	planFD   = 3
	reportFD = 4
)

// plan is what the meter is told to do.
type plan struct {
	// Argv is the command; Lookup means Argv[0] is a bare name to find in
	// Env's PATH, the way the shell would.
	Argv   []string `json:"argv"`
	Lookup bool     `json:"lookup"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	Copies []copyOp `json:"copies"`
	// Rlimits are set on the meter before the fork, so the whole tree
	// inherits them. A negative value means unlimited; 0 leaves the limit
	// as it is.
	Rlimits rlimits `json:"rlimits"`
	// TimeoutNS bounds the command from its fork; 0 means none.
	TimeoutNS int64 `json:"timeout_ns"`
	// CPUStat is the cpu.stat file of the run's cgroup, or "" when it has
	// none (see cgroup.go).
	CPUStat string `json:"cpu_stat"`
	// OneCPU forks the command on one CPU (Spec.OneCPU).
	OneCPU bool `json:"one_cpu"`
}

type copyOp struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type rlimits struct {
	CPU    int64 `json:"cpu"` // seconds
	FSize  int64 `json:"fsize"`
	Data   int64 `json:"data"`
	NProc  int64 `json:"nproc"`
	NoFile int64 `json:"nofile"`
}

// report is what the meter measured.
type report struct {
	ExitCode  int         `json:"exit_code"`
	Signaled  bool        `json:"signaled"`
	TimedOut  bool        `json:"timed_out"`
	WallNS    int64       `json:"wall_ns"`
	UserNS    int64       `json:"user_ns"`
	SysNS     int64       `json:"sys_ns"`
	MaxRSSKB  int64       `json:"max_rss_kb"`
	Leftover  int         `json:"leftover"`
	Lingering []Lingering `json:"lingering,omitempty"`
	Tasks     int         `json:"tasks"`
	// Unreaped CPU time: what the cgroup counted during the run beyond the
	// meter's own time and its children's rusage, split like the cgroup's.
	UnreapedUserNS int64 `json:"unreaped_user_ns"`
	UnreapedSysNS  int64 `json:"unreaped_sys_ns"`
	Cgroup         bool  `json:"cgroup"`
	// Error is set when the meter could not prepare or start the run; the
	// other fields are then meaningless.
	Error string `json:"error,omitempty"`
}
