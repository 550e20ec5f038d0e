package routing

import (
	"crypto/sha256"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/filewatch"
	"github.com/eurekagate/eurekagate/internal/tick"
)

// DefaultRulesInterval is how often a RulesFile checks its file for a
// change, unless told otherwise. A change is applied at the check after
// the one that saw it, if the file has stayed the same meanwhile.
const DefaultRulesInterval = 500 * time.Millisecond

// RulesFileConfig configures a RulesFile.
type RulesFileConfig struct {
	// Path is the rules document, YAML or JSON (see ParseRules).
	// Required.
	Path string
	// Apply puts rules in force: Router.SetRules. It is called with the
	// first rules from NewRulesFile, then from the RulesFile's goroutine
	// each time the file changes and its new document parses. Required.
	Apply func(*Rules)
	// Interval is how often the file is checked. Default
	// DefaultRulesInterval (500ms).
	Interval time.Duration
	// Logger tells of each change: the rules applied (Info), a document
	// refused (Error, with its file:line: reason). Default: none.
	Logger *zap.Logger
	// Limits bound the document (see RulesLimits). Default: their
	// defaults.
	Limits RulesLimits
}

// A RulesFile keeps the rules of a file in force: it reads the file once
// when made, and again whenever it changes, and gives each new document
// that parses to Apply once it holds still.
//
// A changed file is applied only when it has stayed the same (its size,
// modification time and the SHA-256 of its content) from one check to
// the next, so that a file being written in place is not applied while
// a part of it is written, though a part that ends on a line often
// parses: a new document is in force one to two Intervals after it is
// written. A writer that pauses longer than an Interval halfway still has
// its half applied: write the new document to a temporary file and
// rename it over the old one.
//
// A change is a new modification time, a new size, or a different file at
// the path (os.SameFile): a file replaced by a rename, as editors, sed -i
// and Kubernetes' config map volumes replace it, counts even when its time
// and size are the old one's. A file modified less than a few seconds
// before it was read is read again at the next checks, as a filesystem's
// clock may not tell a second write in the same tick from the first; a
// document read again unchanged is not applied again.
//
// A document that does not parse or validate is logged with its file,
// line and reason, and the rules in force stay until the file changes
// again. A path with no file (between the two steps of a replacement) or
// that cannot be read is tried again at the next check, the rules in
// force staying. Nor is an empty file applied once the RulesFile runs,
// since a writer that truncates the file and then writes it leaves one
// for a moment: a document that drops every rule is "apps: {}". Writing
// the new document to a temporary file and renaming it over the old one
// changes the rules in one step.
//
// Start starts the goroutine that checks the file, Close stops it and
// waits for it.
type RulesFile struct {
	cfg   RulesFileConfig
	log   *zap.Logger
	rules atomic.Pointer[Rules]

	// Of the checks, which only the goroutine (or NewRulesFile, before
	// it) makes:
	last    os.FileInfo                    // the file as last settled, nil when it must be read
	racy    bool                           // last is too recent to tell a later write: read again
	sum     [sha256.Size]byte              // the document last settled, applied or refused
	hold    filewatch.HoldStill[fileState] // a change seen at the last check, applied if it holds
	lastErr string                         // the last failure logged, not logged at every check

	mu      sync.Mutex
	started bool
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

// NewRulesFile reads the rules of cfg.Path and gives them to cfg.Apply
// (an empty file: no rules). A file that cannot be read or does not parse
// is refused with a *RulesError ("file:line: reason"), and nothing is
// applied. It starts nothing: Start does.
func NewRulesFile(cfg RulesFileConfig) (*RulesFile, error) {
	if cfg.Path == "" || cfg.Apply == nil {
		return nil, errors.New("routing: RulesFileConfig needs a Path and an Apply")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultRulesInterval
	}
	f := &RulesFile{cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), done: make(chan struct{})}
	f.hold.Same = sameFileState
	if f.log == nil {
		f.log = zap.NewNop()
	}
	now := time.Now()
	fi, err := os.Stat(cfg.Path)
	var data []byte
	if err == nil {
		data, err = cfg.Limits.read(cfg.Path)
	}
	if err != nil {
		return nil, &RulesError{Source: cfg.Path, Reason: err.Error()}
	}
	rules, err := cfg.Limits.Parse(cfg.Path, data)
	if err != nil {
		return nil, err
	}
	f.settle(fileState{fi, sha256.Sum256(data)}, now)
	f.rules.Store(rules)
	cfg.Apply(rules)
	return f, nil
}

// Rules returns the rules last applied.
func (f *RulesFile) Rules() *Rules { return f.rules.Load() }

// Start starts checking the file every Interval, until Close. Calls
// after the first, or after Close, do nothing.
func (f *RulesFile) Start() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started || f.closed {
		return
	}
	f.started = true
	go f.run()
}

// Close stops the checks and waits for the one under way, if any. It
// may be called more than once, and without Start.
func (f *RulesFile) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	started := f.started
	close(f.stop)
	f.mu.Unlock()
	if started {
		<-f.done
	}
	return nil
}

func (f *RulesFile) run() {
	defer close(f.done)
	tick.Every(f.cfg.Interval, f.stop, nil, f.check)
}

// racyWindow: a file modified less than this before it was read may be
// written again without its modification time changing, as filesystems
// keep times to a clock tick (a few milliseconds) or to a second or two.
// Such a file is read again at each check until its time is older.
const racyWindow = 3 * time.Second

// fileState is the file as one check saw it.
type fileState struct {
	fi  os.FileInfo
	sum [sha256.Size]byte
}

// sameFileState reports whether the file is as it was at another check:
// the same file, size, modification time and content.
func sameFileState(s, o fileState) bool {
	return os.SameFile(s.fi, o.fi) && s.fi.Size() == o.fi.Size() && s.fi.ModTime().Equal(o.fi.ModTime()) && s.sum == o.sum
}

// check reads the file again if it changed since it was last settled,
// and applies its rules if they are new, parse, and the file is as it
// was at the previous check.
func (f *RulesFile) check() {
	now := time.Now()
	fi, err := os.Stat(f.cfg.Path)
	if err != nil {
		f.last = nil
		f.hold.Reset() // whatever comes back at the path is read
		f.failed("cannot read the traffic rules file; the rules in force stay, and it is tried again", err)
		return
	}
	if !f.racy && f.last != nil && os.SameFile(fi, f.last) && fi.ModTime().Equal(f.last.ModTime()) && fi.Size() == f.last.Size() {
		f.hold.Reset()
		return
	}
	if fi.Size() == 0 {
		// Most likely truncated by a writer that has yet to write: read
		// once written.
		f.last = nil
		f.hold.Reset()
		f.failed("the traffic rules file is empty; the rules in force stay (a document without rules is \"apps: {}\")", nil)
		return
	}
	data, err := f.cfg.Limits.read(f.cfg.Path)
	if err != nil {
		f.last = nil
		f.hold.Reset()
		f.failed("cannot read the traffic rules file; the rules in force stay, and it is tried again", err)
		return
	}
	f.lastErr = ""
	seen := fileState{fi, sha256.Sum256(data)}
	if seen.sum != f.sum && !f.hold.Held(seen) {
		// New, and maybe still being written: applied if the next check
		// finds it the same.
		return
	}
	f.hold.Reset()
	if !f.settle(seen, now) {
		return // the document last settled, touched or read again
	}
	rules, err := f.cfg.Limits.Parse(f.cfg.Path, data)
	if err != nil {
		f.log.Error("traffic rules refused; the rules in force stay", zap.String("file", f.cfg.Path), zap.Error(err))
		return
	}
	f.rules.Store(rules)
	f.cfg.Apply(rules)
	f.log.Info("traffic rules applied", zap.String("file", f.cfg.Path), zap.Int("apps", len(rules.Apps())))
}

// settle records that the file was read as seen states it (stated
// before the read: a change during the read is seen at the next check)
// at now, and reports whether it is not the document last settled.
func (f *RulesFile) settle(seen fileState, now time.Time) bool {
	f.last = seen.fi
	f.racy = now.Sub(seen.fi.ModTime()) < racyWindow
	if seen.sum == f.sum {
		return false
	}
	f.sum = seen.sum
	return true
}

// failed logs a failure to read the file, once until it changes.
func (f *RulesFile) failed(msg string, err error) {
	key := msg
	if err != nil {
		key = err.Error()
	}
	if key == f.lastErr {
		return
	}
	f.lastErr = key
	fields := []zap.Field{zap.String("file", f.cfg.Path)}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	f.log.Warn(msg, fields...)
}
