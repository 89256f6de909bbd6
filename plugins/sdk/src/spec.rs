//! Plain-Rust forms of the WIT types a plugin returns: tool specs, outputs and errors.

use crate::bindings::corral::plugin::types as wit;
use serde_json::Value;

/// A host capability a tool needs (mirrors the WIT `capability` enum); its names are the
/// host's, from the shared contract crate.
pub use corral_contract::Capability;

/// A tool's description, as the model will see it.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    pub description: String,
    pub schema: Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    pub capabilities: Vec<Capability>,
}

impl Spec {
    /// A read-only, idempotent tool with no capabilities; adjust with the builder methods.
    pub fn new(name: &str, description: &str, schema: Value) -> Self {
        Spec {
            name: name.to_string(),
            description: description.to_string(),
            schema,
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
            capabilities: Vec::new(),
        }
    }

    /// Marks the tool as changing files (needs `workspace-write`).
    pub fn writes(mut self, destructive: bool, idempotent: bool) -> Self {
        self.read_only = false;
        self.destructive = destructive;
        self.idempotent = idempotent;
        if !self.capabilities.contains(&Capability::WorkspaceWrite) {
            self.capabilities.push(Capability::WorkspaceWrite);
        }
        self
    }

    /// Sets whether calling the tool twice with the same input has the effect of calling it once.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Sets whether the tool reaches things outside the workspace (network, processes, people).
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }

    /// Adds a capability.
    pub fn needs(mut self, cap: Capability) -> Self {
        if !self.capabilities.contains(&cap) {
            self.capabilities.push(cap);
        }
        self
    }

    pub(crate) fn into_wit(self) -> wit::ToolSpec {
        wit::ToolSpec {
            name: self.name,
            description: self.description,
            input_schema: self.schema.to_string(),
            hints: wit::ToolHints {
                read_only: self.read_only,
                destructive: self.destructive,
                idempotent: self.idempotent,
                open_world: self.open_world,
            },
            capabilities: self
                .capabilities
                .into_iter()
                .map(|c| match c {
                    Capability::WorkspaceWrite => wit::Capability::WorkspaceWrite,
                    Capability::Kv => wit::Capability::Kv,
                    Capability::Http => wit::Capability::Http,
                    Capability::Process => wit::Capability::Process,
                    Capability::Context => wit::Capability::Context,
                })
                .collect(),
        }
    }
}

/// A successful result: text for the model, and whether the tool cut it short.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub text: String,
    pub truncated: bool,
    /// Images after the text, as (media type, encoded bytes): the host sends them to models
    /// that take images (scaled down where needed) and names them to the others.
    pub images: Vec<(String, Vec<u8>)>,
}

impl Output {
    pub fn text(text: impl Into<String>) -> Self {
        Output { text: text.into(), truncated: false, images: Vec::new() }
    }

    /// Adds an image (`mime_type` such as `image/png`) after the text.
    pub fn with_image(mut self, mime_type: impl Into<String>, data: Vec<u8>) -> Self {
        self.images.push((mime_type.into(), data));
        self
    }

    pub fn truncated(mut self, truncated: bool) -> Self {
        self.truncated = truncated;
        self
    }

    pub(crate) fn into_wit(self) -> wit::ToolOutput {
        let mut content = vec![wit::ContentPart::Text(self.text)];
        content.extend(
            self.images
                .into_iter()
                .map(|(mime_type, data)| wit::ContentPart::Image(wit::Image { mime_type, data })),
        );
        wit::ToolOutput { content, truncated: self.truncated }
    }
}

/// Why a call failed: the contract's kinds (the WIT `error-kind` and the host's own). A plugin
/// returns one of [`ErrorKind::PLUGIN`]; a kind only the host gives reaches it as `other`.
pub use corral_contract::ErrorKind;

/// A failed call, written for the model: what went wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError { kind, message: message.into(), hint: None }
    }

    pub fn invalid_args(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgs, message)
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub(crate) fn into_wit(self) -> wit::ToolError {
        let kind = match self.kind {
            ErrorKind::InvalidArgs => wit::ErrorKind::InvalidArgs,
            ErrorKind::NotFound => wit::ErrorKind::NotFound,
            ErrorKind::PermissionDenied => wit::ErrorKind::PermissionDenied,
            ErrorKind::Conflict => wit::ErrorKind::Conflict,
            ErrorKind::Io => wit::ErrorKind::Io,
            ErrorKind::TooLarge => wit::ErrorKind::TooLarge,
            ErrorKind::Timeout => wit::ErrorKind::Timeout,
            ErrorKind::Unsupported => wit::ErrorKind::Unsupported,
            ErrorKind::Internal => wit::ErrorKind::Internal,
            ErrorKind::Other
            | ErrorKind::Crashed
            | ErrorKind::OutOfMemory
            | ErrorKind::Malformed
            | ErrorKind::Denied
            | ErrorKind::NotAllowed
            | ErrorKind::Interrupted
            | ErrorKind::BranchFailed
            | ErrorKind::Mcp
            | ErrorKind::Tool => wit::ErrorKind::Other,
        };
        wit::ToolError { kind, message: self.message, hint: self.hint }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, " ({h})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_plugin_kind_crosses_as_the_wit_kind_in_its_place_and_host_kinds_as_other() {
        // `ErrorKind::PLUGIN` lists the kinds in the WIT enum's order.
        for (i, k) in ErrorKind::PLUGIN.into_iter().enumerate() {
            let e = ToolError::new(k, "m").with_hint("h").into_wit();
            assert_eq!((e.kind as usize, e.message.as_str(), e.hint.as_deref()), (i, "m", Some("h")), "{k}");
        }
        for k in ErrorKind::HOST {
            assert_eq!(ToolError::new(k, "m").into_wit().kind, wit::ErrorKind::Other, "{k}");
        }
    }
}
