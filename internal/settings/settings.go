// Package settings fills in the defaults of configurations: the one rule
// every Config of this module follows, that a setting left at zero (or
// set below it, where only positive values mean something) takes its
// default.
package settings

// Number is what Default fills in: counts, sizes, ratios and durations
// (time.Duration is an int64).
type Number interface {
	~int | ~int64 | ~float64
}

// Default sets *v to def when it is not positive.
func Default[T Number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
