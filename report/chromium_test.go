package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium finds Debian's headless-capable browser. Without it the test
// fails, saying how to install it: CI installs it (scripts/ci-deps.sh), and a
// rendering test that skips unnoticed proves nothing. go test -short skips
// it, for development without a browser.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the browser rendering test")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: the report's rendering test needs it; run scripts/ci-deps.sh (or apt-get install chromium), or go test -short to skip it")
	return ""
}

// runChromium runs one headless Chromium job with flags that keep it off the
// network and out of the user's profile.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestChromiumRendersReport opens the report in a real browser: the DOM it
// builds must hold the table and both charts, and a screenshot is taken and
// checked to be a full-size, non-blank image. Set HONE_REPORT_SCREENSHOT to a
// path to keep the screenshot for a look.
func TestChromiumRendersReport(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := Render(&b, sample()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	dom := string(runChromium(t, bin, "--dump-dom", url))
	for _, want := range []string{`id="attempts"`, `id="forest"`, `class="hotspots"`, "Replace the linear scan with a hash table", "find_word", "&lt;script&gt;"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	// The browser builds the pin groups and keeps each cut label whole in
	// its <title>, the text a pointer shows on hover.
	for _, want := range []string{
		`<tr class="pin-row"><th colspan="9">pin aaaabbbbcccc · `,
		`<tr class="pin-row off-base"><th colspan="9">pin 999988887777 · 2026-11-29 12:00 UTC · NOT reachable from the protected base`,
		`<title>2. Compare the lengths of both words before calling strcmp on them, which skips most calls (pin aaaabbbbcccc)</title>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if n := strings.Count(dom, "<tr>"); n < 5 {
		t.Errorf("rendered DOM has %d table rows, want at least the 5 attempts", n)
	}

	shot := filepath.Join(dir, "report.png")
	if keep := os.Getenv("HONE_REPORT_SCREENSHOT"); keep != "" {
		shot = keep
	}
	runChromium(t, bin, "--screenshot="+shot, "--window-size=1200,1600", "--hide-scrollbars", url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium made no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if bnd := img.Bounds(); bnd.Dx() != 1200 || bnd.Dy() != 1600 {
		t.Errorf("screenshot is %dx%d, want 1200x1600", bnd.Dx(), bnd.Dy())
	}
	// A blank page is one colour; the report has text, bars and dots in
	// several. Count distinct colours on a coarse grid.
	colours := map[[3]uint32]bool{}
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 4 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 12, g >> 12, b >> 12}] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("screenshot has %d distinct colours: the page did not render", len(colours))
	}
	t.Logf("screenshot: %s (%d colours)", shot, len(colours))
}
