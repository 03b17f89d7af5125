// Package ui draws progress on stderr; stdout is kept for machine-readable output.
package ui

import (
	"fmt"
	"io"
)

type Spinner struct {
	w    io.Writer
	done int
}

func NewSpinner(w io.Writer) *Spinner {
	return &Spinner{w: w}
}

func (p *Spinner) Step(name string) {
	p.done++
	fmt.Fprintf(p.w, "\r[%d] %s", p.done, name)
}
