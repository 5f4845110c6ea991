package jail

import (
	"errors"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// The PID namespace's counter (ns_last_pid) sees every task a run creates
// but cannot tell a thread from a process: both draw from it. The meter
// tells them apart with a second system call filter of its own, which
// hands every call that creates a process (fork, vfork, clone without
// CLONE_THREAD) to the meter before the kernel runs it; the meter counts
// it and lets it continue. Threads are then the tasks that are not
// processes. What makes the count sound:
//
//   - the flags that decide are in a register, which the filter reads as
//     the kernel will use them; clone3 passes them in memory, which a
//     thread could change after the check, so clone3 fails with ENOSYS
//     and libc falls back to clone (as it does on kernels before 5.3);
//   - a filter installed later by the command cannot take the calls for a
//     listener of its own (the kernel allows one listener in a task's
//     chain of filters, EBUSY), and no other action of a later filter lets
//     a call run unseen: the kernel runs every filter and takes the
//     strictest result, and only refusals rank above the meter's;
//   - 32-bit calls are refused outright, as in the jail's own filter.
//
// A call the kernel then refuses (a limit, bad flags) is counted all the
// same, and so is each time the kernel makes a fork again because a signal
// came while it ran (ERESTARTNOINTR, after the meter let it continue); an
// answer the kernel did not take (its caller was interrupted while it
// waited, and will ask again) is not. So the split can only move tasks
// from threads to processes; the total stays the namespace's, and a risk
// signal on the total catches what the split would miss.
//
// The meter's own fork of the command is made from the thread that holds
// the filter, so the command starts under it; that fork is the run's first
// process and counted as one. While that thread waits in the fork for its
// own notification, it holds a scheduler slot (the fork is a raw system
// call), so the meter keeps a second slot free for the goroutine that
// answers, and no garbage collection, which would wait for both, runs
// meanwhile.
type processCounter struct {
	listener int
	stopR    int
	stopW    int
	count    atomic.Int64
	done     chan struct{}
}

// startProcessCounter installs the filter on the calling thread, which
// must be locked to its goroutine and must make the fork, and starts
// answering. It returns nil when the kernel refuses the filter; processes
// then go uncounted.
func startProcessCounter() *processCounter {
	raw, err := assemble(counterPolicy())
	if err != nil {
		return nil
	}
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	debug.SetGCPercent(-1)
	var pipe [2]int
	if unix.Pipe2(pipe[:], unix.O_CLOEXEC) != nil {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		unix.Close(pipe[0])
		unix.Close(pipe[1])
		return nil
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		unix.Close(pipe[0])
		unix.Close(pipe[1])
		return nil
	}
	unix.CloseOnExec(int(fd))
	c := &processCounter{listener: int(fd), stopR: pipe[0], stopW: pipe[1], done: make(chan struct{})}
	go c.answer()
	return c
}

// counterPolicy is the meter's filter. A clone whose flags hold
// CLONE_THREAD starts a thread and passes unseen.
func counterPolicy() seccomp.Policy {
	notThread := seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsNotSet, Value: unix.CLONE_THREAD}}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionUserNotify, Names: []string{"fork", "vfork"},
				NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: notThread}}},
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
}

// seccompNotif and seccompNotifResp are the kernel's struct seccomp_notif
// and struct seccomp_notif_resp.
type seccompNotif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Data  struct {
		NR   int32
		Arch uint32
		IP   uint64
		Args [6]uint64
	}
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// answer lets each notified call continue, counting those whose answer
// the kernel took (an interrupted caller's is refused with ENOENT, and
// the call it makes again is notified anew), until stop.
func (c *processCounter) answer() {
	defer close(c.done)
	fds := []unix.PollFd{{Fd: int32(c.listener), Events: unix.POLLIN}, {Fd: int32(c.stopR), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			if fds[0].Revents != 0 {
				return
			}
			continue
		}
		var n seccompNotif
		if ioctl(c.listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)) != nil {
			// Another wake-up took it, or its caller died meanwhile.
			continue
		}
		resp := seccompNotifResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		if ioctl(c.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp)) == nil {
			c.count.Add(1)
		}
	}
}

// stop ends the answering and returns the count, or 0 when there is no
// counter. Called once every process of the run is gone.
func (c *processCounter) stop() int {
	if c == nil {
		return 0
	}
	unix.Write(c.stopW, []byte{0})
	<-c.done
	unix.Close(c.listener)
	unix.Close(c.stopR)
	unix.Close(c.stopW)
	return int(c.count.Load())
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
