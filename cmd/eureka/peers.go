package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/filewatch"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// peerFlags are the flags of the peers that change at run time: the DNS
// names whose records are peers, the DNS server asked, how often, and a
// file of peer URLs re-read on SIGHUP and when it changes.
type peerFlags struct {
	dns, file    string
	fileInterval time.Duration
}

func (pf *peerFlags) register(fs *flag.FlagSet, o *options) {
	fs.StringVar(&pf.dns, "peers-dns", "", "comma-separated DNS names whose records are the other registry nodes, looked up at start, every -peers-resolve-interval and when a connection to a peer fails: http://NAME:PORT/eureka/ makes each A and AAAA record of NAME (a Kubernetes headless Service) a peer at that port, scheme and path; srv://NAME/eureka/ (srv+https:// for https) each SRV record's target and port. This node, among the records, recognises itself and leaves itself out")
	fs.StringVar(&o.registry.Peers.DNSResolver, "dns-resolver", "", "HOST:PORT of the DNS server -peers-dns are looked up at (default: the system's resolver)")
	fs.DurationVar(&o.registry.Peers.ResolveInterval, "peers-resolve-interval", replication.DefaultResolveInterval, "how often -peers-dns are looked up again")
	fs.StringVar(&pf.file, "peers-file", "", "a file of service URLs of the other registry nodes, one a line (# starts a comment), peers besides -peers: re-read on SIGHUP, applied at once, and checked every -peers-file-interval, a change applied once the file has held still for a check; a file with a URL that does not parse is refused with its file:line and the peers in force stay")
	fs.DurationVar(&pf.fileInterval, "peers-file-interval", time.Second, "how often -peers-file is checked for a change (SIGHUP applies one at once)")
}

// apply checks the flags and reads the peers file into o.
func (pf *peerFlags) apply(fs *flag.FlagSet, o *options) error {
	pc := &o.registry.Peers
	pc.PeersDNS = splitList(pf.dns)
	for _, raw := range pc.PeersDNS {
		if err := replication.CheckDNSName(raw); err != nil {
			return fmt.Errorf("-peers-dns: %w", err)
		}
	}
	if len(pc.PeersDNS) == 0 {
		var stray []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "dns-resolver" || f.Name == "peers-resolve-interval" {
				stray = append(stray, "-"+f.Name)
			}
		})
		if len(stray) > 0 {
			return fmt.Errorf("%s set without -peers-dns: they apply to the peers' DNS names", strings.Join(stray, ", "))
		}
	}
	if r := pc.DNSResolver; r != "" {
		if host, port, err := net.SplitHostPort(r); err != nil || host == "" || port == "" {
			return fmt.Errorf("-dns-resolver %q: give the DNS server as HOST:PORT, such as 10.96.0.10:53", r)
		}
	}
	if pc.ResolveInterval <= 0 {
		return fmt.Errorf("-peers-resolve-interval %v: give a positive duration, such as 30s", pc.ResolveInterval)
	}
	if pf.fileInterval <= 0 {
		return fmt.Errorf("-peers-file-interval %v: give a positive duration, such as 1s", pf.fileInterval)
	}
	if pf.file == "" {
		var stray error
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "peers-file-interval" {
				stray = fmt.Errorf("-peers-file-interval set without -peers-file: it applies to the peers file")
			}
		})
		return stray
	}
	data, err := os.ReadFile(pf.file)
	if err != nil {
		return fmt.Errorf("-peers-file: %w", err)
	}
	urls, err := parsePeersFile(pf.file, data)
	if err != nil {
		return fmt.Errorf("-peers-file: %w", err)
	}
	o.peersFile = &peersFile{path: pf.file, interval: pf.fileInterval, fixed: pc.Peers, dns: pc.PeersDNS, applied: string(data)}
	pc.Peers = append(append([]string(nil), pc.Peers...), urls...)
	o.registry.PeersAlways = true
	return nil
}

// parsePeersFile reads a peers file: a service URL a line (or several,
// comma-separated), blank lines and # comments skipped; a URL that does
// not parse is refused as file:line: reason.
func parsePeersFile(path string, data []byte) ([]string, error) {
	var urls []string
	for n, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, u := range splitList(line) {
			if err := checkURL("peer URL", u); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
			}
			urls = append(urls, u)
		}
	}
	return urls, nil
}

// peersFile is -peers-file and what its peers join: -peers and
// -peers-dns, which stay.
type peersFile struct {
	path       string
	interval   time.Duration // -peers-file-interval
	fixed, dns []string
	applied    string // the content in force, or last refused
}

// peersReloader applies the peers file's changes to the Peers: at once on
// SIGHUP, and once a change has held still for a check.
type peersReloader struct {
	f       *peersFile
	peers   *replication.Peers
	log     *zap.Logger
	hold    filewatch.HoldStill[string] // a change seen at the last check
	lastErr string
	hup     chan os.Signal
	stop    chan struct{}
	done    chan struct{}
}

// newPeersHold is the peers file's hold-still check: the contents
// compared.
func newPeersHold() filewatch.HoldStill[string] {
	return filewatch.HoldStill[string]{Same: func(a, b string) bool { return a == b }}
}

// peersFileOption re-reads -peers-file while the application runs.
func peersFileOption(opts *options) fx.Option {
	if opts.peersFile == nil {
		return fx.Options()
	}
	return fx.Invoke(func(lc fx.Lifecycle, peers *replication.Peers, log *zap.Logger) {
		r := &peersReloader{f: opts.peersFile, peers: peers, log: log.Named("peers-file"), hold: newPeersHold(),
			hup: make(chan os.Signal, 1), stop: make(chan struct{}), done: make(chan struct{})}
		lc.Append(fx.StartStopHook(r.start, r.close))
	})
}

func (r *peersReloader) start() {
	signal.Notify(r.hup, syscall.SIGHUP)
	go r.run()
}

func (r *peersReloader) close() {
	signal.Stop(r.hup)
	close(r.stop)
	<-r.done
}

func (r *peersReloader) run() {
	defer close(r.done)
	t := time.NewTicker(r.f.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-r.hup:
			r.check(true)
		case <-t.C:
			r.check(false)
		}
	}
}

// check reads the file and applies it if it changed: at once when now
// (SIGHUP), else once two checks find the same change, so that a file
// written in place is not applied half written.
func (r *peersReloader) check(now bool) {
	data, err := os.ReadFile(r.f.path)
	if err != nil {
		r.fail("the peers file cannot be read; the peers in force stay", err)
		return
	}
	s := string(data)
	if s == r.f.applied {
		r.hold.Reset()
		return
	}
	if !now && !r.hold.Held(s) {
		return
	}
	r.hold.Reset()
	r.f.applied = s
	urls, err := parsePeersFile(r.f.path, data)
	if err == nil {
		err = r.peers.SetPeers(append(append([]string(nil), r.f.fixed...), urls...), r.f.dns)
	}
	if err != nil {
		r.fail("the peers file is refused; the peers in force stay", err)
		return
	}
	r.lastErr = ""
	r.log.Info("peers file applied", zap.String("file", r.f.path), zap.Strings("peers", urls))
}

// fail logs err unless it is the one logged last.
func (r *peersReloader) fail(msg string, err error) {
	if err.Error() != r.lastErr {
		r.lastErr = err.Error()
		r.log.Error(msg, zap.Error(err))
	}
}
