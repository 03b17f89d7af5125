// Package cache keeps downloaded archives by content address.
package cache

import (
	"os"
	"path/filepath"
	"time"
)

type Cache struct {
	dir string
}

// DefaultDir is $XDG_CACHE_HOME/pakt.
func DefaultDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "pakt")
}

func (c *Cache) Get(key string) ([]byte, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, key))
	return data, err == nil
}

func (c *Cache) Put(key string, data []byte) error {
	return os.WriteFile(filepath.Join(c.dir, key), data, 0o644)
}

// Evict deletes entries older than maxAge (30 days by default).
func (c *Cache) Evict(maxAge time.Duration) error {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && time.Since(info.ModTime()) > maxAge {
			os.Remove(filepath.Join(c.dir, e.Name()))
		}
	}
	return nil
}
