package readmecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// page is one markdown page of the documentation: the README or a page
// under docs/.
type page struct {
	name   string // relative to the repository's root, as README.md or docs/caddy.md
	blocks []block
	prose  []string // the text outside fenced blocks, a paragraph per entry
}

// block is a fenced block of a page.
type block struct {
	page   string
	line   int    // the line of its opening fence, from 1
	lang   string // the fence's language tag
	body   string
	marker string // the HTML comment on the line before its fence ("" if none), without <!-- -->
}

func (b block) where() string {
	return b.page + ":" + strconv.Itoa(b.line)
}

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// pageNames returns the documentation's pages: README.md and every
// markdown file under docs/.
func pageNames(t *testing.T) []string {
	t.Helper()
	names := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names[1:])
	return names
}

var markerRE = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// readPage reads and splits one page.
func readPage(t *testing.T, name string) page {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	p := page{name: name}
	lines := strings.Split(string(data), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			p.prose = append(p.prose, strings.Join(para, "\n"))
			para = nil
		}
	}
	prev := ""
	for n := 0; n < len(lines); n++ {
		line := lines[n]
		if lang, ok := strings.CutPrefix(line, "```"); ok {
			flush()
			b := block{page: name, line: n + 1, lang: strings.TrimSpace(lang)}
			if m := markerRE.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				b.marker = m[1]
			}
			var body []string
			for n++; n < len(lines) && !strings.HasPrefix(lines[n], "```"); n++ {
				body = append(body, lines[n])
			}
			if n == len(lines) {
				t.Fatalf("%s: the block at line %d is not closed", name, b.line)
			}
			b.body = strings.Join(body, "\n") + "\n"
			p.blocks = append(p.blocks, b)
			prev = ""
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
		} else {
			para = append(para, line)
		}
		prev = line
	}
	flush()
	return p
}

// pages reads every page of the documentation.
func pages(t *testing.T) []page {
	t.Helper()
	var out []page
	for _, name := range pageNames(t) {
		out = append(out, readPage(t, name))
	}
	return out
}

// blocksOf returns the fenced blocks of the given language on every page.
func blocksOf(t *testing.T, lang string) []block {
	t.Helper()
	var out []block
	for _, p := range pages(t) {
		for _, b := range p.blocks {
			if b.lang == lang {
				out = append(out, b)
			}
		}
	}
	return out
}

// The check walks docs/: the pages the README links to exist, and the
// pages under docs/ are all read (the README's own links included).
func TestPagesLinked(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)
	for _, p := range pages(t) {
		for _, text := range p.prose {
			for _, m := range link.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path := filepath.Join(repoRoot, filepath.Dir(p.name), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", p.name, target)
					continue
				}
				if frag := strings.TrimPrefix(m[2], "#"); frag != "" && strings.HasSuffix(target, ".md") {
					rel, _ := filepath.Rel(repoRoot, path)
					if !slices.Contains(anchors(t, filepath.ToSlash(rel)), frag) {
						t.Errorf("%s links to %s#%s, a heading that page does not have", p.name, target, frag)
					}
				}
			}
			for _, m := range regexp.MustCompile(`\]\(#([^)\s]+)\)`).FindAllStringSubmatch(text, -1) {
				if !slices.Contains(anchors(t, p.name), m[1]) {
					t.Errorf("%s links to #%s, a heading it does not have", p.name, m[1])
				}
			}
		}
	}
}

// anchors returns the GitHub anchors of a page's headings.
func anchors(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, text := range readPage(t, name).prose {
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "#") {
				continue
			}
			h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
			var a strings.Builder
			for _, r := range h {
				switch {
				case r == ' ':
					a.WriteByte('-')
				case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
					a.WriteRune(r)
				}
			}
			out = append(out, a.String())
		}
	}
	return out
}
