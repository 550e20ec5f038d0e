// Package browsertest drives the operator pages in headless Chromium
// (Debian's, which .ci/run installs when missing) for the browser tests
// of the dashboard and of what serves it (Caddy's eureka_dashboard): a
// browser with no network beyond loopback, a tab (Page) and screenshots
// saved where CI keeps test artifacts.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium finds Chromium, and skips the test without it.
func Chromium(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("Chromium is not installed and could not be installed (apt-get install chromium): skipping the browser test")
	return ""
}

// Browser starts headless Chromium, its window width px wide, with no
// network beyond loopback, until the test ends (60 s at most).
func Browser(t testing.TB, width int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// Artifact saves a screenshot in $ARTIFACTS_DIR, by default artifacts/ at
// the repository's root (dir is the test's package's way there: "..",
// "../.."), and returns its path.
func Artifact(t testing.TB, dir, name string, png []byte) string {
	t.Helper()
	if d := os.Getenv("ARTIFACTS_DIR"); d != "" {
		dir = d
	} else {
		dir = filepath.Join(dir, "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Page drives one browser tab; a failed action fails the test.
type Page struct {
	T   testing.TB
	Ctx context.Context
}

// Do runs the actions in turn.
func (p Page) Do(actions ...chromedp.Action[chromedp.Void]) {
	p.T.Helper()
	for _, a := range actions {
		if _, err := chromedp.Run(p.Ctx, a); err != nil {
			p.T.Fatal(err)
		}
	}
}

// Text is the text of the first element sel selects.
func (p Page) Text(sel string) string {
	p.T.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.T.Fatal(err)
	}
	return v
}

// Eval is the value of a JavaScript expression.
func (p Page) Eval(expr string) any {
	p.T.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[any](expr))
	if err != nil {
		p.T.Fatal(err)
	}
	return v
}

// WaitFor polls a JavaScript condition until it holds, for timeout at
// most.
func (p Page) WaitFor(what, cond string, timeout time.Duration) {
	p.T.Helper()
	if _, err := chromedp.Run(p.Ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p.T.Fatalf("%s: %v", what, err)
	}
}

// Screenshot takes the whole page, from the top (so that a sticky header
// is where it belongs), and saves it as Artifact does.
func (p Page) Screenshot(dir, name string) []byte {
	p.T.Helper()
	if _, err := chromedp.Run(p.Ctx, chromedp.Evaluate[any](`window.scrollTo(0, 0)`)); err != nil {
		p.T.Fatal(err)
	}
	png, err := chromedp.Run(p.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.T.Fatal(err)
	}
	Artifact(p.T, dir, name, png)
	return png
}

// Element takes the element sel selects, with the page's sticky header
// made static so that it is not over the element.
func (p Page) Element(dir, sel, name string) []byte {
	p.T.Helper()
	p.Eval(`document.querySelector("header").style.position = "static"`)
	png, err := chromedp.Run(p.Ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		p.T.Fatal(err)
	}
	Artifact(p.T, dir, name, png)
	p.Eval(`document.querySelector("header").style.position = ""`)
	return png
}
