//! The built-in agent tools' logic, shared by their components: `think` (numbered scratchpad
//! thoughts), `todo` (a checklist) and `question` (ask the person). Each module offers `spec()`
//! and `run(host, args)`; state goes through [`State`](corral_plugin_sdk::host::State).

pub mod question;
pub mod think;
pub mod todo;

mod text;
