package main

import (
	"fmt"
	"regexp"
	"time"
)

var redisReady = regexp.MustCompile(`Ready to accept connections`)

// startRedis runs redis-server (bin, Debian's) on a free loopback port as
// a cache only: no snapshots (--save ""), no append-only file, dir its
// working directory, its output to dir/redis.log; it returns once Redis
// accepts connections, with its host:port.
func startRedis(bin, dir string) (*node, string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, "", err
	}
	n, err := startNode(dir, "redis", nil, bin, "--port", ports[0], "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err != nil {
		return nil, "", err
	}
	if err := n.await(redisReady, 30*time.Second); err != nil {
		n.stop()
		return nil, "", fmt.Errorf("%v\n%s", err, n.logTail())
	}
	return n, "127.0.0.1:" + ports[0], nil
}
