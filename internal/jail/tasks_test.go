package jail

import "testing"

// A run that hides work in short-lived helpers is seen by how many tasks it
// started, whoever reaped them.
func TestRunCountsEveryTaskItStarts(t *testing.T) {
	one := run(t, Spec{Command: "/bin/true"})
	four := run(t, Spec{Command: "/bin/sh -c '/bin/true; /bin/true; /bin/true; exit 0'"})
	if one.Tasks != 1 || four.Tasks != 4 {
		t.Errorf("tasks: /bin/true %d (want 1), a shell running three %d (want 4)", one.Tasks, four.Tasks)
	}
}
