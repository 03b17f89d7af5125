package manifest

import "testing"

func TestDuplicateNames(t *testing.T) {
	_, err := ParseManifest("../../testdata/duplicate/pakt.toml")
	if err == nil {
		t.Fatal("want an error for a duplicate dependency")
	}
}
