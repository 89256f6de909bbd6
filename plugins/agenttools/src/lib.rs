//! The built-in agent tools' logic, shared by their components: `think` (numbered scratchpad
//! thoughts), `todo` (a checklist), `question` (ask the person), `snapshot` (collapse an
//! investigation into a summary), `memory_write` (project notes) and `backlog` (beads issues). Each module offers
//! `spec()` and `run(host, args)`; state goes through the SDK's host traits.

pub mod backlog;
pub mod memory;
pub mod question;
pub mod snapshot;
pub mod think;
pub mod todo;

mod text;
