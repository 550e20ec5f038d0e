// Command eurekabench measures the registry server over loopback and prints,
// in one run:
//
//   - heartbeats (PUT apps/{app}/{id}) per second against our fasthttp server,
//     beside a bare fasthttp server that answers every request 200 with an
//     empty body: the ceiling for this machine and load generator;
//   - registrations per second;
//   - full fetches (GET apps, JSON) per second at -instances instances, and
//     how many times the registry was serialized while they ran;
//   - heap per registered instance at 100,000 instances;
//   - requests per second through the Caddy gateway (eureka_gateway, with
//     the eureka upstream source), beside the same Caddy proxying to the
//     same backend through a static upstream, and how many requests after
//     a registration the new instance takes to become routable;
//   - registrations on one node of a three-node cluster, replicated to the
//     other two: the time until all three agree, and the batches sent.
//
// Both servers and the load generator share the machine, so the figures
// are comparable with each other, not with other machines.
//
//	go run ./cmd/eurekabench -duration 5s
//
// With a command it runs one study instead:
//
//	go run ./cmd/eurekabench scale     # cost per change at scale: big apps, eviction, churn, slow readers, VIPs, memory
//	go run ./cmd/eurekabench push      # how fast a change reaches watching clients, and what a fleet of them costs
//	go run ./cmd/eurekabench fetch     # a full fetch of 10,000 instances by discovery.Client and by hudl/fargo
//	go run ./cmd/eurekabench authflood # authenticated heartbeats while one client floods wrong passwords
//	go run ./cmd/eurekabench gateway   # requests per second through the gateways, nginx and Caddy, each in a process of its own
//	go run ./cmd/eurekabench regions   # a region fail-over through the gateway under wrk load
//	go run ./cmd/eurekabench million   # a million instances on one node: the first full fetches, deltas, heartbeats, memory
//	go run ./cmd/eurekabench cluster   # three nodes: a mass registration on one until all hold it, heartbeats, a node killed and restarted
//	go run ./cmd/eurekabench xds       # grpc-go's xDS client following registrations and cancels; one change's cost at 100,000 instances
//	go run ./cmd/eurekabench java      # beside the Java Eureka Server and Spring Cloud Gateway, in one run
//	go run ./cmd/eurekabench ratelimit # a flood over a rate limit: ours beside Spring Cloud Gateway's RequestRateLimiter on Redis
//	go run ./cmd/eurekabench report    # a table of docs/performance.md from the records of runs (-json)
//
// Each command's flags follow its name (go run ./cmd/eurekabench gateway -h).
//
// The files: main.go runs the commands; summary.go is the run without a
// command; gateway.go, push.go, scale.go, fetch.go, authflood.go,
// million*.go, cluster*.go, regions.go, java*.go and ratelimit*.go are the
// studies;
// record.go is the record every command writes with -json, phase.go the
// one meter of a phase (wall time, CPU, the servers' memory), report.go
// and milliontable.go the tables eurekabench report renders from
// records; load.go is the load generator they all use, proc.go what they
// read of other processes in /proc, child.go how they run this binary
// again to put a server in a process of its own, node.go a server
// process with a log of its own (both over internal/proc), stopping.go
// how a study stops its servers on the way out, caddy.go Caddy in this
// process, listen.go the loopback ports.
//
// Every command takes -json FILE, which writes its results as a record
// beside the report it prints; go run ./cmd/eurekabench report -table
// million -json FILE renders docs/performance.md's million table from
// records.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
)

// command is one way to run eurekabench. setup defines the command's flags
// on fs and returns what runs it, which dispatch calls once they are
// parsed; it writes its report to out and its figures and phases to rec,
// which -json writes out.
type command struct {
	name  string // the first argument; "" for the summary, run without one
	about string
	setup func(fs *flag.FlagSet) (run func(out io.Writer, rec *record) error)
}

// commands are every command, the summary first.
var commands = []command{
	{"", "the summary: heartbeats, registrations, full fetches, heap, the Caddy gateway and replication", summaryCommand},
	{"scale", "cost per change at scale: big apps, eviction, churn, slow readers, VIPs, memory", scaleCommand},
	{"push", "how fast a change reaches watching clients, and what a fleet of them costs", pushCommand},
	{"fetch", "a full fetch of 10,000 instances by discovery.Client and by hudl/fargo", fetchCommand},
	{"authflood", "authenticated heartbeats while one client floods wrong passwords", authFloodCommand},
	{"gateway", "requests per second through the gateways, nginx and Caddy, each in a process of its own", gatewayCommand},
	{"regions", "a region fail-over through the gateway under wrk load: every local instance cancelled, then registered again", regionsCommand},
	{"million", "a million instances on one node: 20 first full fetches, deltas under changes, heartbeats throughout, memory", millionCommand},
	{"cluster", "three nodes in processes of their own: a mass registration on one, until every node holds it and answers it whole, heartbeats over the three, one node killed and restarted, memory", clusterCommand},
	{"java", "beside the Java Eureka Server and Spring Cloud Gateway: heartbeats, registrations, fetches, memory, propagation, clusters, gateways", javaCommand},
	{"ratelimit", "a flood over a rate limit: our gateway beside Spring Cloud Gateway's RequestRateLimiter on Redis, the same limit, backend and load: accepted rate's error, answers/s, p99, CPU", rateLimitCommand},
	{"xds", "through grpc-go's xDS client: registration to first RPC and cancel to last RPC; one change's bytes and CPU at 10,000 and 100,000 instances", xdsCommand},
	{"report", "a table of docs/performance.md rendered from the records of runs (-json)", reportCommand},
	{"push-server", "internal: the push study's registry, in a process of its own", pushServerCommand},
}

func main() { os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr)) }

// dispatch runs the command that args name (the summary when the first
// argument is a flag, or there is none) with the rest of args as its
// flags, and returns the exit code: 0; 1 when the command failed, which
// it says on stderr as "eurekabench <command>: <error>"; 2 when the
// command line was wrong.
func dispatch(args []string, stdout, stderr io.Writer) int {
	c := commands[0]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		i := 1
		for i < len(commands) && commands[i].name != args[0] {
			i++
		}
		if i == len(commands) {
			fmt.Fprintf(stderr, "eurekabench: no command %q\n\n", args[0])
			listCommands(stderr)
			return 2
		}
		c, args = commands[i], args[1:]
	}
	fs, run, jsonPath := c.flags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2 // the flag package has said why
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2
	}
	rec := newRecord(cmp.Or(c.name, "summary"), args)
	end := meter{rec: rec}.phase("the run")
	err := run(stdout, rec)
	if err == nil && *jsonPath != "" {
		end()
		err = rec.writeTo(*jsonPath, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 1
	}
	return 0
}

// flags defines c's flags, with usage on stderr, and -json for the
// record unless c defines it (cluster writes a record of its own shape,
// report reads records); it returns them, what runs c, and where -json
// says the record goes ("" for nowhere).
func (c command) flags(stderr io.Writer) (fs *flag.FlagSet, run func(io.Writer, *record) error, jsonPath *string) {
	title := strings.TrimSpace("eurekabench " + c.name)
	fs = flag.NewFlagSet(title, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		if c.name == "" {
			fmt.Fprintf(stderr, "usage: eurekabench [command] [flags]\n\nwithout a command, %s; its flags:\n\n", c.about)
			fs.PrintDefaults()
			fmt.Fprintln(stderr)
			listCommands(stderr)
			return
		}
		fmt.Fprintf(stderr, "usage: %s [flags]: %s\n\n", title, c.about)
		fs.PrintDefaults()
	}
	run = c.setup(fs)
	jsonPath = new(string)
	if fs.Lookup("json") == nil {
		fs.StringVar(jsonPath, "json", "", `write the results as a record, JSON, to this file ("-": to stdout, after the report); eurekabench report renders tables from it`)
	}
	return fs, run, jsonPath
}

// listCommands lists the commands.
func listCommands(w io.Writer) {
	fmt.Fprintln(w, "commands (each with its own flags: eurekabench <command> -h):")
	for _, c := range commands[1:] {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.about)
	}
}

// serveProfiled says "ready" on out and serves until ctx is done, with a
// CPU profile of the process to profile while it serves, if named (a
// server role's -cpuprofile).
func serveProfiled(ctx context.Context, profile string, out io.Writer) error {
	if profile != "" {
		stop, err := startCPUProfile(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	fmt.Fprintln(out, "ready")
	<-ctx.Done()
	return nil
}

// startCPUProfile writes a CPU profile of this process to path until stop
// is called (the commands' -cpuprofile).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
