package jail

import "testing"

func TestVisibleIsWhatEveryJailSeesWithoutAMount(t *testing.T) {
	for p, want := range map[string]bool{
		"/usr/local/go": true, "/usr": true, "/lib/x86_64-linux-gnu": true, "/bin/sh": true,
		"/root/.rustup": false, "/opt/go": false, "/usrlocal": false, "/etc": false, "/usr/../root": false,
	} {
		if got := Visible(p); got != want {
			t.Errorf("Visible(%q) = %v, want %v", p, got, want)
		}
	}
}
