package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// GoBuild runs go build -o out with args (flags, then packages) in dir
// ("" for this process's), env added to this process's environment; its
// error holds go build's output.
func GoBuild(ctx context.Context, dir string, env []string, out string, args ...string) error {
	build := exec.CommandContext(ctx, "go", append([]string{"build", "-o", out}, args...)...)
	build.Dir = dir
	if len(env) > 0 {
		build.Env = append(os.Environ(), env...)
	}
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}
