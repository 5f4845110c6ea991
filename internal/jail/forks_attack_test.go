package jail

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hideForks tries what would let a command create processes the meter
// does not count: a filter with a listener of its own (whose answers would
// take the meter's place), and clone3, whose flags are in memory; then it
// forks twice the plain way.
func hideForks() int {
	allow := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
	prog := unix.SockFprog{Len: 1, Filter: &allow[0]}
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	fmt.Printf("listener=%s\n", errnoName(e))
	// A size of 0 is invalid: should the call reach the kernel, it fails
	// there (EINVAL) without creating anything.
	_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	fmt.Printf("clone3=%s\n", errnoName(e))
	n := 0
	for range 2 {
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
		if err != nil {
			fmt.Println("fork:", err)
			continue
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err == nil {
			n++
		}
	}
	fmt.Printf("forked=%d\n", n)
	return 0
}

func containsLine(out, line string) bool {
	return slices.Contains(strings.Split(out, "\n"), line)
}
