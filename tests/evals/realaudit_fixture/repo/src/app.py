"""A tiny exporter used as a fixture: pages fetched and written out."""


def fetch_pages(url: str) -> list[str]:
    return [url]
