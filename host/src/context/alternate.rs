//! The messages as sent: strict alternation of the person's side and the model's, which the
//! chat templates of many local models (llama.cpp, vLLM, Ollama) require and raise on.
//!
//! The rule those templates check: leaving out tool results and the model's tool-calling
//! turns, messages go user, assistant, user, ... starting with a user message. So host recaps
//! (assistant text the model never wrote) go on the person's side, joined to the message
//! before them; a nudge that would follow another user-side message is joined to it, or, after
//! tool results, added to the last result; back-to-back model texts are joined.

use crate::llm::Message;

/// The messages in strict alternation; each comes with whether the host wrote it as a recap.
pub fn strict<'a>(messages: impl IntoIterator<Item = (&'a Message, bool)>) -> Vec<Message> {
    let messages = messages.into_iter();
    let mut out: Vec<Message> = Vec::with_capacity(messages.size_hint().0);
    // The side of the last message that counts for alternation: Some(true) the user's.
    let mut last_user: Option<bool> = None;
    for (m, recap) in messages {
        let msg = match (m, recap) {
            (Message::Assistant { text, .. }, true) => Message::User { text: text.clone(), synthetic: true },
            (m, _) => m.clone(),
        };
        match msg {
            Message::User { text, synthetic } => {
                if last_user == Some(true) {
                    join_user(&mut out, &text, synthetic);
                    continue;
                }
                out.push(Message::User { text, synthetic });
                last_user = Some(true);
            }
            Message::Assistant { text, reasoning, tool_calls } => {
                if let Some(Message::Assistant { text: prev, tool_calls: prev_calls, .. }) = out.last_mut()
                    && prev_calls.is_empty()
                {
                    // Two model turns in a row: one message, the earlier text first.
                    if !text.is_empty() {
                        prev.push_str("\n\n");
                        prev.push_str(&text);
                    }
                    *prev_calls = tool_calls;
                    continue;
                }
                if tool_calls.is_empty() {
                    last_user = Some(false);
                }
                out.push(Message::Assistant { text, reasoning, tool_calls });
            }
            tool @ Message::Tool { .. } => out.push(tool),
        }
    }
    out
}

/// Joins `text` to the user-side message it follows: the last message when it is the user's,
/// else the last tool result after it.
fn join_user(out: &mut [Message], text: &str, synthetic: bool) {
    for m in out.iter_mut().rev() {
        match m {
            Message::User { text: prev, synthetic: s } => {
                prev.push_str("\n\n");
                prev.push_str(text);
                *s = *s && synthetic;
                return;
            }
            Message::Tool { content, .. } => {
                content.push_str("\n\n");
                content.push_str(text);
                return;
            }
            Message::Assistant { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    /// The messages of a conversation as the transcript holds them: (message, host recap).
    #[derive(Default)]
    struct Talk(Vec<(Message, bool)>);

    impl Talk {
        fn push(&mut self, m: Message) {
            self.0.push((m, false));
        }

        fn push_recap(&mut self, text: &str) {
            self.0.push((
                Message::Assistant { text: text.into(), reasoning: None, tool_calls: Vec::new() },
                true,
            ));
        }

        fn wire_messages(&self) -> Vec<Message> {
            strict(self.0.iter().map(|(m, r)| (m, *r)))
        }
    }

    fn call(id: &str) -> Message {
        Message::Assistant {
            text: String::new(),
            reasoning: None,
            tool_calls: vec![ToolCall { id: id.into(), name: "read_file".into(), arguments: "{}".into() }],
        }
    }

    fn result(id: &str) -> Message {
        Message::Tool {
            call_id: id.into(),
            name: "read_file".into(),
            content: "r".into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    /// The roles that alternation counts, in order (tool results and tool-calling turns left out).
    fn plain_roles(ms: &[Message]) -> Vec<&'static str> {
        ms.iter()
            .filter_map(|m| match m {
                Message::User { .. } => Some("user"),
                Message::Assistant { tool_calls, .. } if tool_calls.is_empty() => Some("assistant"),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn recaps_go_on_the_persons_side_and_roles_alternate() {
        let mut t = Talk::default();
        t.push(Message::user("fix the bug"));
        t.push_recap("[recap] read a.rs");
        t.push(call("1"));
        t.push(result("1"));
        t.push(Message::nudge("reminder: todo"));
        t.push(call("2"));
        t.push(result("2"));
        t.push(Message::Assistant { text: "done".into(), reasoning: None, tool_calls: Vec::new() });
        let ms = t.wire_messages();
        assert_eq!(plain_roles(&ms), ["user", "assistant"]);
        let Message::User { text, .. } = &ms[0] else { panic!("{ms:?}") };
        assert!(text.starts_with("fix the bug\n\n[recap] read a.rs"), "{text}");
        let Message::Tool { content, .. } = &ms[2] else { panic!("{ms:?}") };
        assert_eq!(content, "r\n\nreminder: todo", "the nudge joins the result before it");
        assert_eq!(ms.len(), 6);
    }

    #[test]
    fn back_to_back_model_turns_become_one() {
        let mut t = Talk::default();
        t.push(Message::user("task"));
        t.push(Message::Assistant { text: "cut off".into(), reasoning: None, tool_calls: Vec::new() });
        t.push(call("1"));
        t.push(result("1"));
        let ms = t.wire_messages();
        assert_eq!(ms.len(), 3, "{ms:?}");
        let Message::Assistant { text, tool_calls, .. } = &ms[1] else { panic!("{ms:?}") };
        assert_eq!((text.as_str(), tool_calls.len()), ("cut off", 1));
    }

    #[test]
    fn a_conversation_that_starts_with_a_recap_starts_on_the_users_side() {
        let mut t = Talk::default();
        t.push_recap("[recap]");
        t.push(Message::user("go on"));
        let ms = t.wire_messages();
        assert_eq!(plain_roles(&ms), ["user"]);
    }
}
