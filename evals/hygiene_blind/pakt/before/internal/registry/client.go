// Package registry talks to the package registry's HTTP API.
package registry

import (
	"net/http"
	"os"
	"time"
)

const (
	DefaultRegistry = "https://registry.pakt.dev"
	RequestTimeout  = 10 * time.Second
	UserAgent       = "pakt/1.2"
)

type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient uses PAKT_TOKEN when it is set; anonymous clients get a lower rate limit.
func NewClient(baseURL string) *Client {
	return &Client{base: baseURL, token: os.Getenv("PAKT_TOKEN"), http: &http.Client{Timeout: RequestTimeout}}
}
