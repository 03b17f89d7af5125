"""The blind labelled set for the memory audit: see generate.py."""
