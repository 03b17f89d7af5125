import io
import os
import tempfile
import unittest
from contextlib import redirect_stdout

from wordstats.cli import main


class CliTest(unittest.TestCase):
    def test_prints_the_word_count(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "text.txt")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("one two three\n")
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(main([path]), 0)
        self.assertEqual(out.getvalue(), "3 words\n")


if __name__ == "__main__":
    unittest.main()
