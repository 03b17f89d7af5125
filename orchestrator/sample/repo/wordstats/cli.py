"""The command line: python -m wordstats FILE."""

import argparse
import sys

from wordstats.core import word_count


def main(argv=None):
    parser = argparse.ArgumentParser(prog="wordstats", description="Count the words of a file.")
    parser.add_argument("file", help="a UTF-8 text file")
    args = parser.parse_args(argv)
    with open(args.file, encoding="utf-8") as fh:
        text = fh.read()
    sys.stdout.write(f"{word_count(text)} words\n")
    return 0
