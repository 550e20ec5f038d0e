package springconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// location is a place Spring Boot looks for configuration files: a
// directory (application.* in it) or a file.
type location struct {
	path     string // to open
	shown    string // to name in messages
	dir      bool
	optional bool
	name     string // spring.config.name, for a directory
}

// extensions in order of precedence, lowest first: Spring Boot's
// .properties wins over YAML in one location.
var extensions = []string{".yaml", ".yml", ".properties"}

// locations returns where to look, lowest precedence first: the
// directory and its config/ folder, or spring.config.location's list,
// then spring.config.additional-location's.
func locations(dir string, early func(string) (string, bool)) ([]location, error) {
	name := "application"
	if v, ok := early("spring.config.name"); ok && strings.TrimSpace(v) != "" {
		name = strings.TrimSpace(v)
	}
	at := func(p string) string {
		if filepath.IsAbs(p) || dir == "" {
			return p
		}
		return filepath.Join(dir, p)
	}
	var out []location
	if v, ok := early("spring.config.location"); ok {
		locs, err := parseLocations("spring.config.location", v, name, at)
		if err != nil {
			return nil, err
		}
		out = locs
	} else {
		out = []location{
			{path: at("."), shown: "", dir: true, optional: true, name: name},
			{path: at("config"), shown: "config/", dir: true, optional: true, name: name},
		}
	}
	if v, ok := early("spring.config.additional-location"); ok {
		locs, err := parseLocations("spring.config.additional-location", v, name, at)
		if err != nil {
			return nil, err
		}
		out = append(out, locs...)
	}
	return out, nil
}

func parseLocations(setting, v, name string, at func(string) string) ([]location, error) {
	var out []location
	for _, raw := range splitComma(v) {
		l := location{name: name}
		s := raw
		if rest, ok := strings.CutPrefix(s, "optional:"); ok {
			l.optional, s = true, rest
		}
		if strings.HasPrefix(s, "classpath:") {
			return nil, fmt.Errorf("%s: %s: a classpath: location names a Java application's resources; name the file or its directory", setting, raw)
		}
		s = strings.TrimPrefix(s, "file:")
		l.dir = strings.HasSuffix(s, "/")
		l.path, l.shown = at(s), s
		if _, err := os.Stat(l.path); err != nil && !l.optional {
			return nil, fmt.Errorf("%s: %s: %v (prefix it with optional: if it may be absent)", setting, raw, unwrapPath(err))
		}
		out = append(out, l)
	}
	return out, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readAll reads the documents of every location, lowest precedence
// first: the base files for profile "", else that profile's files
// (application-peer1.yml).
func readAll(locs []location, profile string) ([]*document, error) {
	var docs []*document
	for _, l := range locs {
		var files [][2]string // path, shown
		switch {
		case l.dir:
			for _, ext := range extensions {
				f := l.name + ext
				if profile != "" {
					f = l.name + "-" + profile + ext
				}
				files = append(files, [2]string{filepath.Join(l.path, f), l.shown + f})
			}
		case profile == "":
			files = append(files, [2]string{l.path, l.shown})
		default:
			ext := filepath.Ext(l.path)
			variant := func(p string) string { return strings.TrimSuffix(p, ext) + "-" + profile + ext }
			files = append(files, [2]string{variant(l.path), variant(l.shown)})
		}
		for _, f := range files {
			data, err := os.ReadFile(f[0])
			if errors.Is(err, fs.ErrNotExist) && (l.dir || profile != "" || l.optional) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f[1], unwrapPath(err))
			}
			d, err := readFile(f[1], data)
			if err != nil {
				return nil, err
			}
			docs = append(docs, d...)
		}
	}
	return docs, nil
}

// readFile reads a file's documents by its extension.
func readFile(shown string, data []byte) ([]*document, error) {
	switch strings.ToLower(filepath.Ext(shown)) {
	case ".properties":
		return readProperties(shown, data), nil
	case ".yml", ".yaml":
		return readYAML(shown, data)
	}
	return nil, fmt.Errorf("%s: not a .properties, .yml or .yaml file", shown)
}
