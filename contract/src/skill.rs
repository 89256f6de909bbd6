//! The skill-name rule and the description cap, checked where a skill is loaded: by the host
//! for every skill and by the `skill-folder` plugin when it reads a folder's `SKILL.md`.

/// Longest skill name, in characters.
pub const NAME_MAX: usize = 64;
/// Longest skill description, in characters.
pub const DESCRIPTION_MAX: usize = 1024;

/// Checks a skill name: 1 to 64 lowercase ASCII letters and digits, with single `-` between
/// them (`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`, no `--`). The error names the broken rule.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    let shown: String = name.chars().take(80).collect();
    if name.chars().count() > NAME_MAX {
        return Err(format!("the name '{shown}' is longer than {NAME_MAX} characters"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')) {
        return Err(format!(
            "the name '{shown}' contains {c:?}; use only lowercase letters a-z, digits and '-'"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(format!("the name '{name}' must start and end with a letter or digit"));
    }
    if name.contains("--") {
        return Err(format!("the name '{name}' contains '--'; use single hyphens"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_every_rule() {
        for ok in ["a", "0", "code-review", "rust-2024", &"x".repeat(NAME_MAX)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        assert_eq!(check_name("").unwrap_err(), "the name is empty");
        let long = "x".repeat(200);
        let e = check_name(&long).unwrap_err();
        assert_eq!(
            e,
            format!("the name '{}' is longer than 64 characters", "x".repeat(80)),
            "shown cut at 80"
        );
        assert!(check_name("Review").unwrap_err().contains("contains 'R'"));
        assert!(check_name("code_review").unwrap_err().contains("contains '_'"));
        assert!(check_name("code review").unwrap_err().contains("contains ' '"));
        assert!(check_name("é").unwrap_err().contains("contains 'é'"));
        assert!(check_name("a\nb").unwrap_err().contains("contains '\\n'"), "control characters are escaped");
        assert!(check_name("-x").unwrap_err().contains("must start and end"));
        assert!(check_name("x-").unwrap_err().contains("must start and end"));
        assert_eq!(check_name("a--b").unwrap_err(), "the name 'a--b' contains '--'; use single hyphens");
    }
}
