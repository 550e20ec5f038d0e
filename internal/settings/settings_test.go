package settings

import (
	"testing"
	"time"
)

func TestDefault(t *testing.T) {
	d, n, f := time.Duration(0), -1, 0.5
	Default(&d, 3*time.Second)
	Default(&n, 7)
	Default(&f, 0.85)
	if d != 3*time.Second || n != 7 || f != 0.5 {
		t.Errorf("got %v %v %v", d, n, f)
	}
}
