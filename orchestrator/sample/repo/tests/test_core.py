import unittest

from wordstats.core import word_count, words


class WordsTest(unittest.TestCase):
    def test_words_are_lower_case_and_in_order(self):
        self.assertEqual(words("The cat sat."), ["the", "cat", "sat"])

    def test_numbers_are_words(self):
        self.assertEqual(word_count("3 cats, 12 dogs"), 4)

    def test_contractions_and_hyphenated_words_are_one_word(self):
        self.assertEqual(word_count("Don't panic: it's fine"), 4)
        self.assertEqual(word_count("A well-known state-of-the-art tool"), 4)


if __name__ == "__main__":
    unittest.main()
