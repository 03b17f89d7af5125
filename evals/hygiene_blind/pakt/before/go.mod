module github.com/example/pakt

go 1.22

require (
	github.com/BurntSushi/toml v1.3.2
	golang.org/x/mod v0.17.0
)
