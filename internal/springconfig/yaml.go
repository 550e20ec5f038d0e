package springconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// readYAML splits a YAML file into its documents and flattens each into
// properties as Spring Boot does: nested keys joined by dots, a list's
// items as name[0], name[1], each scalar with its line.
func readYAML(file string, data []byte) ([]*document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*document
	for {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		d := &document{file: file}
		if len(root.Content) > 0 {
			if err := flatten(d, "", root.Content[0]); err != nil {
				return nil, err
			}
		}
		docs = append(docs, d)
	}
}

func flatten(d *document, prefix string, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s:%d: a key is a %s; Spring's keys are plain names", d.file, k.Line, kindName(k.Kind))
			}
			name := k.Value
			if prefix != "" {
				name = prefix + "." + name
			}
			v := n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				d.add(name, "", k.Line)
				continue
			}
			if err := flatten(d, name, v); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := flatten(d, prefix+"["+strconv.Itoa(i)+"]", item); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if prefix == "" {
			return fmt.Errorf("%s:%d: the document is a bare value; an application.yml is a map of names", d.file, n.Line)
		}
		d.add(prefix, n.Value, n.Line)
	case yaml.AliasNode:
		// yaml.v3 would expand them: a few aliased lines can make an
		// unbounded document.
		return fmt.Errorf("%s:%d: %s: YAML aliases are not read here; write the value out", d.file, n.Line, prefix)
	}
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}
