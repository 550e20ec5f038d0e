package routing

import (
	"fmt"

	"github.com/eurekagate/eurekagate/balancer"
)

// An Answer is what a gateway answers in place of an instance: Status,
// with Reason, a line of plain text that names the application as the
// client spelled it.
type Answer struct {
	Status int
	Reason string
}

// unavailable is the answer for an application without UP instances,
// saying whether it is registered at all.
func unavailable(registered bool, name []byte) Answer {
	if registered {
		return Answer{503, fmt.Sprintf("application %q has no UP instance\n", string(name))}
	}
	return Answer{503, fmt.Sprintf("no application %q is registered\n", string(name))}
}

func unhealthy(name []byte) Answer {
	return Answer{503, fmt.Sprintf("application %q has no instance passing its health check\n", string(name))}
}

func noPort(name []byte) Answer {
	return Answer{503, fmt.Sprintf("application %q has no instance with an enabled port\n", string(name))}
}

// Failed is the answer once the instances failed a request for good: 504
// after a timeout, else 502.
func Failed[T text](name T, f balancer.Failure) Answer {
	if f == balancer.TimedOut {
		return Answer{504, fmt.Sprintf("application %q: the instance did not answer in time\n", string(name))}
	}
	return Answer{502, fmt.Sprintf("application %q: the instance failed to answer\n", string(name))}
}

// Busy is the answer when every connection to the instance is taken and
// none came free in time.
func Busy[T text](name T) Answer {
	return Answer{503, fmt.Sprintf("application %q: every connection to the instance is busy\n", string(name))}
}

// TooLarge is the answer to a request whose body is over limit bytes.
func TooLarge(limit int64) Answer {
	return Answer{413, fmt.Sprintf("request body larger than %d bytes\n", limit)}
}

// Resendable reports whether a request may be sent twice, to another
// instance after one may have acted on it: its method is idempotent
// (balancer.Idempotent: GET, HEAD, OPTIONS, TRACE, PUT, DELETE) and its
// body is none or held in memory (replayable; a gateway holds bodies of at
// most MaxReplayBody bytes).
func Resendable[T text](method T, replayable bool) bool {
	return replayable && balancer.Idempotent(method)
}

// Incomplete is the answer to a request whose client stopped sending its
// body before its end.
func Incomplete() Answer { return Answer{400, "incomplete request body\n"} }

// emptySubset is the answer when the subset a request goes to has no
// instance that can take it.
func emptySubset(name []byte, sub *Subset) Answer {
	return Answer{503, fmt.Sprintf("application %q has no UP instance in subset %s\n", string(name), sub.Label())}
}
