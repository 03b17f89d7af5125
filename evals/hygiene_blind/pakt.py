"""pakt: a package manager's command-line client, written in Go."""

from __future__ import annotations

from evals.hygiene_blind.model import Domain, Mem, Store

GO_MOD = """\
module github.com/example/pakt

go 1.22

require (
\tgithub.com/BurntSushi/toml v1.3.2
\tgolang.org/x/mod v0.17.0
)
"""

MAKEFILE = """\
.PHONY: build test lint release

build:
\tgo build -o bin/pakt ./cmd/pakt

test:
\tgo test ./...

lint:
\tgolangci-lint run

release:
\t./scripts/release.sh
"""

GITIGNORE = "bin/\ndist/\n*.test\n"

MAIN_TEMPLATE = """\
// Command pakt installs, updates and verifies the packages a project's pakt.toml lists.
package main

import (
\t"flag"
\t"fmt"
\t"os"

\t"github.com/example/pakt/internal/fetch"
\t"github.com/example/pakt/internal/lockfile"
\t"github.com/example/pakt/internal/manifest"
\t"github.com/example/pakt/internal/ui"
)

// Exit codes: 0 done, 1 a failed install or a checksum mismatch, 2 a usage error.
const (
\texitFailure = 1
\texitUsage   = 2
)

func main() {{
\tconfig := flag.String("config", "pakt.toml", "manifest to read")
\tverbose := flag.Bool("verbose", false, "print every HTTP request")
\toffline := flag.Bool("offline", false, "never touch the network")
\t{jobs} := flag.Int("{jobs}", 4, "parallel downloads")
\tflag.Parse()
\tif flag.NArg() != 1 {{
\t\tfmt.Fprintln(os.Stderr, "usage: pakt [flags] install|update|verify")
\t\tos.Exit(exitUsage)
\t}}
\tm, err := manifest.{load}(*config)
\tif err != nil {{
\t\tfmt.Fprintln(os.Stderr, err)
\t\tos.Exit(exitUsage)
\t}}
\tbar := ui.{bar}(os.Stderr)
\tswitch flag.Arg(0) {{
\tcase "install", "update":
\t\tif err := fetch.All(m.Deps, *{jobs}, *offline, *verbose, bar); err != nil {{
\t\t\tfmt.Fprintln(os.Stderr, err)
\t\t\tos.Exit(exitFailure)
\t\t}}
\t\tif err := lockfile.Write(lockfile.LockName, m.Deps); err != nil {{
\t\t\tfmt.Fprintln(os.Stderr, err)
\t\t\tos.Exit(exitFailure)
\t\t}}
\tcase "verify":
\t\tif err := fetch.VerifyAll(m.Deps); err != nil {{
\t\t\tfmt.Fprintln(os.Stderr, err)
\t\t\tos.Exit(exitFailure)
\t\t}}
\t}}
}}
"""

MAIN_BEFORE_EXTRA = "".join(
    f"""
// print{what.title()} is the old `pakt {what}` subcommand, kept for scripts.
func print{what.title()}(m *manifest.Manifest) {{
\tfor _, d := range m.Deps {{
\t\tfmt.Printf("%s %s\\n", d.Name, d.{field})
\t}}
}}
"""
    for what, field in (
        ("versions", "Version"),
        ("names", "Name"),
        ("sums", "SHA256"),
        ("pins", "Version"),
        ("sources", "Name"),
        ("hashes", "SHA256"),
        ("tags", "Version"),
        ("owners", "Name"),
        ("digests", "SHA256"),
        ("releases", "Version"),
    )
)

MANIFEST_TEMPLATE = """\
// Package manifest reads pakt.toml.
package manifest

import (
\t"fmt"
\t"os"

\t"github.com/BurntSushi/toml"
\t"golang.org/x/mod/semver"
)

// FileName is the manifest every project keeps at its root.
const FileName = "pakt.toml"

type Dep struct {{
\tName    string `toml:"name"`
\tVersion string `toml:"version"`
\tSHA256  string `toml:"sha256"`
}}

type Manifest struct {{
\tName    string `toml:"name"`
\tVersion string `toml:"version"`
\tDeps    []Dep  `toml:"deps"`
}}

// {load} reads a manifest from disk and fills defaults. It never touches the network.
func {load}(path string) (*Manifest, error) {{
\tdata, err := os.ReadFile(path)
\tif err != nil {{
\t\treturn nil, err
\t}}
\tvar m Manifest
\tif err := toml.Unmarshal(data, &m); err != nil {{
\t\treturn nil, fmt.Errorf("%s: %w", path, err)
\t}}
\treturn &m, m.Validate()
}}

// Validate rejects duplicate dependency names and versions that are not semver.
func (m *Manifest) Validate() error {{
\tseen := map[string]bool{{}}
\tfor _, d := range m.Deps {{
\t\tif seen[d.Name] {{
\t\t\treturn fmt.Errorf("dependency %s listed twice", d.Name)
\t\t}}
\t\tseen[d.Name] = true
\t\tif !semver.IsValid("v" + d.Version) {{
\t\t\treturn fmt.Errorf("dependency %s: %q is not semver", d.Name, d.Version)
\t\t}}
\t}}
\treturn nil
}}
"""

FETCH = """\
// Package fetch downloads archives and checks them.
package fetch

import (
\t"context"
\t"crypto/sha256"
\t"encoding/hex"
\t"fmt"
\t"io"
\t"net/http"
\t"os"
\t"time"

\t"github.com/example/pakt/internal/manifest"
\t"github.com/example/pakt/internal/ui"
)

const (
\tDefaultTimeout = 60 * time.Second
\tMaxRedirects   = 5
)

var client = &http.Client{
\tTimeout: DefaultTimeout,
\tCheckRedirect: func(req *http.Request, via []*http.Request) error {
\t\tif len(via) >= MaxRedirects {
\t\t\treturn fmt.Errorf("more than %d redirects", MaxRedirects)
\t\t}
\t\treturn nil
\t},
}

// Download writes url to dest.
func Download(ctx context.Context, url, dest string) error {
\treq, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
\tif err != nil {
\t\treturn err
\t}
\tresp, err := client.Do(req)
\tif err != nil {
\t\treturn err
\t}
\tdefer resp.Body.Close()
\tout, err := os.Create(dest)
\tif err != nil {
\t\treturn err
\t}
\tdefer out.Close()
\t_, err = io.Copy(out, resp.Body)
\treturn err
}

// VerifySHA256 checks an archive against the checksum in the manifest before it is unpacked.
func VerifySHA256(path, want string) error {
\tdata, err := os.ReadFile(path)
\tif err != nil {
\t\treturn err
\t}
\tsum := sha256.Sum256(data)
\tif hex.EncodeToString(sum[:]) != want {
\t\treturn fmt.Errorf("%s: checksum mismatch", path)
\t}
\treturn nil
}

func All(deps []manifest.Dep, jobs int, offline, verbose bool, bar *ui.ProgressBar) error {
\treturn nil
}

func VerifyAll(deps []manifest.Dep) error {
\treturn nil
}
"""

CACHE_TEMPLATE = """\
// Package cache keeps downloaded archives by content address.
package cache

import (
\t"os"
\t"path/filepath"
\t"time"
)

type Cache struct {{
\tdir string
}}

// DefaultDir is $XDG_CACHE_HOME/pakt.
func DefaultDir() string {{
\tbase, err := os.UserCacheDir()
\tif err != nil {{
\t\tbase = os.TempDir()
\t}}
\treturn filepath.Join(base, "pakt")
}}

func (c *Cache) Get(key string) ([]byte, bool) {{
\tdata, err := os.ReadFile(filepath.Join(c.dir, key))
\treturn data, err == nil
}}

func (c *Cache) Put(key string, data []byte) error {{
\treturn os.WriteFile(filepath.Join(c.dir, key), data, 0o644)
}}

// {prune} deletes entries older than maxAge (30 days by default).
func (c *Cache) {prune}(maxAge time.Duration) error {{
\tentries, err := os.ReadDir(c.dir)
\tif err != nil {{
\t\treturn err
\t}}
\tfor _, e := range entries {{
\t\tinfo, err := e.Info()
\t\tif err == nil && time.Since(info.ModTime()) > maxAge {{
\t\t\tos.Remove(filepath.Join(c.dir, e.Name()))
\t\t}}
\t}}
\treturn nil
}}
"""

LOCKFILE = """\
// Package lockfile writes pakt.lock.
package lockfile

import (
\t"os"
\t"sort"

\t"github.com/BurntSushi/toml"
\t"github.com/example/pakt/internal/manifest"
)

// LockName is the lock file next to the manifest.
const LockName = "pakt.lock"

// Write records the resolved dependencies sorted by name, so the file is deterministic.
func Write(path string, deps []manifest.Dep) error {
\tsorted := append([]manifest.Dep(nil), deps...)
\tsort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
\tf, err := os.Create(path)
\tif err != nil {
\t\treturn err
\t}
\tdefer f.Close()
\treturn toml.NewEncoder(f).Encode(map[string]any{"deps": sorted})
}
"""

REGISTRY = """\
// Package registry talks to the package registry's HTTP API.
package registry

import (
\t"net/http"
\t"os"
\t"time"
)

const (
\tDefaultRegistry = "https://registry.pakt.dev"
\tRequestTimeout  = 10 * time.Second
\tUserAgent       = "pakt/1.2"
)

type Client struct {
\tbase  string
\ttoken string
\thttp  *http.Client
}

// NewClient uses PAKT_TOKEN when it is set; anonymous clients get a lower rate limit.
func NewClient(baseURL string) *Client {
\treturn &Client{base: baseURL, token: os.Getenv("PAKT_TOKEN"), http: &http.Client{Timeout: RequestTimeout}}
}
"""

LEGACY = """\
package registry

// LegacySearch queries the v1 search endpoint, which the registry turned off.
func LegacySearch(c *Client, term string) ([]string, error) {
\treturn nil, nil
}
"""

UI_TEMPLATE = """\
// Package ui draws progress on stderr; stdout is kept for machine-readable output.
package ui

import (
\t"fmt"
\t"io"
)

type {bar} struct {{
\tw    io.Writer
\tdone int
}}

func New{bar}(w io.Writer) *{bar} {{
\treturn &{bar}{{w: w}}
}}

func (p *{bar}) Step(name string) {{
\tp.done++
\tfmt.Fprintf(p.w, "\\r[%d] %s", p.done, name)
}}
"""

MANIFEST_TEST_TEMPLATE = """\
package manifest

import "testing"

func TestDuplicateNames(t *testing.T) {{
\t_, err := {load}("../../testdata/duplicate/pakt.toml")
\tif err == nil {{
\t\tt.Fatal("want an error for a duplicate dependency")
\t}}
}}
"""

GORELEASER = """\
project_name: pakt
builds:
  - main: ./cmd/pakt
    goos: [linux, darwin, windows]
    goarch: [amd64, arm64]
archives:
  - format: tar.gz
    format_overrides:
      - goos: windows
        format: zip
"""

RELEASE = """\
#!/bin/sh
# Release from a vX.Y.Z tag: goreleaser builds the archives from the tag.
set -eu
git describe --exact-match --tags HEAD >/dev/null
goreleaser release --clean
"""

RELEASING_DOC = "# Releasing\n\nTag vX.Y.Z on main, then run `make release`.\n"

TESTDATA_TOML = """\
name = "basic"
version = "0.1.0"

[[deps]]
name = "left-pad"
version = "1.3.0"
sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
"""

TESTDATA_LOCK = """\
[[deps]]
name = "left-pad"
version = "1.3.0"
sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
"""

DUPLICATE_TOML = TESTDATA_TOML + '\n[[deps]]\nname = "left-pad"\nversion = "1.4.0"\n'

BEFORE: dict[str, str] = {
    "go.mod": GO_MOD,
    "Makefile": MAKEFILE,
    ".gitignore": GITIGNORE,
    ".goreleaser.yaml": GORELEASER,
    "cmd/pakt/main.go": MAIN_TEMPLATE.format(jobs="workers", load="ParseManifest", bar="NewSpinner")
    + MAIN_BEFORE_EXTRA,
    "internal/manifest/manifest.go": MANIFEST_TEMPLATE.format(load="ParseManifest"),
    "internal/manifest/manifest_test.go": MANIFEST_TEST_TEMPLATE.format(load="ParseManifest"),
    "internal/fetch/fetch.go": FETCH.replace("ui.ProgressBar", "ui.Spinner"),
    "internal/cache/cache.go": CACHE_TEMPLATE.format(prune="Evict"),
    "internal/lockfile/lockfile.go": LOCKFILE,
    "internal/registry/client.go": REGISTRY,
    "internal/registry/legacy.go": LEGACY,
    "internal/ui/progress.go": UI_TEMPLATE.format(bar="Spinner"),
    "scripts/release.sh": RELEASE,
    "docs/RELEASING.md": RELEASING_DOC,
    "testdata/basic/pakt.toml": TESTDATA_TOML,
    "testdata/basic/pakt.lock": TESTDATA_LOCK,
    "testdata/duplicate/pakt.toml": DUPLICATE_TOML,
}

AFTER: dict[str, str | None] = {
    "cmd/pakt/main.go": MAIN_TEMPLATE.format(
        jobs="jobs", load="LoadManifest", bar="NewProgressBar"
    ),
    "internal/manifest/manifest.go": MANIFEST_TEMPLATE.format(load="LoadManifest"),
    "internal/manifest/manifest_test.go": MANIFEST_TEST_TEMPLATE.format(load="LoadManifest"),
    "internal/fetch/fetch.go": FETCH,
    "internal/cache/cache.go": CACHE_TEMPLATE.format(prune="Prune"),
    "internal/registry/legacy.go": None,
    "internal/ui/progress.go": UI_TEMPLATE.format(bar="ProgressBar"),
    "docs/RELEASING.md": None,
}

NOTES: list[tuple[str, str, bool]] = [
    ("objective", "Support the v2 manifest format in pakt install", False),
    ("blockers", "none", False),
    ("pending", "Step 4/7: wire the --jobs flag through fetch.All", True),
    ("pending", "Ship the v2 manifest format before 2027-01-15", False),
    ("pending", "Updated pakt.lock and re-ran go test", True),
    ("pending", "Support --jobs in pakt update as well", False),
]


def lines(code: dict[str, str], path: str) -> int:
    return code[path].count("\n")


def describe(s: Store, code: dict[str, str]) -> None:
    add, plant, clean = s.add, s.plant, s.clean

    # ---------------------------------------------------------------- near-duplicates
    a, b = add(
        Mem(
            "build-binary",
            "reference",
            "Building the binary",
            "Build the binary with `make build`; it writes `bin/pakt`.",
            subject="build command",
            reason="Local testing of the CLI",
            cite=("Makefile",),
            age=60,
        ),
        Mem(
            "make-build-output",
            "reference",
            "What make build produces",
            (
                "`make build` compiles the CLI into `bin/pakt`.",
                "The CLI is compiled into `bin/pakt` by `make build`.",
            ),
            subject="Build command",
            reason="Manual testing",
            cite=("Makefile",),
            age=7,
        ),
    )
    plant("near_duplicate", a, b, note="short paraphrase")

    a, b = add(
        Mem(
            "lockfile-sorted",
            "project",
            "The lock file is sorted",
            "The lock file `pakt.lock` lists dependencies sorted by name so that it is deterministic.",
            subject="lockfile ordering",
            reason="Noisy diffs otherwise",
            cite=("internal/lockfile/lockfile.go",),
            age=55,
        ),
        Mem(
            "lock-deterministic",
            "project",
            "Deterministic lock file",
            (
                "Dependencies in `pakt.lock` are sorted by name, which keeps the file deterministic.",
                "`pakt.lock` is deterministic because its dependencies are sorted by name.",
            ),
            subject="lockfile ordering",
            reason="Reviewable diffs",
            cite=(("internal/lockfile/lockfile.go", None, "Write"),),
            age=10,
        ),
    )
    plant("near_duplicate", a, b, note="reworded")

    a, b = add(
        Mem(
            "download-timeout",
            "project",
            "Download timeout",
            "Downloads time out after 60 seconds (`DefaultTimeout`).",
            subject="download timeout",
            reason="Mirrors can be slow",
            cite=("internal/fetch/fetch.go",),
            age=45,
        ),
        Mem(
            "fetch-timeout-60s",
            "project",
            "Timeout of a download",
            (
                "`Download()` gives up after 60 seconds (`DefaultTimeout`).",
                "A download is abandoned after 60 seconds (`DefaultTimeout`).",
            ),
            subject="download timeout",
            reason="Slow mirrors",
            cite=(("internal/fetch/fetch.go", None, "DefaultTimeout"),),
            age=12,
        ),
    )
    plant("near_duplicate", a, b, note="reworded")

    a, b = add(
        Mem(
            "cache-location",
            "reference",
            "Where the cache lives",
            "The download cache lives under XDG_CACHE_HOME/pakt (see `DefaultDir()`).",
            subject="cache location",
            reason="Users clear it by hand",
            cite=("internal/cache/cache.go",),
            age=70,
        ),
        Mem(
            "default-cache-dir",
            "reference",
            "Default cache directory",
            (
                "`DefaultDir()` puts the cache in XDG_CACHE_HOME/pakt.",
                "By default the cache is XDG_CACHE_HOME/pakt, as `DefaultDir()` says.",
            ),
            subject="cache location",
            reason="Support questions",
            cite=(("internal/cache/cache.go", None, "DefaultDir"),),
            age=15,
        ),
    )
    plant("near_duplicate", a, b, note="reworded")

    a, b = add(
        Mem(
            "checksums-before-unpack",
            "project",
            "Archives are checked before unpacking",
            "Every downloaded archive is checked against its SHA-256 with `VerifySHA256()` before it is unpacked.",
            subject="checksums",
            reason="Tampered mirrors",
            cite=("internal/fetch/fetch.go",),
            age=50,
        ),
        Mem(
            "verify-sha256",
            "project",
            "SHA-256 verification",
            (
                "Archives are verified with `VerifySHA256()` (SHA-256) before unpacking.",
                "`VerifySHA256()` checks each archive's SHA-256 before it gets unpacked.",
            ),
            subject="checksums",
            reason="Supply-chain safety",
            cite=(("internal/fetch/fetch.go", None, "VerifySHA256"),),
            age=5,
        ),
    )
    plant("near_duplicate", a, b, note="reworded")

    a, b, c = add(
        Mem(
            "go-version",
            "project",
            "Go version",
            "pakt builds with Go 1.22.",
            subject="go version",
            reason="Language features",
            cite=("go.mod",),
            age=90,
        ),
        Mem(
            "go-toolchain",
            "project",
            "Go toolchain version",
            ("The module targets Go 1.22 (`go.mod`).", "`go.mod` sets the module to Go 1.22."),
            subject="Go version",
            reason="Generic code needs it",
            cite=("go.mod",),
            age=40,
        ),
        Mem(
            "go-version-directive",
            "project",
            "Where the Go version is set",
            "pakt targets Go 1.22: the go directive in `go.mod` sets it, and `make build` uses that toolchain.",
            subject="go version",
            reason="Language features and CI images depend on it",
            cite=(("go.mod", 3), "Makefile"),
            age=1,
        ),
    )
    plant("near_duplicate", a, c, note="triple; keeper is the most specific and newest")
    plant("near_duplicate", b, c, note="triple; keeper is the most specific and newest")

    # look-alikes
    a, b = add(
        Mem(
            "install-reads-manifest",
            "reference",
            "What install reads",
            "`pakt install` resolves versions from `pakt.toml` and writes `pakt.lock`.",
            subject="install command",
            reason="Users ask what install touches",
            cite=("cmd/pakt/main.go",),
            age=33,
        ),
        Mem(
            "update-rewrites-lock",
            "reference",
            "What update rewrites",
            "`pakt update` rewrites `pakt.lock` with the newest versions `pakt.toml` allows.",
            subject="update command",
            reason="Users ask what update touches",
            cite=("cmd/pakt/main.go",),
            age=33,
        ),
    )
    clean("near_duplicate", a, b, note="two commands, similar words")

    redirect = Mem(
        "redirect-cap",
        "project",
        "Redirect cap",
        "`Download()` follows at most 5 redirects (`MaxRedirects`).",
        subject="download redirects",
        reason="A redirect loop hung installs",
        cite=(("internal/fetch/fetch.go", None, "MaxRedirects"),),
        age=22,
    )
    add(redirect)

    a = Mem(
        "linux-archives",
        "project",
        "Linux release archives",
        "Linux and macOS release archives are tar.gz files built by goreleaser.",
        subject="release archives",
        reason="Install scripts untar them",
        cite=(".goreleaser.yaml",),
        age=26,
    )
    b = Mem(
        "windows-archives",
        "project",
        "Windows release archives",
        "Windows release archives are zip files built by goreleaser.",
        subject="release archives",
        reason="Windows has no tar by default",
        cite=(".goreleaser.yaml",),
        age=6,
        fm={"distinct_from": [{"name": "linux-archives", "reason": "different operating systems"}]},
    )
    add(a, b)
    clean("near_duplicate", a, b, note="distinct_from recorded")
    clean("contradiction", a, b, note="same subject, other platforms")

    old = Mem(
        "cache-never-expires",
        "project",
        "Cache expiry",
        "Cache entries never expire.",
        subject="cache expiry",
        reason="Offline installs",
        cite=("internal/cache/cache.go",),
        batch=1,
        age=130,
        fm={"status": "superseded", "superseded_by": "cache-prune"},
    )
    new = Mem(
        "cache-prune",
        "project",
        "Cache expiry",
        "`Cache.Prune()` deletes cache entries older than 30 days.",
        subject="cache expiry",
        reason="Caches grew past 10 GB",
        cite=(("internal/cache/cache.go", None, "Cache.Prune"),),
        age=20,
        fm={"supersedes": ["cache-never-expires"]},
    )
    add(old, new)
    clean("near_duplicate", old, new, note="superseded")
    clean("contradiction", old, new, note="superseded")

    a, b = add(
        Mem(
            "offline-no-network",
            "project",
            "Offline mode",
            "`--offline` never touches the network.",
            subject="offline mode",
            reason="Air-gapped CI",
            cite=("cmd/pakt/main.go",),
            age=30,
        ),
        Mem(
            "online-checks-registry",
            "project",
            "Without offline mode",
            "Without `--offline`, pakt asks the registry for newer versions.",
            subject="offline mode",
            reason="Users wonder about network use",
            cite=("cmd/pakt/main.go",),
            age=12,
        ),
    )
    clean("near_duplicate", a, b, note="complementary statements")
    clean("contradiction", a, b, note="complementary, not conflicting")

    a, b = add(
        Mem(
            "validate-duplicates",
            "project",
            "Validate rejects duplicates",
            "`Manifest.Validate()` rejects duplicate dependency names.",
            subject="manifest validation",
            reason="Ambiguous installs",
            cite=(("internal/manifest/manifest.go", None, "Manifest.Validate"),),
            age=28,
        ),
        Mem(
            "validate-semver",
            "project",
            "Validate requires semver",
            "`Manifest.Validate()` rejects versions that are not semver.",
            subject="manifest validation",
            reason="Resolution needs ordered versions",
            cite=("internal/manifest/manifest.go",),
            age=28,
        ),
    )
    clean("near_duplicate", a, b, note="same function, two rules")
    clean("contradiction", a, b, note="same subject, two rules")

    # ---------------------------------------------------------------- contradictions
    a, b = add(
        Mem(
            "default-registry",
            "reference",
            "The default registry",
            "The default registry is https://registry.pakt.dev (`DefaultRegistry`).",
            subject="default registry",
            reason="Mirrors override it",
            cite=(("internal/registry/client.go", None, "DefaultRegistry"),),
            age=80,
        ),
        Mem(
            "registry-url",
            "reference",
            "Registry URL",
            (
                "The default registry is https://pkgs.pakt.io.",
                "pakt talks to https://pkgs.pakt.io unless told otherwise.",
            ),
            subject="Default registry",
            reason="Mirrors",
            cite=("internal/registry/client.go",),
            age=9,
        ),
    )
    plant("contradiction", a, b, note="two URLs")

    a, b = add(
        Mem(
            "parallel-downloads",
            "project",
            "Parallel downloads",
            "pakt downloads 4 packages in parallel by default (`--jobs`).",
            subject="parallel downloads",
            reason="Registry limits",
            cite=("cmd/pakt/main.go",),
            age=14,
        ),
        Mem(
            "parallel-downloads-8",
            "project",
            "How many downloads run at once",
            (
                "Downloads run 8 at a time unless `--jobs` says otherwise.",
                "By default pakt runs 8 downloads at once (`--jobs` changes it).",
            ),
            subject="parallel downloads",
            reason="Fast installs",
            cite=("cmd/pakt/main.go",),
            age=3,
        ),
    )
    plant("contradiction", a, b, note="4 vs 8")

    a, b = add(
        Mem(
            "wrap-errors",
            "feedback",
            "Wrap errors",
            "Wrap errors with fmt.Errorf and %w so callers can inspect them.",
            subject="error wrapping",
            reason="errors.Is must work",
            age=75,
        ),
        Mem(
            "no-error-wrapping",
            "feedback",
            "Do not wrap errors",
            (
                "Never wrap errors; return them unchanged.",
                "Return errors as they are: do not wrap them.",
            ),
            subject="error wrapping",
            reason="Shorter messages",
            age=8,
        ),
    )
    plant("contradiction", a, b, note="negation")

    a, b = add(
        Mem(
            "lock-format-toml",
            "project",
            "Lock file format",
            "`pakt.lock` is TOML.",
            subject="lockfile format",
            reason="Humans read it",
            cite=("internal/lockfile/lockfile.go",),
            age=65,
        ),
        Mem(
            "lock-format-json",
            "project",
            "Lock file encoding",
            ("`pakt.lock` is JSON.", "The lock file `pakt.lock` is written as JSON."),
            subject="lockfile format",
            reason="Tools parse it",
            cite=("internal/lockfile/lockfile.go",),
            age=4,
        ),
    )
    plant("contradiction", a, b, note="TOML vs JSON")

    a, b = add(
        Mem(
            "release-goreleaser",
            "project",
            "How releases are built",
            "Releases are built with goreleaser (`.goreleaser.yaml`).",
            subject="release tooling",
            reason="Cross-compiling",
            cite=(".goreleaser.yaml",),
            age=85,
        ),
        Mem(
            "release-plain-build",
            "project",
            "Release build tool",
            (
                "Releases are built by `scripts/release.sh` with plain go build, not goreleaser.",
                "`scripts/release.sh` builds releases with plain go build; goreleaser is not used.",
            ),
            subject="release tooling",
            reason="Fewer tools",
            cite=("scripts/release.sh",),
            age=6,
        ),
    )
    plant("contradiction", a, b, note="goreleaser vs not")

    a, b = add(
        Mem(
            "verbose-http",
            "reference",
            "What --verbose prints",
            "`--verbose` prints every HTTP request.",
            subject="verbose output",
            reason="Debugging mirrors",
            cite=("cmd/pakt/main.go",),
            age=40,
        ),
        Mem(
            "verbose-versions-only",
            "reference",
            "Verbose output",
            (
                "`--verbose` prints only the resolved versions, never HTTP traffic.",
                "With `--verbose`, pakt shows the resolved versions but no HTTP traffic.",
            ),
            subject="verbose output",
            reason="Users asked",
            cite=("cmd/pakt/main.go",),
            age=5,
        ),
    )
    plant("contradiction", a, b, note="every request vs never HTTP traffic")

    # look-alikes
    old = Mem(
        "timeout-30s",
        "project",
        "Download timeout (old)",
        "The download timeout is 30 seconds.",
        subject="download timeout",
        reason="Mirrors",
        cite=("internal/fetch/fetch.go",),
        batch=1,
        age=150,
        fm={"status": "superseded", "superseded_by": "download-timeout"},
    )
    add(old)
    timeout = next(m for m in s.mems if m.name == "download-timeout")
    clean("contradiction", old, timeout, note="superseded")

    a = Mem(
        "registry-timeout",
        "project",
        "Registry request timeout",
        "Registry API requests time out after 10 seconds (`RequestTimeout`).",
        subject="registry timeout",
        reason="Fail fast on metadata",
        cite=(("internal/registry/client.go", None, "RequestTimeout"),),
        age=18,
    )
    add(a)
    clean("contradiction", a, timeout, note="different subjects")
    clean("near_duplicate", a, redirect, note="different facts about fetching")

    a, b = add(
        Mem(
            "exit-usage",
            "reference",
            "Exit code of a usage error",
            "pakt exits with 2 on a usage error.",
            subject="exit codes",
            reason="Scripts branch on it",
            cite=("cmd/pakt/main.go",),
            age=16,
        ),
        Mem(
            "exit-checksum",
            "reference",
            "Exit code of a checksum mismatch",
            "pakt exits with 1 when a checksum does not match.",
            subject="exit codes",
            reason="CI treats it as a failure",
            cite=("cmd/pakt/main.go",),
            age=16,
        ),
    )
    clean("contradiction", a, b, note="same subject, different cases")
    clean("near_duplicate", a, b, note="same subject, different cases")

    # ---------------------------------------------------------------- stale claims
    m = Mem(
        "parse-manifest",
        "project",
        "Reading the manifest",
        (
            "`ParseManifest()` reads `pakt.toml` and fills defaults.",
            "The manifest is read by `ParseManifest()`, which also fills defaults.",
        ),
        subject="manifest reading",
        reason="Defaults live there",
        cite=("internal/manifest/manifest.go",),
        batch=1,
        age=100,
    )
    add(m)
    plant("stale_citation", m, note="Go function renamed")

    m = Mem(
        "ci-workers",
        "feedback",
        "Parallelism on CI",
        ("Use `pakt install --workers 8` on CI machines.", "On CI run `pakt install --workers 8`."),
        subject="ci parallelism",
        reason="CI machines have 8 cores",
        batch=1,
        age=95,
    )
    add(m)
    plant("stale_citation", m, note="flag of the repository's own program removed")

    m = Mem(
        "legacy-search",
        "project",
        "The old search endpoint",
        "Search falls back to the v1 endpoint through `LegacySearch()`.",
        subject="search fallback",
        reason="Old registries",
        cite=("internal/registry/legacy.go",),
        batch=1,
        age=120,
    )
    add(m)
    plant("stale_citation", m, note="file deleted")

    m = Mem(
        "spinner-stderr",
        "project",
        "Progress goes to stderr",
        (
            "`Spinner` draws progress on stderr, never stdout.",
            "Progress is drawn by `Spinner` on stderr so stdout stays clean.",
        ),
        subject="progress output",
        reason="stdout is for machine output",
        cite=("internal/ui/progress.go",),
        batch=1,
        age=90,
    )
    add(m)
    plant("stale_citation", m, note="Go type renamed")

    m = Mem(
        "cache-evict",
        "project",
        "Evicting the cache",
        "Old cache entries are removed by a method on the cache.",
        subject="cache eviction",
        reason="Disk usage",
        cite=(("internal/cache/cache.go", None, "Cache.Evict"),),
        batch=1,
        age=110,
    )
    add(m)
    plant("stale_citation", m, note="cited symbol renamed")

    m = Mem(
        "versions-subcommand",
        "project",
        "The versions subcommand",
        "The old versions subcommand still prints one dependency per line for scripts.",
        subject="versions subcommand",
        reason="Scripts parse it",
        cite=(("cmd/pakt/main.go", 120),),
        batch=1,
        age=115,
    )
    add(m)
    plant("stale_citation", m, note="cited line past the end")

    m = Mem(
        "releasing-doc",
        "reference",
        "Release checklist",
        "The release checklist is `docs/RELEASING.md`.",
        subject="release checklist",
        reason="Releases follow it",
        cite=("scripts/release.sh",),
        batch=1,
        age=125,
    )
    add(m)
    plant("stale_citation", m, note="backticked path deleted")

    # look-alikes
    m = Mem(
        "load-manifest-offline",
        "feedback",
        "Manifest loading stays offline",
        "`LoadManifest()` in `internal/manifest/manifest.go` must not touch the network: `pakt verify` runs offline.",
        subject="manifest loading",
        reason="Air-gapped CI runs verify",
        age=20,
    )
    add(m)
    clean("stale_citation", m, note="Go function by word")
    clean("excluded_content", m, note="location plus a rule")

    m = Mem(
        "binary-location",
        "reference",
        "Where the built binary is",
        "Local builds put the binary at `bin/pakt`, which git ignores.",
        subject="local binary",
        reason="Scripts call it",
        cite=(".gitignore",),
        age=20,
    )
    add(m)
    clean("stale_citation", m, note="git-ignored build output")

    m = Mem(
        "go-test-all",
        "reference",
        "Running the Go tests",
        "`go test ./...` runs every test; `golangci-lint run` is the linter CI uses.",
        subject="go tests",
        reason="Before pushing",
        cite=("Makefile",),
        age=20,
    )
    add(m)
    clean("stale_citation", m, note="commands, not claims")

    m = Mem(
        "jobs-flag",
        "reference",
        "Controlling parallelism",
        "`pakt install --jobs 8` runs eight downloads at a time.",
        subject="jobs flag",
        reason="Big monorepos",
        cite=("cmd/pakt/main.go",),
        age=20,
    )
    add(m)
    clean("stale_citation", m, note="flag present")

    m = Mem(
        "progress-bar",
        "project",
        "The progress bar",
        "`ProgressBar` writes to stderr and counts finished steps.",
        subject="progress bar",
        reason="Piping stdout must stay clean",
        cite=("internal/ui/progress.go",),
        age=20,
    )
    add(m)
    clean("stale_citation", m, note="renamed type under its new name")

    m = Mem(
        "testdata-layout",
        "reference",
        "Test fixtures",
        "Manifest fixtures live in `testdata/`, one folder per case (`testdata/basic/`, `testdata/duplicate/`).",
        subject="test fixtures",
        reason="Adding cases",
        cite=("testdata/basic/pakt.toml",),
        age=20,
    )
    add(m)
    clean("stale_citation", m, note="folders")

    m = Mem(
        "user-agent",
        "reference",
        "User agent",
        "Registry requests send `UserAgent` (pakt/1.2) so the registry can tell client versions apart.",
        subject="user agent",
        reason="Registry analytics",
        cite=("internal/registry/client.go",),
        batch=1,
        age=100,
        record_verified=True,
    )
    add(m)
    clean("stale_citation", m, note="written before the refactor, still true")

    # ---------------------------------------------------------------- save exclusions
    m = Mem(
        "v090-tag",
        "project",
        "When 0.9.0 was tagged",
        (
            "Tagged v0.9.0 on 2026-08-30 from commit 1b2c3d4.",
            "v0.9.0 was tagged from commit 1b2c3d4 on 2026-08-30.",
        ),
        subject="v0.9.0 release",
        reason="History",
        cite=("scripts/release.sh",),
        age=70,
    )
    add(m)
    plant("excluded_content", m, note="git history")

    m = Mem(
        "fix-redirects-merged",
        "project",
        "Redirect fix merged",
        (
            "Branch fix-redirects was merged; it closed #77.",
            "fix-redirects got merged and closed issue #77.",
        ),
        subject="redirect fix",
        reason="History",
        cite=("internal/fetch/fetch.go",),
        age=30,
    )
    add(m)
    plant("excluded_content", m, note="git history: a merged branch")

    m = Mem(
        "iteration-4-status",
        "project",
        "Status of iteration 4",
        (
            "Iteration 4: `go test ./...` passed, 2 lint warnings left.",
            "In iteration 4 `go test ./...` passed with 2 lint warnings remaining.",
        ),
        subject="iteration status",
        reason="Progress",
        cite=("Makefile",),
        age=1,
    )
    add(m)
    plant("excluded_content", m, note="ephemeral task state")

    m = Mem(
        "porting-status",
        "project",
        "Porting status",
        (
            "Finished porting `LoadManifest()` today; `Manifest.Validate()` is next.",
            "Today `LoadManifest()` was ported; next up is `Manifest.Validate()`.",
        ),
        subject="manifest port",
        reason="Progress",
        cite=("internal/manifest/manifest.go",),
        age=1,
    )
    add(m)
    plant("excluded_content", m, note="ephemeral task state")

    m = Mem(
        "fetch-contents",
        "reference",
        "What fetch.go defines",
        (
            "`internal/fetch/fetch.go` defines `Download()` and `VerifySHA256()`.",
            "`Download()` and `VerifySHA256()` are defined in `internal/fetch/fetch.go`.",
        ),
        subject="fetch package contents",
        reason="Navigation",
        cite=("internal/fetch/fetch.go",),
        age=25,
    )
    add(m)
    plant("excluded_content", m, note="derivable from the code")

    m = Mem(
        "main-go-size",
        "reference",
        "Size of main.go",
        f"`cmd/pakt/main.go` has {lines(code, 'cmd/pakt/main.go')} lines.",
        subject="main.go size",
        reason="Background",
        cite=("cmd/pakt/main.go",),
        age=25,
    )
    add(m)
    plant("excluded_content", m, note="derivable: a line count")

    m = Mem(
        "cache-rewrite-message",
        "project",
        "The cache rewrite's commit message",
        "The commit message of the cache rewrite was 'cache: switch to content addressing'.",
        subject="cache rewrite",
        reason="History",
        cite=("internal/cache/cache.go",),
        age=25,
    )
    add(m)
    plant("excluded_content", m, note="git history: a commit message")

    # look-alikes
    m = Mem(
        "tag-before-release",
        "feedback",
        "Only tag merged commits",
        "Release tags are vX.Y.Z and goreleaser builds from the tag, so never tag a commit that is not on the main branch.",
        subject="release tags",
        reason="An unmerged tag shipped a broken build",
        age=40,
    )
    add(m)
    clean("excluded_content", m, note="a rule about tags and commits")

    m = Mem(
        "manifest-v1-promise",
        "project",
        "Manifest compatibility promise",
        "Manifest format v1 stays readable until 2028; breaking changes wait for a major version.",
        subject="manifest compatibility",
        reason="Users pin old manifests",
        cite=("internal/manifest/manifest.go",),
        age=40,
    )
    add(m)
    clean("excluded_content", m, note="a date in a durable promise")

    m = Mem(
        "ci-on-pull-requests",
        "project",
        "When CI runs",
        "The CI matrix runs on every pull request to the main branch and on every release tag.",
        subject="ci triggers",
        reason="Nothing merges untested",
        cite=("Makefile",),
        age=40,
    )
    add(m)
    clean("excluded_content", m, note="mentions pull requests and branches as policy")

    m = Mem(
        "registry-rate-limits",
        "reference",
        "Registry rate limits",
        "The registry allows anonymous clients 60 requests an hour; with PAKT_TOKEN set it allows 5000.",
        subject="registry rate limits",
        reason="Big installs hit the anonymous limit",
        cite=("internal/registry/client.go",),
        age=40,
    )
    add(m)
    clean("excluded_content", m, note="numbers that are not task state")

    m = Mem(
        "install-steps-atomic",
        "project",
        "Installs are all or nothing",
        "An install runs four steps (resolve, download, verify, link); a failed step leaves the previous install untouched.",
        subject="install atomicity",
        reason="Half installs broke builds",
        cite=("cmd/pakt/main.go",),
        age=40,
    )
    add(m)
    clean("excluded_content", m, note="steps of the product, not of a task")

    m = Mem(
        "lockfile-write-rule",
        "feedback",
        "Only lockfile.go writes the lock",
        "Only `internal/lockfile/lockfile.go` may write `pakt.lock`; other packages call it instead of writing the file.",
        subject="lock file writes",
        reason="Two writers produced unsorted locks",
        age=40,
    )
    add(m)
    clean("excluded_content", m, note="names a file, but states a rule")

    # ---------------------------------------------------------------- secrets
    m = Mem(
        "publish-token",
        "reference",
        "Registry publish token",
        "Publish from a laptop with `export PAKT_TOKEN=pkt_9f8e7d6c5b4a39281706f5e4d3c2b1a0` set first.",
        subject="publish token",
        reason="Manual publishing",
        cite=("internal/registry/client.go",),
        age=30,
    )
    add(m)
    plant("secret", m, note="token assignment")

    m = Mem(
        "npm-wrapper-token",
        "reference",
        "npm token for the JS wrapper",
        "The npm wrapper package is published with npm_4kR8vT2qLx9NwZ7pYb3Hc1AmJd5Kf6Lq0Wz3 from the release job.",
        subject="npm publishing",
        reason="The JS wrapper",
        cite=("scripts/release.sh",),
        age=30,
    )
    add(m)
    plant("secret", m, note="npm token")

    m = Mem(
        "gitlab-mirror-token",
        "reference",
        "GitLab mirror access",
        "The GitLab mirror is pushed with glpat-xT4vB8nQ2mK6pL9wR3yZ.",
        subject="gitlab mirror",
        reason="Mirroring",
        cite=("scripts/release.sh",),
        age=30,
    )
    add(m)
    plant("secret", m, note="GitLab token")

    m = Mem(
        "release-signing-key",
        "reference",
        "Release signing key",
        "Release archives are signed with this key:",
        subject="release signing",
        reason="Users verify signatures",
        cite=(".goreleaser.yaml",),
        age=30,
        more="""```
-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49
AwEHoUQDQgAEPR3tU2h8jQwZp9XkV1oN7cYbR4sL2mF6dA0eW3vT8kH5gJ9iU1yQ
-----END EC PRIVATE KEY-----
```""",
    )
    add(m)
    plant("secret", m, note="EC private key")

    m = Mem(
        "signing-passphrase",
        "reference",
        "Passphrase of the signing key",
        (
            "The release signing key's passphrase is orbit-Crane-5521.",
            "Unlock the signing key with the passphrase orbit-Crane-5521.",
        ),
        subject="signing passphrase",
        reason="Releases",
        cite=(".goreleaser.yaml",),
        age=30,
    )
    add(m)
    plant("secret", m, note="passphrase in words")

    m = Mem(
        "upload-endpoint",
        "reference",
        "Where CI uploads archives",
        "CI uploads archives to https://ci-bot:Xk82-vLq9-TzW4@registry.pakt.dev/upload.",
        subject="upload endpoint",
        reason="Releases",
        cite=("scripts/release.sh",),
        age=30,
    )
    add(m)
    plant("secret", m, note="credentials in a URL")

    m = Mem(
        "release-slack-bot",
        "reference",
        "Release announcements",
        "Release announcements are posted by the bot token xoxb-2847561930-4829175036-Vq8Lm3Tz7Kw2Rn5Xp9Yb4Hd6.",
        subject="release announcements",
        reason="Users follow the channel",
        cite=("scripts/release.sh",),
        age=30,
    )
    add(m)
    plant("secret", m, note="Slack bot token")

    # look-alikes
    m = Mem(
        "github-tokens-refused",
        "project",
        "GitHub tokens are refused",
        "GitHub tokens start with ghp_; pakt refuses them and asks for a registry token instead.",
        subject="token kinds",
        reason="Users paste the wrong token",
        cite=("internal/registry/client.go",),
        age=30,
    )
    add(m)
    clean("secret", m, note="a prefix, no token")

    m = Mem(
        "fixture-checksum",
        "reference",
        "Checksum in the fixtures",
        "The fixture dependency's sha256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 (the empty file).",
        subject="fixture checksum",
        reason="Tests rely on it",
        cite=("testdata/basic/pakt.toml",),
        age=30,
    )
    add(m)
    clean("secret", m, note="a checksum")

    m = Mem(
        "tokens-in-keychain",
        "project",
        "Where tokens are stored",
        "Registry tokens are stored in the OS keychain, never in `pakt.toml`.",
        subject="token storage",
        reason="Manifests are committed",
        cite=("internal/registry/client.go",),
        age=30,
    )
    add(m)
    clean("secret", m)

    m = Mem(
        "token-placeholder",
        "reference",
        "Setting a token",
        "Set a token with `export PAKT_TOKEN=<your-token>` to lift the anonymous rate limit.",
        subject="token setup",
        reason="Onboarding",
        cite=("internal/registry/client.go",),
        age=30,
    )
    add(m)
    clean("secret", m, note="placeholder assignment")

    m = Mem(
        "build-ids",
        "reference",
        "Build ids",
        "Build ids are UUIDv7 values such as 01890a5d-ac96-774b-bcce-b302099a8057.",
        subject="build ids",
        reason="Tracing releases",
        cite=(".goreleaser.yaml",),
        age=30,
    )
    add(m)
    clean("secret", m, note="a UUID")

    m = Mem(
        "gosum-pin",
        "reference",
        "Checksum of x/mod",
        "go.sum pins golang.org/x/mod v0.17.0 at h1:zY54UmvipHiNd+KvPbjRd8yEtx4OtnK9ht3qhR3t6wk=; update it only with go get.",
        subject="x/mod checksum",
        reason="Supply-chain review",
        cite=("go.mod",),
        age=30,
    )
    add(m)
    clean("secret", m, note="a module hash")

    m = Mem(
        "test-token-literal",
        "reference",
        "Token in the registry tests",
        "Registry tests authenticate with the literal token test-token, which the fake server accepts.",
        subject="test token",
        reason="Tests without a registry",
        cite=("internal/registry/client.go",),
        age=30,
    )
    add(m)
    clean("secret", m, note="a dummy value")

    # ---------------------------------------------------------------- files that do not load
    bad = {
        "semver-only": (
            "---\ndescription: Versions must be semver\ntype: project\nsubject: versions\n"
            "reason: Ordering\ncitations:\n- path: internal/manifest/manifest.go\n---\n"
            "Dependency versions must be valid semver.\n",
            "no name",
        ),
        "mirror-list": (
            "---\nname: mirror-list\ntype: reference\nsubject: mirrors\nreason: Outages\n"
            "citations:\n- path: internal/registry/client.go\n---\nMirrors are tried in the listed order.\n",
            "no description",
        ),
        "proxy-support": (
            "---\nname: proxy support\ndescription: HTTP proxies\ntype: project\nsubject: proxies\n"
            "reason: Corporate networks\ncitations:\n- path: internal/fetch/fetch.go\n---\n"
            "pakt honours HTTPS_PROXY through net/http.\n",
            "name with a space, not the file name",
        ),
        "checksum-algo": (
            "---\nname: checksum-algo\ndescription: Checksum algorithm\ntype: project\nsubject: checksums\n"
            "reason: Safety\ncitations:\n  - path: internal/fetch/fetch.go\n line: 40\n---\n"
            "Checksums are SHA-256.\n",
            "bad indentation",
        ),
        "empty-frontmatter": (
            "---\n---\nname: empty-frontmatter\ndescription: x\ntype: project\n---\n"
            "pakt never runs install scripts of packages.\n",
            "empty frontmatter",
        ),
        "citation-without-path": (
            "---\nname: citation-without-path\ndescription: Lock file name\ntype: reference\n"
            "subject: lock name\nreason: Tools look for it\ncitations:\n- line: 12\n  symbol: LockName\n---\n"
            "The lock file is called pakt.lock.\n",
            "a citation without a path",
        ),
        "wip-release-notes": (
            "---\nname: wip-release-notes\ndescription: [WIP] release notes format\ntype: project\n"
            "subject: release notes\nreason: Consistency\ncitations:\n- path: scripts/release.sh\n---\n"
            "Release notes list breaking changes first.\n",
            "unquoted [ starts a YAML list",
        ),
    }
    for name, (raw, note) in bad.items():
        m = Mem(name, "project", "", "", raw=raw)
        add(m)
        plant("invalid_file", m, note=note)

    # look-alikes that load
    m = Mem(
        "quoted-wip",
        "project",
        "[WIP] changelog sections",
        "The changelog groups entries under Added, Changed and Fixed.",
        subject="changelog sections",
        reason="Consistency",
        cite=("scripts/release.sh",),
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="[ inside a quoted description")

    m = Mem(
        "crlf-bom",
        "reference",
        "CRLF and a BOM together",
        "Windows builds are cross-compiled on Linux runners.",
        subject="windows builds",
        reason="No Windows runners",
        cite=(".goreleaser.yaml",),
        style="crlf+bom",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="CRLF and BOM")

    m = Mem(
        "verified-record",
        "project",
        "A memory with source and verified maps",
        "pakt never runs a package's install scripts.",
        subject="install scripts",
        reason="Supply-chain safety",
        cite=("cmd/pakt/main.go",),
        age=30,
        fm={"source": {"task": "harden-install", "phase": 2}},
    )
    add(m)
    clean("invalid_file", m, note="source map")

    m = Mem(
        "citation-extra-keys",
        "reference",
        "A citation with a note",
        "The lock file is called `pakt.lock` (`LockName`).",
        subject="lock file name",
        reason="Tools look for it",
        age=30,
        fm={
            "citations": [
                {"path": "internal/lockfile/lockfile.go", "symbol": "LockName", "note": "constant"}
            ]
        },
    )
    add(m)
    clean("invalid_file", m, note="an unknown key inside a citation")

    m = Mem(
        "fence-trailing-space",
        "project",
        "Fences with trailing spaces",
        "The manifest's name field must match the folder name.",
        subject="manifest name",
        reason="Registry publishing",
        cite=("internal/manifest/manifest.go",),
        style="fence-space",
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="trailing spaces after ---")

    m = Mem(
        "dash-description",
        "reference",
        "Release steps - the short version",
        "Tag, push the tag, and let CI run `make release`.",
        subject="release steps",
        reason="Releases",
        cite=("Makefile",),
        age=30,
    )
    add(m)
    clean("invalid_file", m, note="a dash in a plain description")

    # ---------------------------------------------------------------- missing fields
    m = Mem(
        "toml-library",
        "reference",
        "TOML library",
        "Manifests are parsed with BurntSushi/toml.",
        reason="Spec compliance",
        cite=("go.mod",),
        omit=("subject",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="no subject")

    m = Mem(
        "semver-library",
        "reference",
        "Semver library",
        "Versions are compared with golang.org/x/mod/semver.",
        subject="semver library",
        cite=("go.mod",),
        omit=("reason",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="no reason")

    m = Mem(
        "windows-support",
        "project",
        "Windows support",
        "pakt supports Windows 10 and later.",
        subject="windows support",
        reason="Users on Windows",
        age=30,
    )
    add(m)
    plant("missing_field", m, note="project without citations")

    m = Mem(
        "null-citations",
        "reference",
        "Citations left null",
        "The registry API is versioned under /api/v2.",
        subject="registry api version",
        reason="Compatibility",
        fm={"citations": None},
        age=30,
    )
    add(m)
    plant("missing_field", m, note="citations: null")

    m = Mem(
        "heading-only",
        "project",
        "Only an empty body",
        "",
        subject="todo",
        reason="Placeholder",
        cite=("Makefile",),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="empty fact")

    m = Mem(
        "Release-Cadence",
        "reference",
        "Release cadence",
        "A minor release ships every six weeks.",
        omit=("subject", "reason"),
        age=30,
    )
    add(m)
    plant("missing_field", m, note="memory-tool style reference memory")

    # look-alikes
    m = Mem(
        "review-go-errors",
        "feedback",
        "Errors in review",
        "Reviewers check that every returned error is handled or returned.",
        subject="error review",
        reason="Ignored errors hid failed downloads",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "user-go-newcomer",
        "user",
        "The user is new to Go",
        "The person running tasks here is new to Go and wants idioms explained.",
        subject="user go experience",
        reason="Explanations",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "flow-citation-single",
        "project",
        "One citation in flow style",
        "Dependencies with the same name in two manifests are an error.",
        subject="duplicate deps",
        reason="Ambiguity",
        cite=(("internal/manifest/manifest.go", None, "Manifest.Validate"),),
        style="flow",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "yaml-anchors",
        "reference",
        "",
        "",
        raw=(
            "---\nname: yaml-anchors\ndescription: &desc Mirrors share one checksum list\ntype: reference\n"
            "subject: mirror checksums\nreason: *desc\ncitations:\n- path: internal/fetch/fetch.go\n"
            "  symbol: VerifySHA256\n---\nEvery mirror is checked against the same checksums from the lock file.\n"
        ),
    )
    add(m)
    clean("invalid_file", m, note="a YAML anchor and alias")

    m = Mem(
        "testdata-citation",
        "project",
        "A citation into testdata",
        "A manifest that lists one dependency twice is refused with an error naming it.",
        subject="duplicate dependency error",
        reason="Users need the name to fix it",
        cite=(
            "testdata/duplicate/pakt.toml",
            ("internal/manifest/manifest.go", None, "Manifest.Validate"),
        ),
        age=30,
    )
    add(m)
    clean("missing_field", m)

    m = Mem(
        "feedback-go-tests",
        "feedback",
        "Table-driven tests",
        "New Go tests are table-driven, one case per row.",
        subject="go test style",
        reason="Cases are easy to add",
        age=30,
    )
    add(m)
    clean("missing_field", m)

    ordinary(s)


def ordinary(s: Store) -> None:
    """Plain, clean memories (the small index and NOTES.md repositories reuse them)."""
    s.add(
        Mem(
            "verify-offline",
            "project",
            "verify needs no network",
            "`pakt verify` checks the archives against `pakt.lock` without any network access.",
            subject="verify command",
            reason="Air-gapped CI",
            cite=("cmd/pakt/main.go",),
            age=80,
        ),
        Mem(
            "versions-without-v",
            "project",
            "Versions are written without a v",
            "Versions in `pakt.toml` are written without a leading v; `Manifest.Validate()` adds it before the semver check.",
            subject="version spelling",
            reason="Users write v1.2.3 and get an error",
            cite=(("internal/manifest/manifest.go", None, "Manifest.Validate"),),
            age=80,
        ),
        Mem(
            "manifest-file-name",
            "reference",
            "Manifest file name",
            "Every project keeps its manifest at the root as `pakt.toml` (`FileName`).",
            subject="manifest file",
            reason="Discovery",
            cite=(("internal/manifest/manifest.go", None, "FileName"),),
            age=80,
        ),
        Mem(
            "lint-command",
            "reference",
            "Go lint command",
            "CI lints with `make lint`, which runs golangci-lint.",
            subject="go lint",
            reason="CI fails on lint",
            cite=("Makefile",),
            age=80,
        ),
        Mem(
            "cache-content-addressed",
            "project",
            "Cache keys",
            "Cache entries are keyed by the archive's SHA-256, so two versions never collide.",
            subject="cache keys",
            reason="Correctness",
            cite=(("internal/cache/cache.go", None, "Cache.Put"),),
            age=80,
        ),
        Mem(
            "anonymous-client",
            "project",
            "Anonymous registry access",
            "`NewClient()` works without PAKT_TOKEN, with a lower rate limit.",
            subject="anonymous access",
            reason="First-time users",
            cite=(("internal/registry/client.go", None, "NewClient"),),
            age=80,
        ),
    )


DOMAIN = Domain("pakt", BEFORE, AFTER, describe, NOTES)
