package deploytest

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// imageUser is the user the images run as, by number, so that
// Kubernetes' runAsNonRoot can check it; /etc/passwd names it eurekagate.
const imageUser = "65532:65532"

// imageConfig is the part of an image's configuration that
// docs/kubernetes.md states.
type imageConfig struct {
	User         string
	Entrypoint   []string
	Cmd          []string
	Env          []string
	ExposedPorts map[string]struct{}
	Labels       map[string]string
}

// podman runs podman on a store of the test's own (vfs, which needs no
// kernel overlay support) and returns its standard output.
type podman struct{ root string }

func (p podman) flags() []string {
	return []string{"--storage-driver", "vfs", "--root", filepath.Join(p.root, "storage"), "--runroot", filepath.Join(p.root, "run")}
}

func (p podman) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("podman", append(p.flags(), args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// imageTag is version as an image tag: a tag holds letters, digits, "_",
// "." and "-", so a dirty tree's "+dirty" is tagged "-dirty".
func imageTag(version string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r == '-' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, version)
}

// The images deploy/images/build makes: each one's configuration is the
// one docs/kubernetes.md states, with the binary's own version in its
// labels, and its entrypoint, run from the image's unpacked file system
// as the image's user, answers its health endpoint 200.
func TestImages(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed: the image checks need it (Debian: apt-get install podman buildah; .ci/run installs it)")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: running an image's entrypoint from its file system needs chroot, which needs root")
	}
	p := podman{root: t.TempDir()}
	ctx := t.TempDir()
	build := exec.Command(filepath.Join(repoRoot, "deploy/images/build"))
	build.Env = append(os.Environ(), "CONTAINER_TOOL=podman", "CONTAINER_TOOL_FLAGS="+strings.Join(p.flags(), " "), "BUILD_DIR="+ctx)
	start := time.Now()
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("deploy/images/build: %v\n%s", err, out)
	}
	t.Logf("deploy/images/build: %v", time.Since(start).Round(time.Second))
	version := strings.Fields(run(t, filepath.Join(ctx, "eureka"), "-version"))[1]
	tag := imageTag(version)
	if tags := strings.Fields(string(out)); strings.Join(tags, " ") != "eurekagate/eureka:"+tag+" eurekagate/caddy:"+tag {
		t.Fatalf("deploy/images/build printed %q, want the two images tagged %s", out, tag)
	}
	// Each image's environment to run it on loopback at free ports.
	for _, img := range []struct {
		name string
		env  func(port int) []string
	}{
		{"eureka", func(port int) []string {
			return []string{fmt.Sprintf("EUREKA_ADDR=127.0.0.1:%d", port)}
		}},
		{"caddy", func(port int) []string {
			return []string{"EUREKA_BIND=127.0.0.1", fmt.Sprintf("EUREKA_PORT=%d", port),
				fmt.Sprintf("GATEWAY_PORT=%d", testkit.FreePort(t)), fmt.Sprintf("CADDY_ADMIN=127.0.0.1:%d", testkit.FreePort(t))}
		}},
	} {
		t.Run(img.name, func(t *testing.T) {
			ref := "eurekagate/" + img.name + ":" + tag
			var cfgs []imageConfig
			if err := json.Unmarshal([]byte(p.run(t, "image", "inspect", "--format", "[{{json .Config}}]", ref)), &cfgs); err != nil || len(cfgs) != 1 {
				t.Fatalf("podman image inspect %s: %v", ref, err)
			}
			cfg := cfgs[0]
			checkConfig(t, cfg, img.name, version)
			rootfs := unpack(t, p, ref)
			port := testkit.FreePort(t)
			started := time.Now()
			proc := runAs(t, rootfs, cfg, img.env(port))
			proc.waitFor200(t, fmt.Sprintf("http://127.0.0.1:%d/health", port))
			t.Logf("%s: 200 from /health %v after start", ref, time.Since(started).Round(time.Millisecond))
			// The chart's probes' paths, with the image's own configuration.
			for _, path := range []string{"/actuator/health/liveness", "/actuator/health/readiness"} {
				proc.waitFor200(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
			}
			if uid, want := processUID(t, proc.Pid()), strings.Split(imageUser, ":")[0]; uid != want {
				t.Errorf("%s runs as uid %s, want %s", img.name, uid, want)
			}
			if img.name == "caddy" {
				// The user owns XDG_CONFIG_HOME: Caddy saved its configuration there.
				testkit.Eventually(t, 10*time.Second, "Caddy autosaves its configuration under /config", func() bool {
					_, err := os.Stat(filepath.Join(rootfs, "config/caddy/autosave.json"))
					return err == nil
				})
			}
		})
	}
}

// checkConfig checks an image's configuration against docs/kubernetes.md:
// the entrypoint and command in the image's row of its table, the user,
// the ports and the labels in its text.
func checkConfig(t *testing.T, cfg imageConfig, name, version string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs/kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	row := regexp.MustCompile("(?m)^\\| `eurekagate/" + name + "` \\|.*$").FindString(doc)
	if row == "" {
		t.Fatalf("docs/kubernetes.md has no row for eurekagate/%s", name)
	}
	cells := strings.Split(row, "|")
	entrypoint, cmd := strings.Trim(strings.TrimSpace(cells[3]), "`"), strings.TrimSpace(cells[4])
	if got := strings.Join(cfg.Entrypoint, " "); got != entrypoint {
		t.Errorf("entrypoint %q, docs/kubernetes.md says %q", got, entrypoint)
	}
	if got := strings.Join(cfg.Cmd, " "); !(got == "" && strings.HasPrefix(cmd, "none")) && "`"+got+"`" != cmd {
		t.Errorf("command %q, docs/kubernetes.md says %s", got, cmd)
	}
	if cfg.User != imageUser || !strings.Contains(doc, "`"+imageUser+"`") {
		t.Errorf("user %q, want %q, as docs/kubernetes.md says", cfg.User, imageUser)
	}
	if len(cfg.ExposedPorts) != 2 || !strings.Contains(doc, "expose 8761") {
		t.Errorf("ports %v, want the two docs/kubernetes.md names", cfg.ExposedPorts)
	}
	for _, port := range []string{"8761/tcp", "8080/tcp"} {
		if _, ok := cfg.ExposedPorts[port]; !ok {
			t.Errorf("port %s not exposed: %v", port, cfg.ExposedPorts)
		}
	}
	labels := regexp.MustCompile(`(?s)Labels: (.*?)\.\s`).FindStringSubmatch(doc)
	if labels == nil {
		t.Fatal("docs/kubernetes.md lists no labels")
	}
	named := 0
	for _, m := range regexp.MustCompile("`([a-z.]+)`").FindAllStringSubmatch(labels[1], -1) {
		l := "org.opencontainers.image." + strings.TrimPrefix(m[1], "org.opencontainers.image.")
		named++
		if cfg.Labels[l] == "" {
			t.Errorf("no label %s, which docs/kubernetes.md names: %v", l, cfg.Labels)
		}
	}
	if named != 7 {
		t.Errorf("docs/kubernetes.md names %d labels, want the 7 the Containerfiles set", named)
	}
	if got := cfg.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("label org.opencontainers.image.version %q, want the binary's version %q", got, version)
	}
}

// unpack exports a container of image ref (created, never started) and
// unpacks its file system into a directory of the test's.
func unpack(t *testing.T, p podman, ref string) string {
	t.Helper()
	id := p.run(t, "create", ref)
	defer p.run(t, "rm", id)
	archive := filepath.Join(t.TempDir(), "rootfs.tar")
	p.run(t, "export", "-o", archive, id)
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, os.FileMode(h.Mode).Perm())
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode).Perm())
		default:
			t.Fatalf("%s: unexpected entry %s (type %c) in the image", ref, h.Name, h.Typeflag)
		}
		if err == nil {
			err = os.Lchown(path, h.Uid, h.Gid)
		}
		if err == nil {
			err = os.Chmod(path, os.FileMode(h.Mode).Perm())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runAs starts the image's entrypoint and command in rootfs, chrooted,
// as the image's user, with the image's environment and extra.
func runAs(t *testing.T, rootfs string, cfg imageConfig, extra []string) *process {
	t.Helper()
	args := append([]string{"--userspec=" + cfg.User, rootfs}, append(cfg.Entrypoint, cfg.Cmd...)...)
	return start(t, append(append([]string{}, cfg.Env...), extra...), "chroot", args...)
}

// processUID returns the real user id of process pid.
func processUID(t *testing.T, pid int) string {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			return f[1]
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return ""
}

// run runs a command and returns its standard output, failing the test
// if it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

// get returns the status of a GET of url, 0 if it got no answer.
func get(url string) (int, error) {
	c := httpClient()
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
