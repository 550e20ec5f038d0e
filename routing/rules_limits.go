package routing

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/eurekagate/eurekagate/internal/settings"
)

// The defaults of RulesLimits: one per setting, the same for Caddy's
// eureka_gateway and eureka upstream source, cmd/eureka and the Go API.
const (
	// DefaultRulesMaxBytes is the largest rules document read: 256 KiB,
	// room for a thousand rules with long conditions. The YAML parser
	// holds up to about 100 bytes of parse tree per byte of a document,
	// so the bound keeps a document's reading within some 25 MB.
	DefaultRulesMaxBytes = 256 << 10
	// DefaultRulesMaxRules is the most rules a document holds, all apps
	// together: a request is tested against its app's rules in turn.
	DefaultRulesMaxRules = 1000
	// DefaultRulesMaxRegexSize is the most instructions the regular
	// expressions of a document add up to once compiled (as Go's
	// regexp/syntax counts them: a repetition counts its body once per
	// repeat, [a-z]{1,64}@example\.com is 140). A match costs up to
	// the value's length (at most MaxRegexValue) times its program's
	// size, and each instruction some 40 bytes held: at 10,000, under a
	// megabyte, and a few milliseconds for a request that meets every
	// regex at its worst.
	DefaultRulesMaxRegexSize = 10_000
	// DefaultRulesMaxEcho is the longest piece of a document (a key, a
	// value, a parser's message) that a refusal quotes; a longer one is
	// cut, and the refusal says how long it was.
	DefaultRulesMaxEcho = 80
)

// RulesLimits bound what a rules document may cost to read and to hold:
// a document past one of them is refused ("file:line: key: reason") and
// the rules in force stay. The zero value of each field is its default.
// YAML aliases (*name) are refused whatever the limits, as an alias can
// make a small document a huge one.
type RulesLimits struct {
	// MaxBytes is the largest document, in bytes. Default 256 KiB.
	MaxBytes int
	// MaxRules is the most rules in a document, all apps together.
	// Default 1000.
	MaxRules int
	// MaxRegexSize is the most instructions the document's regular
	// expressions add up to once compiled. Default 10,000.
	MaxRegexSize int
	// MaxEcho is the longest piece of the document a refusal quotes, in
	// bytes. Default 80.
	MaxEcho int
	// Shared are the shared limits' Redis (NewSharedLimits): without it
	// a limit with shared: true is refused, naming the settings that
	// give it (cmd/eureka's -gateway-redis, Caddy's eureka app's redis).
	// Default: none.
	Shared *SharedLimits
}

// WithDefaults returns l with the defaults of its settings filled in.
func (l RulesLimits) WithDefaults() RulesLimits {
	settings.Default(&l.MaxBytes, DefaultRulesMaxBytes)
	settings.Default(&l.MaxRules, DefaultRulesMaxRules)
	settings.Default(&l.MaxRegexSize, DefaultRulesMaxRegexSize)
	settings.Default(&l.MaxEcho, DefaultRulesMaxEcho)
	return l
}

// Load reads and parses the rules document at path within l (see
// ParseRules). A file larger than MaxBytes is refused after reading
// MaxBytes+1 bytes of it.
func (l RulesLimits) Load(path string) (*Rules, error) {
	data, err := l.read(path)
	if err != nil {
		return nil, &RulesError{Source: path, Reason: err.Error()}
	}
	return l.Parse(path, data)
}

// read reads at most MaxBytes+1 bytes of the file at path: enough for
// Parse to refuse a larger one.
func (l RulesLimits) read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(l.WithDefaults().MaxBytes)+1))
}

// tooLarge refuses a document over MaxBytes, at the line where it
// crosses the limit.
func (l RulesLimits) tooLarge(source string, data []byte) error {
	line := 1
	for _, c := range data[:l.MaxBytes] {
		if c == '\n' {
			line++
		}
	}
	return &RulesError{Source: source, Line: line,
		Reason: fmt.Sprintf("the document is larger than %d bytes, the limit on a rules document's size", l.MaxBytes)}
}

// echo returns s to quote in a refusal: cut to MaxEcho bytes (on a
// character's boundary), saying how long it was.
func (l RulesLimits) echo(s string) string {
	if len(s) <= l.MaxEcho {
		return s
	}
	n := l.MaxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:n], len(s))
}
