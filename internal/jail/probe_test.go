package jail

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeCalls makes each call the filter denies, with arguments an
// unfiltered kernel accepts (or refuses for a reason other than EPERM), and
// prints name=ok or name=ERRNO, one a line; then the calls an honest program
// makes, which must work under the filter.
func probeCalls() int {
	f, err := os.Open("/bin/sh")
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	fd := f.Fd()
	page := make([]byte, 4096)
	iov := unix.Iovec{Base: &page[0], Len: uint64(len(page))}
	mapped, err := unix.Mmap(int(fd), 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		fmt.Println("mmap:", err)
		return 1
	}
	scratch, err := os.CreateTemp("", "probe")
	if err != nil {
		fmt.Println("create:", err)
		return 1
	}
	vec := make([]byte, 1)
	var cs [64]byte
	rng := [2]uint64{0, 4096}
	uparams := make([]byte, 120)
	perfAttr := make([]byte, 128)
	local := unix.Iovec{Base: &page[0], Len: 1}
	remote := unix.RemoteIovec{Base: uintptr(unsafe.Pointer(&vec[0])), Len: 1}
	keyType, desc, payload := cstr("user"), cstr("hone-probe"), []byte("p")
	keyring := int64(unix.KEY_SPEC_PROCESS_KEYRING)
	procKeyring := uintptr(keyring)
	calls := []struct {
		name string
		nr   uintptr
		args [6]uintptr
	}{
		{"readahead", unix.SYS_READAHEAD, [6]uintptr{fd, 0, 4096}},
		{"fadvise64", unix.SYS_FADVISE64, [6]uintptr{fd, 0, 0, unix.FADV_DONTNEED}},
		{"mincore", unix.SYS_MINCORE, [6]uintptr{uintptr(unsafe.Pointer(&mapped[0])), 4096, uintptr(unsafe.Pointer(&vec[0]))}},
		{"cachestat", unix.SYS_CACHESTAT, [6]uintptr{fd, uintptr(unsafe.Pointer(&rng)), uintptr(unsafe.Pointer(&cs)), 0}},
		{"preadv2-nowait", unix.SYS_PREADV2, [6]uintptr{fd, uintptr(unsafe.Pointer(&iov)), 1, 0, 0, unix.RWF_NOWAIT}},
		{"pwritev2-nowait", unix.SYS_PWRITEV2, [6]uintptr{scratch.Fd(), uintptr(unsafe.Pointer(&iov)), 1, 0, 0, unix.RWF_NOWAIT}},
		{"madvise-willneed", unix.SYS_MADVISE, [6]uintptr{uintptr(unsafe.Pointer(&mapped[0])), 4096, unix.MADV_WILLNEED}},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uintptr{1, uintptr(unsafe.Pointer(&uparams[0]))}},
		{"io_uring_enter", unix.SYS_IO_URING_ENTER, [6]uintptr{^uintptr(0)}},
		{"io_uring_register", unix.SYS_IO_URING_REGISTER, [6]uintptr{^uintptr(0)}},
		{"userfaultfd", unix.SYS_USERFAULTFD, [6]uintptr{1}}, // UFFD_USER_MODE_ONLY
		{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, [6]uintptr{uintptr(unsafe.Pointer(&perfAttr[0])), 0, ^uintptr(0), ^uintptr(0)}},
		{"add_key", unix.SYS_ADD_KEY, [6]uintptr{uintptr(unsafe.Pointer(&keyType[0])), uintptr(unsafe.Pointer(&desc[0])), uintptr(unsafe.Pointer(&payload[0])), 1, procKeyring}},
		{"keyctl", unix.SYS_KEYCTL, [6]uintptr{unix.KEYCTL_GET_KEYRING_ID, procKeyring, 1}},
		{"request_key", unix.SYS_REQUEST_KEY, [6]uintptr{uintptr(unsafe.Pointer(&keyType[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0}},
		{"process_vm_readv", unix.SYS_PROCESS_VM_READV, [6]uintptr{uintptr(os.Getpid()), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0}},
		{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV, [6]uintptr{uintptr(os.Getpid()), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0}},
		{"ptrace", unix.SYS_PTRACE, [6]uintptr{unix.PTRACE_SEIZE, 999999}},
		// What honest programs do, and must keep doing.
		{"honest-preadv2", unix.SYS_PREADV2, [6]uintptr{fd, uintptr(unsafe.Pointer(&iov)), 1, 0, 0, 0}},
		{"honest-madvise", unix.SYS_MADVISE, [6]uintptr{uintptr(unsafe.Pointer(&mapped[0])), 4096, unix.MADV_NORMAL}},
	}
	for _, c := range calls {
		_, _, e := syscall.Syscall6(c.nr, c.args[0], c.args[1], c.args[2], c.args[3], c.args[4], c.args[5])
		fmt.Printf("%s=%s\n", c.name, errnoName(e))
	}
	return 0
}

func cstr(s string) []byte { return append([]byte(s), 0) }

func errnoName(e syscall.Errno) string {
	switch {
	case e == 0:
		return "ok"
	case errors.Is(e, unix.EPERM):
		return "EPERM"
	}
	return unix.ErrnoName(e)
}
