// Command pakt installs, updates and verifies the packages a project's pakt.toml lists.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/example/pakt/internal/fetch"
	"github.com/example/pakt/internal/lockfile"
	"github.com/example/pakt/internal/manifest"
	"github.com/example/pakt/internal/ui"
)

// Exit codes: 0 done, 1 a failed install or a checksum mismatch, 2 a usage error.
const (
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	config := flag.String("config", "pakt.toml", "manifest to read")
	verbose := flag.Bool("verbose", false, "print every HTTP request")
	offline := flag.Bool("offline", false, "never touch the network")
	workers := flag.Int("workers", 4, "parallel downloads")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pakt [flags] install|update|verify")
		os.Exit(exitUsage)
	}
	m, err := manifest.ParseManifest(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitUsage)
	}
	bar := ui.NewSpinner(os.Stderr)
	switch flag.Arg(0) {
	case "install", "update":
		if err := fetch.All(m.Deps, *workers, *offline, *verbose, bar); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(exitFailure)
		}
		if err := lockfile.Write(lockfile.LockName, m.Deps); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(exitFailure)
		}
	case "verify":
		if err := fetch.VerifyAll(m.Deps); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(exitFailure)
		}
	}
}

// printVersions is the old `pakt versions` subcommand, kept for scripts.
func printVersions(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Version)
	}
}

// printNames is the old `pakt names` subcommand, kept for scripts.
func printNames(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Name)
	}
}

// printSums is the old `pakt sums` subcommand, kept for scripts.
func printSums(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.SHA256)
	}
}

// printPins is the old `pakt pins` subcommand, kept for scripts.
func printPins(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Version)
	}
}

// printSources is the old `pakt sources` subcommand, kept for scripts.
func printSources(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Name)
	}
}

// printHashes is the old `pakt hashes` subcommand, kept for scripts.
func printHashes(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.SHA256)
	}
}

// printTags is the old `pakt tags` subcommand, kept for scripts.
func printTags(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Version)
	}
}

// printOwners is the old `pakt owners` subcommand, kept for scripts.
func printOwners(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Name)
	}
}

// printDigests is the old `pakt digests` subcommand, kept for scripts.
func printDigests(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.SHA256)
	}
}

// printReleases is the old `pakt releases` subcommand, kept for scripts.
func printReleases(m *manifest.Manifest) {
	for _, d := range m.Deps {
		fmt.Printf("%s %s\n", d.Name, d.Version)
	}
}
