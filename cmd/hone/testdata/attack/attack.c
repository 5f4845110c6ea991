/* The attacker's toolbox: a patch adds this file and runs it from its
   build, a gate or a bench run. Each attack prints what it achieved, so a
   test can tell a refused attack from one that never ran. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int numeric(const char *s) {
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* dial tries a TCP connection to host:port. */
static void dial(const char *host, int port) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, host, &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		printf("CONNECTED to %s:%d\n", host, port);
	else
		printf("refused %s:%d: %s\n", host, port, strerror(errno));
	close(fd);
}

/* unixdial tries a Unix socket by path, or abstract when it starts with @. */
static void unixdial(const char *path) {
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strncpy(a.sun_path, path, sizeof a.sun_path - 1);
	socklen_t n = sizeof a;
	if (path[0] == '@') {
		a.sun_path[0] = 0;
		n = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	}
	if (connect(fd, (struct sockaddr *)&a, n) == 0)
		printf("CONNECTED to %s\n", path);
	else
		printf("refused %s: %s\n", path, strerror(errno));
	close(fd);
}

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	const char *what = argv[1];
	if (strcmp(what, "connect") == 0) {
		/* connect PORT UNIXPATH ABSTRACT */
		dial("127.0.0.1", atoi(argv[2]));
		dial("1.1.1.1", 53);
		unixdial(argv[3]);
		unixdial(argv[4]);
		return 1;
	}
	if (strcmp(what, "setns") == 0) {
		/* setns PORT: enter every network namespace in sight, then dial. */
		int entered = 0;
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (!numeric(e->d_name))
				continue;
			char p[64];
			snprintf(p, sizeof p, "/proc/%s/ns/net", e->d_name);
			int fd = open(p, O_RDONLY);
			if (fd >= 0 && setns(fd, CLONE_NEWNET) == 0)
				entered++;
			if (fd >= 0)
				close(fd);
		}
		printf("entered %d namespaces\n", entered);
		dial("127.0.0.1", atoi(argv[2]));
		return 1;
	}
	if (strcmp(what, "proc") == 0) {
		/* proc: read every environment in sight, open every memory for
		   writing and every process for ptrace, by listing /proc and by
		   guessing pids. */
		int env = 0, mem = 0, traced = 0, seen = 0;
		for (int pid = 1; pid < 70000; pid++) {
			if (pid == getpid() || pid == getppid())
				continue;
			char p[64];
			snprintf(p, sizeof p, "/proc/%d/environ", pid);
			int fd = open(p, O_RDONLY);
			if (fd < 0 && errno == ENOENT)
				continue;
			seen++;
			if (fd >= 0) {
				char buf[65536];
				ssize_t n = read(fd, buf, sizeof buf - 1);
				if (n > 0) {
					env++;
					for (ssize_t i = 0; i < n; i++)
						if (buf[i] == 0)
							buf[i] = '\n';
					buf[n] = 0;
					fputs(buf, stdout);
				}
				close(fd);
			}
			snprintf(p, sizeof p, "/proc/%d/mem", pid);
			fd = open(p, O_RDWR);
			if (fd >= 0) {
				mem++;
				close(fd);
			}
			if (ptrace(PTRACE_ATTACH, pid, 0, 0) == 0) {
				traced++;
				ptrace(PTRACE_DETACH, pid, 0, 0);
			}
		}
		printf("saw %d processes, read %d environments, opened %d memories, traced %d\n", seen, env, mem, traced);
		return 1;
	}
	if (strcmp(what, "signal") == 0) {
		/* signal: stop or end every process this user may signal. */
		int sent = 0;
		for (int sig = 1; sig < 32; sig++) {
			if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGCONT)
				continue;
			if (kill(-1, sig) == 0)
				sent++;
		}
		printf("signalled everyone %d times\n", sent);
		return 1;
	}
	if (strcmp(what, "forks") == 0) {
		/* forks N TAG: start N sleepers named TAG. */
		int n = atoi(argv[2]), i = 0;
		for (; i < n; i++) {
			pid_t p = fork();
			if (p < 0) {
				printf("fork refused after %d: %s\n", i, strerror(errno));
				break;
			}
			if (p == 0) {
				execl("/bin/sleep", argv[3], "300", (char *)0);
				_exit(0);
			}
		}
		printf("forked %d\n", i);
		return 1;
	}
	if (strcmp(what, "daemon") == 0) {
		/* daemon TAG: a double fork into a new session, left running. */
		if (fork() == 0) {
			setsid();
			if (fork() == 0) {
				signal(SIGHUP, SIG_IGN);
				execl("/bin/sleep", argv[2], "300", (char *)0);
			}
			_exit(0);
		}
		wait(0);
		printf("daemon started\n");
		return 0;
	}
	if (strcmp(what, "shm") == 0) {
		/* shm PATH: fill /dev/shm. */
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		static char buf[1 << 20];
		long total = 0;
		while (fd >= 0 && total < 512L << 20) {
			ssize_t n = write(fd, buf, sizeof buf);
			if (n <= 0) {
				printf("shm full after %ld MiB: %s\n", total >> 20, strerror(errno));
				break;
			}
			total += n;
		}
		printf("wrote %ld MiB\n", total >> 20);
		return 1;
	}
	return 2;
}
