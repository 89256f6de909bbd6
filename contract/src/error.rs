//! Why a tool call failed, with the one name of each kind, and the one text of a failed call
//! (`error (kind): message`, then `hint: ...`) that the model, the terminal and the audit log read.

use std::fmt;

/// Why a tool call failed. The first ten are the WIT `error-kind` a plugin returns
/// ([`ErrorKind::PLUGIN`]); the rest only the host gives (a trap, a refusal of its own tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The arguments are missing, malformed or contradictory.
    InvalidArgs,
    /// A named file, item or tool does not exist.
    NotFound,
    /// The sandbox or a policy refused the operation.
    PermissionDenied,
    /// The operation conflicts with the current state.
    Conflict,
    /// Reading or writing failed.
    Io,
    /// The input or output is larger than a limit allows.
    TooLarge,
    /// The operation ran out of time.
    Timeout,
    /// The request is valid but not supported.
    Unsupported,
    /// A bug in the plugin.
    Internal,
    Other,
    /// Host only: the plugin trapped (a panic, an abort, a stack overflow).
    Crashed,
    /// Host only: the plugin needed more memory than its cap.
    OutOfMemory,
    /// Host only: the plugin returned something the host could not read.
    Malformed,
    /// Host only: a host tool refused what this run may not do (the cron tool in CI).
    Denied,
    /// Host only: the call is not allowed where it was made (inside a branch).
    NotAllowed,
    /// Host only: the person stopped the call.
    Interrupted,
    /// Host only: a branch stopped before it finished.
    BranchFailed,
    /// Host only: an MCP server failed to answer a call.
    Mcp,
    /// Host only: an MCP server's tool reported an error.
    Tool,
}

impl ErrorKind {
    /// The kinds a plugin may return, in the order of the WIT `error-kind` enum.
    pub const PLUGIN: [ErrorKind; 10] = [
        ErrorKind::InvalidArgs,
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::Conflict,
        ErrorKind::Io,
        ErrorKind::TooLarge,
        ErrorKind::Timeout,
        ErrorKind::Unsupported,
        ErrorKind::Internal,
        ErrorKind::Other,
    ];

    /// The kinds only the host gives.
    pub const HOST: [ErrorKind; 9] = [
        ErrorKind::Crashed,
        ErrorKind::OutOfMemory,
        ErrorKind::Malformed,
        ErrorKind::Denied,
        ErrorKind::NotAllowed,
        ErrorKind::Interrupted,
        ErrorKind::BranchFailed,
        ErrorKind::Mcp,
        ErrorKind::Tool,
    ];

    /// The kind's name as users and models see it (`invalid-args`, `crashed`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgs => "invalid-args",
            ErrorKind::NotFound => "not-found",
            ErrorKind::PermissionDenied => "permission-denied",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Io => "io",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Internal => "internal",
            ErrorKind::Other => "other",
            ErrorKind::Crashed => "crashed",
            ErrorKind::OutOfMemory => "out-of-memory",
            ErrorKind::Malformed => "malformed-result",
            ErrorKind::Denied => "denied",
            ErrorKind::NotAllowed => "not-allowed",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::BranchFailed => "branch-failed",
            ErrorKind::Mcp => "mcp",
            ErrorKind::Tool => "tool",
        }
    }

    pub fn parse(name: &str) -> Option<ErrorKind> {
        ErrorKind::PLUGIN.into_iter().chain(ErrorKind::HOST).find(|k| k.as_str() == name)
    }

    /// Whether a plugin may return this kind (it is in the WIT `error-kind`).
    pub fn from_plugin(self) -> bool {
        ErrorKind::PLUGIN.contains(&self)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text of a failed call: `error (kind): message`, and `hint: ...` on a line of its own
/// when there is something to do about it.
pub fn error_text(kind: ErrorKind, message: &str, hint: Option<&str>) -> String {
    let mut s = format!("error ({kind}): {message}");
    if let Some(h) = hint {
        s.push_str("\nhint: ");
        s.push_str(h);
    }
    s
}

/// The kind of a text made by [`error_text`], if it is one (a result text that merely starts
/// with `error (` and a name that is no kind is none).
pub fn kind_of(text: &str) -> Option<ErrorKind> {
    let rest = text.strip_prefix("error (")?;
    let (name, after) = rest.split_once(')')?;
    if !after.starts_with(':') {
        return None;
    }
    ErrorKind::parse(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_names_are_distinct() {
        let all: Vec<ErrorKind> = ErrorKind::PLUGIN.into_iter().chain(ErrorKind::HOST).collect();
        for k in &all {
            assert_eq!(ErrorKind::parse(k.as_str()), Some(*k));
        }
        let mut names: Vec<&str> = all.iter().map(|k| k.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 19);
        assert_eq!(ErrorKind::parse("crash"), None);
    }

    #[test]
    fn only_the_wit_kinds_come_from_plugins() {
        assert!(ErrorKind::PLUGIN.iter().all(|k| k.from_plugin()));
        assert!(!ErrorKind::HOST.iter().any(|k| k.from_plugin()));
        assert_eq!(ErrorKind::Malformed.as_str(), "malformed-result");
        assert_eq!(ErrorKind::PermissionDenied.to_string(), "permission-denied");
    }

    #[test]
    fn the_text_has_the_kind_the_message_and_the_hint_on_its_own_line() {
        assert_eq!(error_text(ErrorKind::NotFound, "no 'a'", None), "error (not-found): no 'a'");
        assert_eq!(
            error_text(ErrorKind::Conflict, "changed", Some("read it again")),
            "error (conflict): changed\nhint: read it again"
        );
    }

    #[test]
    fn the_kind_is_read_back_from_a_text_only_when_it_is_one() {
        let t = error_text(ErrorKind::OutOfMemory, "too big (really)", Some("x"));
        assert_eq!(kind_of(&t), Some(ErrorKind::OutOfMemory));
        assert_eq!(kind_of("error (made-up): x"), None);
        assert_eq!(kind_of("error (io) x"), None);
        assert_eq!(kind_of("all fine: error (io): x"), None);
        assert_eq!(kind_of("error (io"), None);
    }
}
