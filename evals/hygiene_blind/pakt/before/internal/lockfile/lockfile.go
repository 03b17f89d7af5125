// Package lockfile writes pakt.lock.
package lockfile

import (
	"os"
	"sort"

	"github.com/BurntSushi/toml"
	"github.com/example/pakt/internal/manifest"
)

// LockName is the lock file next to the manifest.
const LockName = "pakt.lock"

// Write records the resolved dependencies sorted by name, so the file is deterministic.
func Write(path string, deps []manifest.Dep) error {
	sorted := append([]manifest.Dep(nil), deps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return toml.NewEncoder(f).Encode(map[string]any{"deps": sorted})
}
