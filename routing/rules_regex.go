package routing

import (
	"regexp"
	"regexp/syntax"
)

// MaxRegexValue is the longest value a regex condition tests: a longer
// header, cookie or query value (a query value as sent, escaped) does not
// match, so the condition does not hold. An RE2 match costs time in
// proportion to the value's length times the expression's size, and a
// client chooses the value: at 8 KB a header costs a regex 20 times a
// short one's time on every request. The values rules test (ids, tenants,
// versions, addresses) are far shorter; query equality has the same
// bound.
const MaxRegexValue = 256

// regexSize returns about how many instructions re compiles to, before
// compiling it: the count Go's regexp/syntax checks against its own
// limit, so that a document's budget is spent before the memory is.
func regexSize(re *syntax.Regexp) int64 {
	var size int64
	switch re.Op {
	case syntax.OpLiteral:
		size = int64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		size = 2 + regexSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		size = 1 + regexSize(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			size += regexSize(sub)
		}
		if re.Op == syntax.OpAlternate {
			size += int64(len(re.Sub)) - 1
		}
	case syntax.OpRepeat:
		sub := regexSize(re.Sub[0])
		switch {
		case re.Max == -1 && re.Min == 0:
			size = 2 + sub
		case re.Max == -1:
			size = 1 + int64(re.Min)*sub
		default:
			size = int64(re.Max)*sub + int64(re.Max-re.Min)
		}
	}
	return max(1, size)
}

// compileRegex compiles a regex condition's expression within budget,
// the instructions left to the document, and returns its size.
func compileRegex(expr string, budget int64) (*regexp.Regexp, int64, error) {
	tree, err := syntax.Parse(expr, syntax.Perl) // regexp.Compile's flags
	if err != nil {
		return nil, 0, err
	}
	size := regexSize(tree)
	if size > budget {
		return nil, size, nil
	}
	re, err := regexp.Compile(expr)
	return re, size, err
}
