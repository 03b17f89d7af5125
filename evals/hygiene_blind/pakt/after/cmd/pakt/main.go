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
	jobs := flag.Int("jobs", 4, "parallel downloads")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pakt [flags] install|update|verify")
		os.Exit(exitUsage)
	}
	m, err := manifest.LoadManifest(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitUsage)
	}
	bar := ui.NewProgressBar(os.Stderr)
	switch flag.Arg(0) {
	case "install", "update":
		if err := fetch.All(m.Deps, *jobs, *offline, *verbose, bar); err != nil {
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
