//! Syntax checks for one file's text, by format, with the position of the first error.
//! Plain Rust with no component imports, so the unit tests run natively.

/// The formats the tool checks, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
    Yaml,
}

impl Format {
    /// The format of a file named `name`, from its extension (case-insensitive).
    pub fn of(name: &str) -> Option<Format> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(Format::Json),
            "toml" => Some(Format::Toml),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
        }
    }
}

/// The first syntax error in a file: 1-based line and column, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// 1-based line and column of byte `offset` in `text` (columns count characters).
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
    (line, column)
}

/// Checks `text` as `format`.
pub fn check(format: Format, text: &str) -> Result<(), Problem> {
    match format {
        Format::Json => serde_json::from_str::<serde_json::Value>(text).map(|_| ()).map_err(|e| Problem {
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        }),
        Format::Toml => text.parse::<toml::Table>().map(|_| ()).map_err(|e| {
            let (line, column) = e.span().map(|s| position(text, s.start)).unwrap_or((1, 1));
            Problem { line, column, message: e.message().trim().to_string() }
        }),
        Format::Yaml => yaml_rust2::YamlLoader::load_from_str(text).map(|_| ()).map_err(|e| Problem {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        }),
    }
}

/// serde_json ends its messages with " at line L column C"; the tool reports those itself.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::of("a/package.json"), Some(Format::Json));
        assert_eq!(Format::of("Cargo.TOML"), Some(Format::Toml));
        assert_eq!(Format::of(".github/ci.yml"), Some(Format::Yaml));
        assert_eq!(Format::of("notes.txt"), None);
        assert_eq!(Format::of("Makefile"), None);
    }

    #[test]
    fn valid_files_pass() {
        assert!(check(Format::Json, r#"{"a": [1, 2, {"b": null}]}"#).is_ok());
        assert!(check(Format::Toml, "[package]\nname = \"x\"\n").is_ok());
        assert!(check(Format::Yaml, "a: 1\nlist:\n  - x\n  - y\n").is_ok());
    }

    #[test]
    fn errors_have_positions() {
        let p = check(Format::Json, "{\n  \"a\": 1,\n  \"b\" 2\n}").unwrap_err();
        assert_eq!((p.line, p.column), (3, 7), "{p:?}");
        assert_eq!(p.message, "expected `:`");
        let p = check(Format::Toml, "[a]\nkey = \nother = 1\n").unwrap_err();
        assert_eq!(p.line, 2, "{p:?}");
        let p = check(Format::Yaml, "a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(p.line >= 2, "{p:?}");
        assert!(!p.message.is_empty());
    }

    #[test]
    fn positions_count_characters() {
        assert_eq!(position("ab\ncdé\nx", 7), (2, 4));
        assert_eq!(position("ab\ncdé\nx", 8), (3, 1));
        assert_eq!(position("", 0), (1, 1));
    }
}
