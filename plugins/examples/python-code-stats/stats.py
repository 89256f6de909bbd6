"""Line statistics for source files: code, comment and blank lines per language.

Plain Python with no component imports, so the unit tests run natively
(python3 -m unittest test_stats)."""

from dataclasses import dataclass, field

# extension -> (language, line comment prefixes, block comment delimiters)
C_STYLE = (("//",), ("/*", "*/"))
HASH = (("#",), None)
LANGUAGES: dict[str, tuple[str, tuple[str, ...], tuple[str, str] | None]] = {
    ".rs": ("Rust", *C_STYLE),
    ".c": ("C", *C_STYLE),
    ".h": ("C", *C_STYLE),
    ".cc": ("C++", *C_STYLE),
    ".cpp": ("C++", *C_STYLE),
    ".hpp": ("C++", *C_STYLE),
    ".go": ("Go", *C_STYLE),
    ".java": ("Java", *C_STYLE),
    ".kt": ("Kotlin", *C_STYLE),
    ".swift": ("Swift", *C_STYLE),
    ".js": ("JavaScript", *C_STYLE),
    ".mjs": ("JavaScript", *C_STYLE),
    ".cjs": ("JavaScript", *C_STYLE),
    ".jsx": ("JavaScript", *C_STYLE),
    ".ts": ("TypeScript", *C_STYLE),
    ".tsx": ("TypeScript", *C_STYLE),
    ".css": ("CSS", (), ("/*", "*/")),
    ".py": ("Python", *HASH),
    ".rb": ("Ruby", *HASH),
    ".sh": ("Shell", *HASH),
    ".bash": ("Shell", *HASH),
    ".toml": ("TOML", *HASH),
    ".yaml": ("YAML", *HASH),
    ".yml": ("YAML", *HASH),
    ".html": ("HTML", (), ("<!--", "-->")),
    ".md": ("Markdown", (), None),
    ".wit": ("WIT", *C_STYLE),
}


def language_of(name: str):
    """The (language, line prefixes, block delimiters) of a file name, or None."""
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:].lower()) if dot > 0 else None


@dataclass
class Counts:
    files: int = 0
    code: int = 0
    comment: int = 0
    blank: int = 0

    def add(self, other: "Counts") -> None:
        self.files += other.files
        self.code += other.code
        self.comment += other.comment
        self.blank += other.blank


def count_lines(text: str, line_prefixes, block) -> Counts:
    """Counts one file. A line with any code on it is code; a line that holds only comment
    text (or continues a block comment) is a comment line."""
    c = Counts(files=1)
    in_block = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            c.blank += 1
            continue
        has_code = False
        rest = line
        while rest:
            if in_block:
                end = rest.find(block[1])
                if end < 0:
                    rest = ""
                else:
                    in_block = False
                    rest = rest[end + len(block[1]):].strip()
                continue
            if any(rest.startswith(p) for p in line_prefixes):
                break
            if block and rest.startswith(block[0]):
                in_block = True
                rest = rest[len(block[0]):]
                continue
            # Code up to the next comment start, if any.
            starts = [i for i in (rest.find(m) for m in (*line_prefixes, *(block[:1] if block else ()))) if i > 0]
            has_code = True
            rest = rest[min(starts):] if starts else ""
        if has_code:
            c.code += 1
        else:
            c.comment += 1
    return c


@dataclass
class Report:
    by_language: dict[str, Counts] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def add(self, language: str, counts: Counts) -> None:
        self.by_language.setdefault(language, Counts()).add(counts)

    def render(self) -> str:
        if not self.by_language:
            return "No source files found."
        rows = sorted(self.by_language.items(), key=lambda kv: (-kv[1].code, kv[0]))
        total = Counts()
        for _, counts in rows:
            total.add(counts)
        width = max(len("language"), *(len(name) for name, _ in rows))
        out = [f"{'language':<{width}}  {'files':>6}  {'code':>8}  {'comment':>8}  {'blank':>8}"]
        for name, c in rows + [("total", total)]:
            out.append(f"{name:<{width}}  {c.files:>6}  {c.code:>8}  {c.comment:>8}  {c.blank:>8}")
        for s in self.skipped:
            out.append(f"skipped {s}")
        return "\n".join(out)
