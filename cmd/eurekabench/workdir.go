package main

import (
	"fmt"
	"io"
	"os"
)

// workDir makes a study's temporary directory, for its builds and its
// servers' logs. With keep it says on out where it is and stays;
// otherwise done removes it.
func workDir(study string, keep bool, out io.Writer) (dir string, done func(), err error) {
	dir, err = os.MkdirTemp("", "eurekabench-"+study+"-")
	if err != nil {
		return "", nil, err
	}
	if keep {
		fmt.Fprintf(out, "eurekabench %s: logs and builds in %s\n", study, dir)
		return dir, func() {}, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
