"""Native unit tests of the logic: python3 -m unittest test_counting"""

import unittest

from counting import count


class CountTest(unittest.TestCase):
    def test_counts_lines_words_and_bytes(self):
        self.assertEqual(count(b""), (0, 0, 0))
        self.assertEqual(count(b"one two\nthree\n"), (2, 3, 14))
        self.assertEqual(count(b"no newline at end"), (1, 4, 17))
        self.assertEqual(count(b"  spaced\t\tout  \n\n"), (2, 2, 17))


if __name__ == "__main__":
    unittest.main()
