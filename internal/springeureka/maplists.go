package springeureka

import (
	"fmt"
	"strings"
)

// mapOfLists assigns setting one KEY=V1,V2... per key of the map root,
// whose values are lists (a comma-separated string, or items [0], [1]...),
// the key prefixed with prefix: -remote-region-apps, -auth-apps.
func (s *Settings) mapOfLists(root, setting, prefix string) error {
	for _, e := range s.Conf.Map(root) {
		name := e.Property.Name
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		values, src, _, err := s.Conf.List(name)
		if err != nil {
			return err
		}
		s.Assign = append(s.Assign, Assignment{Setting: setting, Value: prefix + e.Key + "=" + strings.Join(values, ","), From: fmt.Sprintf("%s %s", src, name), Arg: src.Arg != ""})
	}
	return nil
}
