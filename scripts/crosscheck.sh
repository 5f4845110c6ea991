#!/bin/sh
# Check hone's cpu-time CI against an independent measurement of the same
# two binaries. Each of SESSIONS sessions takes a fresh copy of WORKSPACE (a
# committed hone workspace), proposes DIFF for TARGET and judges it once
# (hone verdict --keep: a second verdict of one patch would pool samples);
# then, outside hone, it runs the target's bench command on the baseline and
# candidate that verdict built, alternately, in a random order per pair, for
# PAIRS pairs round the code layouts the verdict measured (each layout's own
# builds, so that the reference is of the very binaries hone timed, not of
# one placement). Like hone, it gives each pair an input seed of its own and
# pads the environment of both its runs by one random size (HONE_PAD, so
# that the stack lands where hone's runs land, not at one alignment). It
# takes each run's CPU time (user + sys of the process and its children,
# from wait4) and computes the ratio of the medians baseline/candidate. A
# session passes when hone's 95% CI contains that ratio.
#
#   scripts/crosscheck.sh WORKSPACE TARGET DIFF [SESSIONS] [PAIRS]
#
# The bench command comes from `hone targets --json`. It runs in the kept
# checkout with {seed} replaced by the pair's seed and HONE_OUT, HONE_ROOT,
# HONE_TARGET and HONE_SEED set as in the jail, so it must reach the build
# through $HONE_OUT, not /hone/out. Like hone's jail, the runner execs a
# command of plain words itself and hands any other to sh -c: a shell's
# start-up would otherwise count in every reference run and in no run of
# hone's. HOTSPOT, CLASS and HYPOTHESIS
# fill in the proposal; HONE names the hone binary (default: hone on PATH);
# NAMESPACES=1 runs the reference in namespaces of its own (below). Needs cc,
# git and jq (and bwrap for NAMESPACES). Prints one line per session, the
# count contained and the load.
set -eu
if [ $# -lt 3 ]; then
	echo "usage: scripts/crosscheck.sh WORKSPACE TARGET DIFF [SESSIONS] [PAIRS]" >&2
	exit 2
fi
ws=$(cd "$1" && pwd)
target=$2
diff=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
sessions=${4:-20}
pairs=${5:-30}
hone=${HONE:-hone}
case $hone in */*) hone=$(cd "$(dirname "$hone")" && pwd)/$(basename "$hone") ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/runner.c" <<'C'
/* runner PAIRS ORDER_SEED SEED TARGET PATH RUN CMD LAYOUTS: alternate the
 * baseline and the candidate of the kept run folder RUN, each pair in a
 * random order after one warm-up pair per layout, pair i in layout
 * i % LAYOUTS (layout 0 is RUN/baseline and RUN/candidate, layout k
 * RUN/baseline-layout-k and RUN/candidate-layout-k, the builds hone
 * measured), both runs of a pair on one fresh seed (SEED for the warm-ups)
 * and with one random size of HONE_PAD (0 to 4095 bytes, as hone pads a
 * pair's environment), and print each run's CPU time, then the medians,
 * their ratio and the Hodges-Lehmann paired ratio. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char **arg;

static char pad[4097];

/* command is CMD with every {seed} replaced by seed. */
static void command(char *dst, size_t cap, const char *seed)
{
	const char *src = arg[7], *at;
	size_t n = 0, k = strlen(seed);
	while ((at = strstr(src, "{seed}")) != NULL && n + (at - src) + k < cap) {
		memcpy(dst + n, src, at - src);
		n += at - src;
		memcpy(dst + n, seed, k);
		n += k;
		src = at + 6;
	}
	snprintf(dst + n, cap - n, "%s", src);
}

/* words splits cmd into argv when it is plain words (letters, digits,
 * ./_-+=:,@% and $NAME or ${NAME} expansions of set variables, no quotes),
 * which hone's jail execs itself without a shell (jail.plainWords): a
 * shell's start-up is about a millisecond of CPU here, which a reference
 * that always went through sh -c would add to every run and hone not. It
 * returns 0 when cmd needs a shell. */
static int words(char *cmd, char **argv, int max, char *buf, size_t cap)
{
	int n = 0;
	size_t k = 0;
	char *p = cmd;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (n == max - 1)
			return 0;
		argv[n++] = buf + k;
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '$') {
				char name[256];
				size_t m = 0;
				int brace = *++p == '{';
				if (brace)
					p++;
				while ((*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) && m < sizeof name - 1)
					name[m++] = *p++;
				name[m] = 0;
				if (brace && *p++ != '}')
					return 0;
				const char *v = getenv(name);
				if (m == 0 || v == NULL || *v == 0 || strpbrk(v, " \t\n*?[") || k + strlen(v) >= cap)
					return 0;
				strcpy(buf + k, v);
				k += strlen(v);
				continue;
			}
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-+=:,@%", *p) || k + 1 >= cap)
				return 0;
			buf[k++] = *p++;
		}
		buf[k++] = 0;
	}
	argv[n] = NULL;
	return n;
}

static double run(const char *role, int layout, int padlen, unsigned seed)
{
	char side[256], dir[4096], out[4096], root[4096], cmd[8192], s[16];
	if (layout == 0)
		snprintf(side, sizeof side, "%s", role);
	else
		snprintf(side, sizeof side, "%s-layout-%d", role, layout);
	snprintf(root, sizeof root, "%s/%s/src", arg[6], side);
	snprintf(dir, sizeof dir, "%s/%s", root, arg[5]);
	snprintf(out, sizeof out, "%s/%s/out", arg[6], side);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 1) < 0 || chdir(dir) != 0)
			_exit(126);
		setenv("HONE_OUT", out, 1);
		setenv("HONE_ROOT", root, 1);
		setenv("HONE_TARGET", arg[4], 1);
		snprintf(s, sizeof s, "%u", seed);
		command(cmd, sizeof cmd, s);
		setenv("HONE_SEED", s, 1);
		pad[padlen] = 0;
		setenv("HONE_PAD", pad, 1);
		char *argv[256], buf[16384];
		if (words(cmd, argv, 256, buf, sizeof buf) > 0)
			execvp(argv[0], argv);
		else
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "crosscheck: the %s's bench command failed in %s\n", side, dir);
		exit(1);
	}
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double *c = malloc(n * sizeof *c);
	memcpy(c, v, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

int main(int argc, char **argv)
{
	if (argc != 9)
		return 2;
	arg = argv;
	int n = atoi(argv[1]), layouts = atoi(argv[8]), i, j, k = 0;
	if (layouts < 1)
		layouts = 1;
	srand(atoi(argv[2]));
	double *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	double *w = malloc(n * (n + 1) / 2 * sizeof *w);
	memset(pad, 'x', sizeof pad - 1);
	unsigned first = strtoul(argv[3], 0, 10);
	for (i = 0; i < layouts; i++) {
		run("baseline", i, 0, first);
		run("candidate", i, 0, first);
	}
	for (i = 0; i < n; i++) {
		int l = i % layouts, p = rand() % 4096;
		unsigned seed = ((unsigned)rand() << 16 ^ (unsigned)rand()) % 2147483647u + 1;
		if (rand() & 1) {
			b[i] = run("baseline", l, p, seed);
			c[i] = run("candidate", l, p, seed);
		} else {
			c[i] = run("candidate", l, p, seed);
			b[i] = run("baseline", l, p, seed);
		}
		printf("pair %d %.6f %.6f\n", i, b[i], c[i]);
	}
	for (i = 0; i < n; i++)
		for (j = i; j < n; j++)
			w[k++] = (log(b[i] / c[i]) + log(b[j] / c[j])) / 2;
	printf("medians %.6f %.6f ratio %.4f hl %.4f\n", median(b, n), median(c, n),
	       median(b, n) / median(c, n), exp(median(w, k)));
	return 0;
}
C
cc -O2 -o "$work/runner" "$work/runner.c" -lm
# NAMESPACES=1 runs the reference in a user, PID and network namespace of
# its own, as hone's jail runs a bench, so that what the jail itself does to
# a process's start-up can be told apart from hone's statistics.
wrap=
if [ "${NAMESPACES:-0}" = 1 ]; then
	wrap="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $work $work --unshare-user --unshare-pid --unshare-net --die-with-parent --"
fi

cd "$ws"
path=$("$hone" targets --json | jq -r --arg t "$target" '.[] | select(.name == $t) | .path')
cmd=$("$hone" targets --json | jq -r --arg t "$target" '.[] | select(.name == $t) | .bench.run')
if [ -z "$path" ]; then
	echo "crosscheck: $ws has no target $target (hone targets lists them)" >&2
	exit 4
fi
if [ -z "$cmd" ]; then
	echo "crosscheck: target $target has no bench command ([targets.$target.bench] run)" >&2
	exit 5
fi
echo "load before: $(cat /proc/loadavg)"
contained=0
judged=0
i=1
while [ "$i" -le "$sessions" ]; do
	copy=$work/session
	rm -rf "$copy"
	cp -a "$ws" "$copy"
	cd "$copy"
	start=$(date +%s)
	id=$("$hone" patch propose "$target" --hotspot "${HOTSPOT:-crosscheck}" --class "${CLASS:-5}" \
		--hypothesis "${HYPOTHESIS:-the patch under crosscheck}" --file "$diff")
	"$hone" verdict "$id" --json --keep > "$work/verdict.json" || echo "session $i: hone verdict exited $?" >&2
	mid=$(date +%s)
	hone_ci=$(jq -r '.bench.metrics[]? | select(.metric == "cpu-time") | "\(.speedup) \(.ci_low) \(.ci_high) \(.pairs)"' "$work/verdict.json")
	if [ -z "$hone_ci" ]; then
		echo "session $i: $(jq -r '.verdict + ": " + .summary' "$work/verdict.json") (no cpu-time CI to check)"
	else
		run=$(jq -r '.kept_checkouts[0]' "$work/verdict.json")
		seed=$(jq -r '.input_seed' "$work/verdict.json")
		layouts=$(jq -r '.bench.layout.layouts // [] | length' "$work/verdict.json")
		$wrap "$work/runner" "$pairs" "$i" "$seed" "$target" "$path" "$run" "$cmd" "$layouts" > "$work/independent.txt"
		end=$(date +%s)
		line=$(tail -n 1 "$work/independent.txt")
		set -- $hone_ci $line
		# $1 speedup, $2 low, $3 high, $4 pairs; $9 independent ratio, $11 HL
		if awk -v lo="$2" -v hi="$3" -v r="$9" 'BEGIN { exit !(lo <= r && r <= hi) }'; then
			verdict=contained
			contained=$((contained + 1))
		else
			verdict="NOT contained"
		fi
		judged=$((judged + 1))
		printf 'session %d: hone %.3f [%.3f, %.3f] (%d pairs), independent %.3f (%d pairs over %d layouts, paired HL %.3f): %s; %d s hone, %d s independent; load %s\n' \
			"$i" "$1" "$2" "$3" "$4" "$9" "$pairs" "$(( layouts > 0 ? layouts : 1 ))" "${11}" "$verdict" $((mid - start)) $((end - mid)) "$(cut -d' ' -f1 /proc/loadavg)"
	fi
	cd "$ws"
	i=$((i + 1))
done
echo "contained: $contained of $judged sessions with a cpu-time CI ($sessions run)"
echo "load after: $(cat /proc/loadavg)"
