//! Cutting text to a byte limit without splitting a character: the one rule every place that
//! caps text (log lines, tool output, previews) follows.

/// The largest char boundary of `text` at or below `at` (`text.len()` when `at` is past it).
pub fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `text` at or above `at` (`text.len()` when `at` is past it).
pub fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The longest start of `text` that is at most `max` bytes and ends on a char boundary.
pub fn cut(text: &str, max: usize) -> &str {
    text.get(..floor_boundary(text, max)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries() {
        let s = "añb"; // 'ñ' is two bytes: 1..3
        assert_eq!(floor_boundary(s, 2), 1);
        assert_eq!(ceil_boundary(s, 2), 3);
        assert_eq!(floor_boundary(s, 99), s.len());
        assert_eq!(ceil_boundary(s, 99), s.len());
        assert_eq!(cut(s, 2), "a");
        assert_eq!(cut(s, 3), "añ");
        assert_eq!(cut(s, 0), "");
        assert_eq!(cut("日本", 5), "日");
    }
}
