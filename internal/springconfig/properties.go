package springconfig

import (
	"strconv"
	"strings"
)

// readProperties reads a .properties file as java.util.Properties does
// (comments from # or !, key and value split at the first unescaped =, :
// or blank, a line continued by a trailing backslash, \t \n \r \f \uXXXX
// escapes), split into documents at lines "#---" or "!---" as Spring
// Boot does.
func readProperties(file string, data []byte) []*document {
	d := &document{file: file}
	docs := []*document{d}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "#---" || line == "!---" {
			d = &document{file: file}
			docs = append(docs, d)
			continue
		}
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		key, value := splitProperty(line)
		d.add(unescape(key), unescape(value), start)
	}
	return docs
}

// continued reports whether line ends in an odd number of backslashes.
func continued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func splitProperty(line string) (string, string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':', ' ', '\t', '\f':
			key, rest := line[:i], strings.TrimLeft(line[i:], " \t\f")
			if rest != "" && (rest[0] == '=' || rest[0] == ':') && line[i] != '=' && line[i] != ':' {
				rest = rest[1:]
			} else if line[i] == '=' || line[i] == ':' {
				rest = rest[1:]
			}
			return key, strings.TrimLeft(rest, " \t\f")
		}
	}
	return line, ""
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
