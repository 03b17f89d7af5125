package registry

// LegacySearch queries the v1 search endpoint, which the registry turned off.
func LegacySearch(c *Client, term string) ([]string, error) {
	return nil, nil
}
