//! Reading `SKILL.md`: the front matter between two `---` lines (`name` and `description`
//! required, other keys ignored) and the instructions after it, with the naming rules. The
//! folder server (`plugins/skill-folder`) reads every folder skill with it, and corral's
//! build reads the folders it ships with it, so their answers are known before a start.

/// The skill-name rule and the description cap, the ones the host checks too.
pub use crate::skill::{DESCRIPTION_MAX, NAME_MAX, check_name};

/// A parsed `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDoc {
    pub name: String,
    pub description: String,
    /// The instructions: everything after the front matter, without surrounding blank lines.
    pub body: String,
}

/// Parses `text` (the whole `SKILL.md`) of the skill in directory `dir_name`.
pub fn parse(text: &str, dir_name: &str) -> Result<SkillDoc, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, first)) if first.trim_end() == "---" => {}
        _ => {
            return Err("SKILL.md must start with a front matter block: a '---' line, then 'name: ...' \
                        and 'description: ...' lines, then another '---' line"
                .into());
        }
    }
    let mut header: Vec<(usize, &str)> = Vec::new();
    let mut body_start = None;
    for (i, line) in lines {
        if line.trim_end() == "---" {
            body_start = Some(i + 1);
            break;
        }
        header.push((i + 1, line));
    }
    let Some(body_start) = body_start else {
        return Err("the front matter of SKILL.md is not closed by a '---' line".into());
    };
    let fields = fields(&header)?;
    let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.trim().to_string());
    let name = get("name").filter(|n| !n.is_empty()).ok_or("the front matter has no 'name'")?;
    let description =
        get("description").filter(|d| !d.is_empty()).ok_or("the front matter has no 'description'")?;
    check_name(&name)?;
    if name != dir_name {
        return Err(format!(
            "the name '{name}' differs from the folder's name '{dir_name}'; rename one so they match"
        ));
    }
    let chars = description.chars().count();
    if chars > DESCRIPTION_MAX {
        return Err(format!(
            "the description has {chars} characters; the limit is {DESCRIPTION_MAX}. Keep it to what the \
             skill is for and when to use it; the details belong in the instructions"
        ));
    }
    let body: Vec<&str> = text.lines().skip(body_start).collect();
    let body = body.join("\n").trim_matches('\n').trim_end().to_string();
    if body.trim().is_empty() {
        return Err("SKILL.md has no instructions after its front matter".into());
    }
    Ok(SkillDoc { name, description, body })
}

/// How a block scalar's lines are joined.
#[derive(Clone, Copy)]
enum Block {
    /// `|`: lines kept.
    Literal,
    /// `>`: lines folded with spaces.
    Folded,
}

/// The `key: value` pairs of the front matter, in order. Understands comments, quoted
/// values, `|` and `>` blocks, and indented continuation lines.
fn fields(lines: &[(usize, &str)]) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut block: Option<Block> = None;
    for &(n, line) in lines {
        let trimmed = line.trim();
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if indented && !out.is_empty() {
            let Some((_, value)) = out.last_mut() else { continue };
            if trimmed.is_empty() {
                if matches!(block, Some(Block::Literal)) {
                    value.push('\n');
                }
                continue;
            }
            match block {
                Some(Block::Literal) if !value.is_empty() => value.push('\n'),
                _ if !value.is_empty() && !value.ends_with('\n') => value.push(' '),
                _ => {}
            }
            value.push_str(trimmed);
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, raw)) = line.split_once(':') else {
            return Err(format!("line {n} of the front matter is not 'key: value': {}", clip(line)));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("line {n} of the front matter has no key: {}", clip(line)));
        }
        if out.iter().any(|(k, _)| k == key) {
            return Err(format!("the front matter sets '{key}' twice (line {n})"));
        }
        let raw = raw.trim();
        block = match raw {
            "|" | "|-" | "|+" => Some(Block::Literal),
            ">" | ">-" | ">+" => Some(Block::Folded),
            _ => None,
        };
        let value = if block.is_some() { String::new() } else { scalar(raw, n)? };
        out.push((key.to_string(), value));
    }
    Ok(out)
}

/// One value on a `key:` line: quoted (`"..."` with escapes, `'...'` with `''`) or plain,
/// where ` #` starts a comment.
fn scalar(raw: &str, n: usize) -> Result<String, String> {
    if let Some(rest) = raw.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Ok(out),
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => break,
                },
                c => out.push(c),
            }
        }
        return Err(format!("line {n} of the front matter has an unclosed '\"'"));
    }
    if let Some(rest) = raw.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                return Ok(out);
            }
            out.push(c);
        }
        return Err(format!("line {n} of the front matter has an unclosed \"'\""));
    }
    let value = match raw.find(" #").or_else(|| raw.find("\t#")) {
        Some(i) => &raw[..i],
        None => raw,
    };
    Ok(value.trim().to_string())
}

fn clip(line: &str) -> String {
    let s: String = line.chars().take(80).collect();
    if line.chars().count() > 80 { format!("{s}...") } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(front: &str, body: &str) -> String {
        format!("---\n{front}\n---\n{body}")
    }

    #[test]
    fn a_plain_skill_parses() {
        let d = parse(
            &doc("name: code-review\ndescription: Review a change.", "\n# Steps\n1. Read.\n\n"),
            "code-review",
        )
        .unwrap();
        assert_eq!(d.name, "code-review");
        assert_eq!(d.description, "Review a change.");
        assert_eq!(d.body, "# Steps\n1. Read.");
    }

    #[test]
    fn the_file_must_open_and_close_the_front_matter() {
        let e = parse("name: x\n---\nbody", "x").unwrap_err();
        assert!(e.starts_with("SKILL.md must start with a front matter block"), "{e}");
        let e = parse("---\nname: x\ndescription: d\nbody", "x").unwrap_err();
        assert_eq!(e, "the front matter of SKILL.md is not closed by a '---' line");
        assert!(parse("\u{feff}---\nname: x\ndescription: d\n---\nbody", "x").is_ok(), "a BOM is skipped");
    }

    #[test]
    fn name_and_description_are_required() {
        assert_eq!(parse(&doc("description: d", "b"), "x").unwrap_err(), "the front matter has no 'name'");
        assert_eq!(parse(&doc("name: x", "b"), "x").unwrap_err(), "the front matter has no 'description'");
        assert_eq!(
            parse(&doc("name: x\ndescription: ''", "b"), "x").unwrap_err(),
            "the front matter has no 'description'"
        );
    }

    #[test]
    fn other_keys_comments_and_quotes() {
        let front =
            "# a comment\nname: \"x\"\nlicense: MIT\ndescription: 'It''s for docs' \nversion: 2 # ignored";
        let d = parse(&doc(front, "b"), "x").unwrap();
        assert_eq!(d.description, "It's for docs");
        let d = parse(&doc("name: x\ndescription: Checks C#, F# and more # a comment", "b"), "x").unwrap();
        assert_eq!(d.description, "Checks C#, F# and more", "a # after a space starts a comment");
        let d = parse(&doc("name: x\ndescription: \"say \\\"hi\\\"\"", "b"), "x").unwrap();
        assert_eq!(d.description, "say \"hi\"");
        let e = parse(&doc("name: x\ndescription: \"open", "b"), "x").unwrap_err();
        assert_eq!(e, "line 3 of the front matter has an unclosed '\"'");
    }

    #[test]
    fn blocks_and_continuation_lines() {
        let d = parse(&doc("name: x\ndescription: >\n  Folded\n  text.\n", "b"), "x").unwrap();
        assert_eq!(d.description, "Folded text.");
        let d = parse(&doc("name: x\ndescription: |\n  one\n  two", "b"), "x").unwrap();
        assert_eq!(d.description, "one\ntwo");
        let d = parse(&doc("name: x\ndescription: starts here\n  and goes on", "b"), "x").unwrap();
        assert_eq!(d.description, "starts here and goes on");
    }

    #[test]
    fn malformed_lines_and_repeated_keys_are_refused() {
        let e = parse(&doc("name: x\njust words", "b"), "x").unwrap_err();
        assert_eq!(e, "line 3 of the front matter is not 'key: value': just words");
        let e = parse(&doc("name: x\nname: y\ndescription: d", "b"), "x").unwrap_err();
        assert_eq!(e, "the front matter sets 'name' twice (line 3)");
        let e = parse(&doc("name: x\nsome key: v\ndescription: d", "b"), "x").unwrap_err();
        assert!(e.starts_with("line 3 of the front matter has no key"), "{e}");
    }

    #[test]
    fn the_name_follows_the_rules_and_matches_the_folder() {
        assert!(check_name("a").is_ok() && check_name("rust-testing-2").is_ok());
        assert_eq!(check_name("").unwrap_err(), "the name is empty");
        assert!(check_name(&"a".repeat(64)).is_ok());
        assert!(check_name(&"a".repeat(65)).unwrap_err().contains("longer than 64"));
        assert!(check_name("Code").unwrap_err().contains("contains 'C'"));
        assert!(check_name("a_b").unwrap_err().contains("contains '_'"));
        assert!(check_name("-a").unwrap_err().contains("start and end"));
        assert!(check_name("a-").unwrap_err().contains("start and end"));
        assert!(check_name("a--b").unwrap_err().contains("'--'"));
        let e = parse(&doc("name: other\ndescription: d", "b"), "mine").unwrap_err();
        assert_eq!(e, "the name 'other' differs from the folder's name 'mine'; rename one so they match");
    }

    #[test]
    fn the_description_is_capped_and_the_body_required() {
        let ok = "d".repeat(DESCRIPTION_MAX);
        assert!(parse(&doc(&format!("name: x\ndescription: {ok}"), "b"), "x").is_ok());
        let e = parse(&doc(&format!("name: x\ndescription: {ok}é"), "b"), "x").unwrap_err();
        assert!(e.starts_with("the description has 1025 characters; the limit is 1024"), "{e}");
        let e = parse(&doc("name: x\ndescription: d", "\n  \n"), "x").unwrap_err();
        assert_eq!(e, "SKILL.md has no instructions after its front matter");
    }
}
