//! The lines of a saved session file: the header (line 1) and the records after it, as serde
//! types; what a record holds is what a resumed session needs to be where the saved one was.

use crate::context::{Entry, Recap};
use crate::llm::Message;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Line 1 of every file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema_version: u32,
    pub id: String,
    /// When the session started (RFC 3339, UTC).
    pub created: String,
    pub workspace: String,
    pub model: String,
    pub provider: String,
    pub corral_version: String,
    /// The session this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
}

/// One message of the conversation, with what the host knows about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// The transcript's entry id (stable across compactions).
    pub id: u64,
    pub message: Message,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mutated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recap: Option<Recap>,
}

impl Saved {
    pub fn of(e: &Entry) -> Saved {
        Saved { id: e.id, message: e.msg.clone(), mutated: e.mutated, recap: e.recap }
    }

    /// The entry as the transcript restores it.
    pub fn into_parts(self) -> (u64, Message, bool, Option<Recap>) {
        (self.id, self.message, self.mutated, self.recap)
    }
}

/// One durable context section (the todo list, thinking notes) and the plugin that set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    pub name: String,
    pub plugin: String,
    pub body: String,
}

/// What the session keeps beside the conversation: the sections, the session state of the
/// plugins that set them (the todo tool's items), and the snapshot summaries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    #[serde(default)]
    pub sections: Vec<Section>,
    /// Plugin -> key -> value.
    #[serde(default)]
    pub kv: BTreeMap<String, BTreeMap<String, String>>,
    /// Completed snapshot summaries, oldest first: (label, summary).
    #[serde(default)]
    pub snapshots: Vec<(String, String)>,
}

/// Every line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A message joined the end of the conversation.
    Message(Saved),
    /// The context manager rewrote the conversation (compaction, a snapshot restore, /clear):
    /// `order` is every entry id now, in order; `entries` the ones that are new or changed.
    Compaction { order: Vec<u64>, entries: Vec<Saved> },
    /// The state beside the conversation changed; this is all of it.
    State(State),
    /// The session was resumed (by a model that may differ from the header's).
    Resumed { time: String, model: String, provider: String },
    /// A task ended.
    End {
        outcome: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default)]
        turns: u32,
    },
}
