// Package manifest reads pakt.toml.
package manifest

import (
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
	"golang.org/x/mod/semver"
)

// FileName is the manifest every project keeps at its root.
const FileName = "pakt.toml"

type Dep struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	SHA256  string `toml:"sha256"`
}

type Manifest struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Deps    []Dep  `toml:"deps"`
}

// ParseManifest reads a manifest from disk and fills defaults. It never touches the network.
func ParseManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, m.Validate()
}

// Validate rejects duplicate dependency names and versions that are not semver.
func (m *Manifest) Validate() error {
	seen := map[string]bool{}
	for _, d := range m.Deps {
		if seen[d.Name] {
			return fmt.Errorf("dependency %s listed twice", d.Name)
		}
		seen[d.Name] = true
		if !semver.IsValid("v" + d.Version) {
			return fmt.Errorf("dependency %s: %q is not semver", d.Name, d.Version)
		}
	}
	return nil
}
