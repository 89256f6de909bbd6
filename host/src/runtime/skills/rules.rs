//! The host's rules for what a skill says about itself (name, description) and for what the
//! model may ask of it (resource paths), with the caps on what is handed back.

/// The skill-name rule and the length caps are the contract's (its tests cover the name rule):
/// the `skill-folder` plugin checks them too.
pub use corral_contract::skill::{DESCRIPTION_MAX, NAME_MAX, check_name};
/// The most of a skill's instructions given to the model, in characters.
pub const INSTRUCTIONS_MAX_CHARS: usize = 20_000;
/// The most of one resource given to the model, in characters.
pub const RESOURCE_MAX_CHARS: usize = 20_000;
/// The most resources listed on activation.
pub const RESOURCES_LISTED: usize = 50;
/// Longest script name, in characters.
pub const SCRIPT_NAME_MAX: usize = 128;

/// Checks a description: not blank, at most 1024 characters.
pub fn check_description(description: &str) -> Result<(), String> {
    if description.trim().is_empty() {
        return Err("the description is empty".into());
    }
    let n = description.chars().count();
    if n > DESCRIPTION_MAX {
        return Err(format!("the description has {n} characters; the limit is {DESCRIPTION_MAX}"));
    }
    Ok(())
}

/// Checks a script name a skill lists: 1 to 128 characters, no whitespace or control characters.
pub fn check_script_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > SCRIPT_NAME_MAX {
        return Err(format!("script names are 1 to {SCRIPT_NAME_MAX} characters"));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("the script name {name:?} contains whitespace"));
    }
    Ok(())
}

/// Checks a resource path the model asked for: relative, `/`-separated, no empty, `.` or
/// `..` parts, no NUL. Returns it without a leading `./`.
pub fn check_resource_path(path: &str) -> Result<&str, String> {
    let p = path.trim();
    let p = p.strip_prefix("./").unwrap_or(p);
    let shown: String = path.chars().take(200).collect();
    if p.is_empty() {
        return Err("an empty resource path".into());
    }
    if p.starts_with('/') || p.starts_with('\\') || p.starts_with('~') || p.get(1..2) == Some(":") {
        return Err(format!("'{shown}' is absolute; use a path relative to the skill, as listed"));
    }
    if p.contains('\0') {
        return Err(format!("'{}' contains a NUL byte", shown.replace('\0', "\\0")));
    }
    if p.split(['/', '\\']).any(|part| matches!(part, "" | "." | "..")) {
        return Err(format!("'{shown}' has an empty, '.' or '..' part; use the path as listed"));
    }
    Ok(p)
}

/// `text` cut to `max` characters, with a note saying how much is left out and where it is.
pub fn cap_chars(text: &str, max: usize, rest_is: &str) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(&format!("\n[cut by corral: {} more characters of {rest_is} are not shown]", total - max));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_required_and_capped_in_characters() {
        assert!(check_description(&"é".repeat(DESCRIPTION_MAX)).is_ok(), "characters, not bytes");
        assert_eq!(
            check_description(&"d".repeat(DESCRIPTION_MAX + 1)).unwrap_err(),
            "the description has 1025 characters; the limit is 1024"
        );
        assert_eq!(check_description("  \n").unwrap_err(), "the description is empty");
    }

    #[test]
    fn script_names_have_no_spaces() {
        assert!(check_script_name("scripts/run.sh").is_ok());
        assert!(check_script_name("a b").is_err());
        assert!(check_script_name("").is_err());
        assert!(check_script_name(&"s".repeat(SCRIPT_NAME_MAX + 1)).is_err());
    }

    #[test]
    fn resource_paths_stay_inside_the_skill() {
        assert_eq!(check_resource_path("references/a.md").unwrap(), "references/a.md");
        assert_eq!(check_resource_path(" ./a.md ").unwrap(), "a.md");
        for abs in ["/etc/passwd", "\\x", "~/x", "C:\\x", "c:/x"] {
            assert!(check_resource_path(abs).unwrap_err().contains("is absolute"), "{abs}");
        }
        for bad in ["../x", "a/../../x", "a/./b", "a//b", "a\\..\\b", "."] {
            assert!(check_resource_path(bad).unwrap_err().contains("'..' part"), "{bad}");
        }
        assert!(check_resource_path("a\0b").unwrap_err().contains("NUL"));
        assert_eq!(check_resource_path("").unwrap_err(), "an empty resource path");
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        assert_eq!(cap_chars("abc", 3, "x"), "abc");
        assert_eq!(
            cap_chars("abcdé", 3, "SKILL.md"),
            "abc\n[cut by corral: 2 more characters of SKILL.md are not shown]"
        );
    }
}
