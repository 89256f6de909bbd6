"""Native unit tests of the counting rules: python3 -m unittest test_stats"""

import unittest

from stats import Counts, Report, count_lines, language_of


class CountLinesTest(unittest.TestCase):
    def counts(self, name, text):
        _, prefixes, block = language_of(name)
        c = count_lines(text, prefixes, block)
        return (c.code, c.comment, c.blank)

    def test_c_style_comments(self):
        text = "// header\n\nfn main() { // trailing\n    /* one\n       two */\n    x(); /* inline */\n}\n"
        self.assertEqual(self.counts("a.rs", text), (3, 3, 1))

    def test_block_comment_followed_by_code_is_code(self):
        self.assertEqual(self.counts("a.c", "/* a */ int x;\n"), (1, 0, 0))

    def test_hash_comments(self):
        self.assertEqual(self.counts("s.py", "# c\nx = 1  # note\n\n\n"), (1, 1, 2))

    def test_markdown_is_all_text(self):
        self.assertEqual(self.counts("r.md", "# Title\n\nText\n"), (2, 0, 1))

    def test_unknown_extensions(self):
        self.assertIsNone(language_of("data.bin"))
        self.assertIsNone(language_of(".bashrc"))
        self.assertEqual(language_of("X.RS")[0], "Rust")


class ReportTest(unittest.TestCase):
    def test_sorted_by_code_with_total(self):
        r = Report()
        r.add("Python", Counts(1, 10, 2, 1))
        r.add("Rust", Counts(2, 30, 4, 5))
        r.add("Rust", Counts(1, 5, 0, 0))
        lines = r.render().splitlines()
        self.assertEqual(lines[0].split(), ["language", "files", "code", "comment", "blank"])
        self.assertEqual(lines[1].split(), ["Rust", "3", "35", "4", "5"])
        self.assertEqual(lines[2].split(), ["Python", "1", "10", "2", "1"])
        self.assertEqual(lines[3].split(), ["total", "4", "45", "6", "6"])

    def test_empty(self):
        self.assertEqual(Report().render(), "No source files found.")


if __name__ == "__main__":
    unittest.main()
