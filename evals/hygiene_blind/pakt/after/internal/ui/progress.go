// Package ui draws progress on stderr; stdout is kept for machine-readable output.
package ui

import (
	"fmt"
	"io"
)

type ProgressBar struct {
	w    io.Writer
	done int
}

func NewProgressBar(w io.Writer) *ProgressBar {
	return &ProgressBar{w: w}
}

func (p *ProgressBar) Step(name string) {
	p.done++
	fmt.Fprintf(p.w, "\r[%d] %s", p.done, name)
}
